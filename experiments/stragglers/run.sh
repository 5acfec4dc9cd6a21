#!/usr/bin/env bash
# sync, sync with 2 backup workers, hogwild and dynsgd as the fraction of
# 4x-slower workers grows (simulated, 8 workers), each over SEEDS seeds (3):
# the time to 0.80 and the final accuracy as their mean with the range
# over the seeds, the other columns' means (staleness max: the largest).
# Prints a Markdown table, draws runs/stragglers/stragglers.png (this
# folder's copy is refreshed by hand); run folders go to runs/stragglers/.
#   [SEEDS=N] experiments/stragglers/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
rm -rf "$root/runs/stragglers"
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all, time_to_target,
                          # result_field
seeds=${SEEDS:-3}
# each_seed FIELD: FIELD of every seed's run folder (in $dirs), one a line
each_seed() { for d in $dirs; do result_field "$d" "$1"; done; }   # nan: one diverged
# spread FORMAT WORD: mean (lo-hi) of the numbers on stdin, or "WORD (some
# seeds)" where a seed has none (never reached; a null accuracy: diverged)
spread() { LC_ALL=C sort -g | awk -v f="$1" -v w="$2" '$1 !~ /^[0-9.]+$/ {bad = 1}
                                                   {v[NR] = $1; s += $1}
                                                   END {if (bad) {print w " (some seeds)"; exit}
                                                        printf "%" f " (%" f "-%" f ")", s / NR,
                                                               v[1], v[NR]}'; }
echo "| rule | slow workers | virtual time s | time to 0.80 s, mean of $seeds seeds (range) | samples/s | final acc, mean (range) | staleness mean | staleness max | dropped |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for rule in "sync" "sync backups=2" "hogwild" "dynsgd"; do
    set -- $rule
    extra=()
    [ $# -gt 1 ] && extra=("algorithm.$2")
    [ "$1" = sync ] && extra+=("train.lr=0.2")      # the mean of 8 gradients per step
    [ "$1" = dynsgd ] && extra+=("algorithm.window=1")
    for fraction in 0 0.125 0.25 0.5; do
        label=${rule// /-}
        dirs=""
        for seed in $(seq 1 "$seeds"); do
            dirs="$dirs $("$root/build/asgd" train "$here/config.ini" \
                          experiment.out="$root/runs" train.algorithm="$1" \
                          sim.straggler_fraction="$fraction" "${extra[@]}" \
                          experiment.seed="$seed" experiment.label="$label" \
                          experiment.run_id="$label-$fraction-seed$seed")"
        done
        printf "| %s | %s | %.3f | %s | %.0f | %s | %.2f | %d | %.0f |\n" "$rule" \
            "$(awk -v f="$fraction" 'BEGIN {print f * 8}')" "$(each_seed time_s | mean_all)" \
            "$(for d in $dirs; do if [ "$(run_verdict "$d")" = ok ]; then
                   time_to_target "$d" 0.80 never; else echo diverged; fi; done |
               spread .3f never)" \
            "$(each_seed samples_per_s | mean_all)" \
            "$(each_seed final_test_acc | spread .4f diverged)" \
            "$(each_seed staleness_mean | mean_all)" \
            "$(each_seed staleness_max | sort -g | tail -1)" "$(each_seed dropped | mean_all)"
    done
done
"$root/build/asgd" plot "$root/runs/stragglers" -o "$root/runs/stragglers/stragglers.png" --kind scaling \
    --x sim.straggler_fraction --y time_s --size page >/dev/null
echo "figure: $root/runs/stragglers/stragglers.png (the committed $here/stragglers.png: cp it there on purpose)"
