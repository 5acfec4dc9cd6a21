#!/usr/bin/env bash
# [algorithm] prefetch off and on for every rule that prefetches, each
# with its own experiment's config: WORKERS real worker processes (4) and
# one shard on this host, EPOCHS epochs (2), one BLAS thread per process,
# no evaluation during training. Off and on alternate, REPS times each
# (3); each line gives the median samples/s of both, their ratio, and the
# median accuracy and staleness of both, each over the runs that completed
# without diverging (which the last column counts).
#   bench/prefetch_rules.sh [EPOCHS (2)] [REPS (3)] [WORKERS (4)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-2}
reps=${2:-3}
workers=${3:-4}
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # median, record_run, kept_runs

rules=$("$root/build/asgd" help algorithms | sed -n '/^prefetch/,$p' | tail -1)
for rule in $rules; do
    for ((r = 0; r < reps; r++)); do
        for pf in off on; do
            dir=$("$root/build/asgd" train "$root/experiments/$rule/config.ini" \
                  experiment.out="$out" train.epochs="$epochs" backend.threads=1 eval.every=0 \
                  cluster.workers="$workers" algorithm.prefetch=$pf 2>/dev/null | tail -1) || true
            record_run "$dir" "$out/$rule-$pf" samples_per_s final_test_acc staleness_mean
        done
    done
done
echo "| rule | samples/s, off | samples/s, on | on / off | acc off | acc on | staleness off | staleness on | runs off; on |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for rule in $rules; do
    col() { (cat "$out/$rule-$1" 2>/dev/null || true) | awk -v c="$2" '{print $c}' | median; }
    printf "| %s | %.0f | %.0f | %.2f | %.4f | %.4f | %.2f | %.2f | %s; %s |\n" "$rule" \
        "$(col off 1)" "$(col on 1)" \
        "$(awk -v a="$(col on 1)" -v b="$(col off 1)" 'BEGIN {print (b != "nan" && b + 0 > 0 ? a / b : "nan")}')" \
        "$(col off 2)" "$(col on 2)" "$(col off 3)" "$(col on 3)" \
        "$(kept_runs "$out/$rule-off")" "$(kept_runs "$out/$rule-on")"
done
