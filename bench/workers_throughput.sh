#!/usr/bin/env bash
# Training throughput of real distributed jobs against the number of
# workers: sync and hogwild, the MLP 256-128 on Fashion-MNIST, batch 64,
# one BLAS thread per process, one shard, ipc. Prints a Markdown table of
# samples/s (summary.json) and the speed-up over the first worker count;
# a run that diverged or failed is said as such, its samples/s (of the
# steps before it stopped) neither a row's number nor the speed-up's base.
#   bench/workers_throughput.sh [EPOCHS] [WORKER_COUNTS...]
# RULES (default "sync hogwild") picks the rules; OVERRIDES adds config
# overrides to every run, e.g. workers sharing one GPU with the CNN:
#   RULES=hogwild OVERRIDES="model.type=cnn backend.device=cuda" \
#       bench/workers_throughput.sh 1 1 4
# ASGD=PATH runs another build's binary (to compare two side by side).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-1}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2 4)
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # summary_field, run_verdict

# the speed-up is over the first count given (1 by default, and in every
# run recorded in RESULTS.md): the header says which
echo "| rule | workers | samples/s | speed-up over ${counts[0]} | final test acc | staleness mean |"
echo "| --- | --- | --- | --- | --- | --- |"
read -r -a overrides <<<"${OVERRIDES:-}"
for rule in ${RULES:-sync hogwild}; do
    base=""
    for n in "${counts[@]}"; do
        dir=$("${ASGD:-$root/build/asgd}" train "$root/experiments/$rule/config.ini" \
              experiment.out="$out" train.epochs="$epochs" cluster.workers="$n" \
              backend.threads=1 eval.every=0 "${overrides[@]}" | tail -1) || true
        verdict=$(run_verdict "$dir")
        if [ "$verdict" != ok ]; then
            echo "| $rule | $n | $verdict | | | |"
            [ -n "$base" ] || base=nan   # no speed-up over a count that has no rate
            continue
        fi
        rate=$(summary_field "$dir" samples_per_s)
        [ -n "$base" ] || base=$rate
        printf "| %s | %d | %.0f | %.2f | %.4f | %.2f |\n" "$rule" "$n" "$rate" \
            "$(awk -v a="$rate" -v b="$base" 'BEGIN {print (b != "nan" && b + 0 > 0 ? a / b : "nan")}')" \
            "$(summary_field "$dir" final_test_acc)" "$(summary_field "$dir" staleness_mean)"
    done
done
