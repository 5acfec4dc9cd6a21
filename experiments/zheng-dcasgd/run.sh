#!/usr/bin/env bash
# Sequential SGD, asynchronous SGD (hogwild) and DC-ASGD-a at 4 and 8
# simulated workers on the narrowed CNN, seeds 1 and 2, at lr 0.05 (and,
# where 8 workers diverge at it, at 0.025 with its own sequential run). Prints a Markdown
# table of the final test error (1 - accuracy, in %, as the paper reports
# it) per seed and their mean. Run folders go to runs/zheng-dcasgd/.
#   experiments/zheng-dcasgd/run.sh [EPOCHS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
epochs=${1:-2}
"$root/scripts/build.sh"
out="$root/runs/zheng-dcasgd"
rm -rf "$out"
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all
field() { summary_field "$@"; }
# nan where the run diverged (its accuracy null): read as 0, it was 100.00%
error_of() {
    local a
    a=$(field "$1" final_test_acc)
    if [ "$a" = nan ]; then echo nan; else awk -v a="$a" 'BEGIN {printf "%.2f", 100 * (1 - a)}'; fi
}
echo "| rule | workers | lr | test error % (seed 1) | (seed 2) | mean |"
echo "|---|---|---|---|---|---|"
for run in "sequential 1 0.05" "hogwild 4 0.05" "dcasgd 4 0.05" "hogwild 8 0.05" "dcasgd 8 0.05" \
           "sequential 1 0.025" "hogwild 8 0.025" "dcasgd 8 0.025"; do
    set -- $run
    errors=()
    mode=sim
    [ "$1" = sequential ] && mode=real   # one process: the same gradients, no simulation
    for seed in 1 2; do
        dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
              train.algorithm="$1" cluster.workers="$2" experiment.seed="$seed" \
              experiment.mode="$mode" train.epochs="$epochs" train.lr="$3" \
              experiment.run_id="$1-$2-lr$3-seed$seed")
        errors+=("$(error_of "$dir")")
    done
    mean=$(printf "%.2f" "$(printf "%s\n" "${errors[@]}" | mean_all)")
    name=$1
    [ "$1" = dcasgd ] && name="dcasgd (DC-ASGD-a)"
    echo "| $name | $2 | $3 | ${errors[0]} | ${errors[1]} | $mean |"
done
