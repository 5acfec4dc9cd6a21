#!/usr/bin/env bash
# sync, sync with 2 backup workers, hogwild and dynsgd as the fraction of
# 4x-slower workers grows (simulated, 8 workers). Prints a Markdown table,
# draws runs/stragglers/stragglers.png (this folder's copy is refreshed by hand); run folders go to runs/stragglers/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
rm -rf "$root/runs/stragglers"
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all
field() { summary_field "$@"; }
# virtual seconds until the test accuracy first reaches $2
reach() { awk -F, -v a="$2" 'NR > 1 && $6 >= a {printf "%.3f", $1; found = 1; exit}
                              END {if (!found) printf "never"}' "$1/eval.csv"; }
echo "| rule | slow workers | virtual time s | time to 0.80 s | samples/s | final acc | staleness mean | staleness max | dropped |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for rule in "sync" "sync backups=2" "hogwild" "dynsgd"; do
    set -- $rule
    extra=()
    [ $# -gt 1 ] && extra=("algorithm.$2")
    [ "$1" = sync ] && extra+=("train.lr=0.2")      # the mean of 8 gradients per step
    [ "$1" = dynsgd ] && extra+=("algorithm.window=1")
    for fraction in 0 0.125 0.25 0.5; do
        label=${rule// /-}
        dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
              train.algorithm="$1" sim.straggler_fraction="$fraction" "${extra[@]}" \
              experiment.label="$label" experiment.run_id="$label-$fraction")
        printf "| %s | %s | %.3f | %s | %.0f | %.4f | %.2f | %d | %d |\n" "$rule" \
            "$(awk -v f="$fraction" 'BEGIN {print f * 8}')" "$(field "$dir" time_s)" \
            "$(reach "$dir" 0.80)" \
            "$(field "$dir" samples_per_s)" "$(field "$dir" final_test_acc)" \
            "$(field "$dir" staleness_mean)" "$(field "$dir" staleness_max)" "$(field "$dir" dropped)"
    done
done
"$root/build/asgd" plot "$root/runs/stragglers" -o "$root/runs/stragglers/stragglers.png" --kind scaling \
    --x sim.straggler_fraction --y time_s --size page >/dev/null
echo "figure: $root/runs/stragglers/stragglers.png (the committed $here/stragglers.png: cp it there on purpose)"
