#!/usr/bin/env bash
# The default job: every distributed rule asgd has (`asgd help algorithms
# --names`) on Fashion-MNIST with the MLP 256-128 and 4 workers, as real
# processes, each with its own experiment's config (experiments/RULE/, or
# configs/mlp.ini for a rule without one), for EPOCHS epochs (default 3),
# SEEDS seeds each (default 3), evaluated every 0.1 s; then the
# convergence (mean and min-max band over the seeds), time-to-accuracy,
# throughput and staleness figures and results.md, the table of mean ± sd.
# Runs go to runs/compare-rules/EPOCHSe/ and those complete are kept, so a
# second call with the same settings only redraws, and other settings run
# afresh beside them; a kept run whose config.ini differs from what it would
# run now (experiments/RULE/config.ini or a default was changed since) is run
# again, saying which key changed (kept.py). The figures and the table are
# of this call's seeds alone (a folder that kept 5 seeds from an earlier
# call is drawn and averaged over 3 when 3 are asked for).
#   experiments/compare-rules/run.sh [EPOCHS] [SEEDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
epochs=${1:-3}
seeds=${2:-3}
if ! [[ $epochs =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || ! awk -v e="$epochs" 'BEGIN {exit !(e > 0)}' ||
   ! [[ $seeds =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: run.sh [EPOCHS] [SEEDS]: EPOCHS a positive number (3), SEEDS a whole" \
         "number at least 1 (3); got \"$epochs\" \"$seeds\"" >&2
    exit 2
fi
target=0.85
"$root/scripts/build.sh"
asgd="$root/build/asgd"
out="$root/runs/compare-rules/${epochs}e"
mapfile -t rules < <("$asgd" help algorithms --names)
total=$((${#rules[@]} * seeds))
n=0
start=$(date +%s)
dirs=()   # this call's runs: the folder may keep more seeds from an earlier call
for rule in "${rules[@]}"; do
    config="$root/experiments/$rule/config.ini"
    [ -f "$config" ] || config="$root/configs/mlp.ini"
    for ((seed = 1; seed <= seeds; seed++)); do
        n=$((n + 1))
        id="$rule-seed$seed"
        dirs+=("$out/$id")
        args=(experiment.out="$out/.." experiment.name="${epochs}e" experiment.run_id="$id"
              experiment.label="$rule" train.algorithm="$rule" experiment.seed="$seed"
              train.epochs="$epochs" cluster.workers=4 eval.every=0.1)
        # kept only when complete, of this rule (a config without train.algorithm
        # once ran the sequential baseline under the rule's name) and of the config
        # it would run now: a run of an edited experiments/RULE/config.ini is
        # another experiment, which results.md would mix with the new one's
        if grep -qs '"complete":	true' "$out/$id/summary.json" &&
           grep -qs "\"algorithm\":	\"$rule\"" "$out/$id/summary.json"; then
            if why=$("$asgd" help config "$config" "${args[@]}" 2>/dev/null |
                     python3 "$here/kept.py" "$out/$id"); then
                continue
            fi
            printf 'compare-rules: %s: %s; running it again\n' "$out/$id" "$why" >&2
        fi
        rm -rf "${out:?}/$id"
        printf 'compare-rules: %s, seed %d (%d of %d, %d s so far)\n' "$rule" "$seed" "$n" \
            "$total" $(($(date +%s) - start)) >&2
        ASGD_PROGRESS_EVERY=1000 "$asgd" train "$config" "${args[@]}" >/dev/null
    done
done
for kind in convergence time-to-accuracy throughput staleness; do
    range=()   # the accuracy that tells the rules apart, not the first second's climb
    [ "$kind" = convergence ] && range=(--yrange 0.75:0.88)
    "$asgd" plot "${dirs[@]}" -o "$out/$kind.png" --kind "$kind" --target "$target" --size page \
        "${range[@]}" >/dev/null 2> >(grep -v "never reaches\|empty y range" >&2)
done
python3 "$here/results.py" "$target" "$seeds" "${dirs[@]}" > "$out/results.md"
echo "figures: $out/{convergence,time-to-accuracy,throughput,staleness}.png"
echo "table:   $out/results.md"
echo "runs:    $out/<rule>-seed<k>/ (config.ini, eval.csv, steps.csv, summary.json, log.txt)"
