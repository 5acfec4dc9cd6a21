#!/usr/bin/env bash
# Final accuracy and mean staleness against workers from 1 to 1,024 for
# hogwild, downpour, easgd and dynsgd (simulated), each over SEEDS seeds
# (3): the mean final accuracy with its range over the seeds (one seed's
# accuracy moves by points with the seed, and with OpenBLAS's kernel, at
# high staleness), the other columns' means (staleness max: the largest).
# Prints a Markdown table; run folders go to runs/scale/.
#   [SEEDS=N] experiments/scale/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all, result_field
seeds=${SEEDS:-3}
# each_seed FIELD: FIELD of every seed's run folder (in $dirs), one a line
each_seed() { for d in $dirs; do result_field "$d" "$1"; done; }   # nan: one diverged
echo "| rule | workers | final acc, mean of $seeds seeds (range) | staleness mean | staleness max | updates | virtual time s | wall s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for rule in hogwild downpour easgd dynsgd; do
    for n in 1 4 16 64 256 1024; do
        dirs=""
        for seed in $(seq 1 "$seeds"); do
            dirs="$dirs $("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
                          train.algorithm="$rule" cluster.workers="$n" experiment.seed="$seed")"
        done
        printf "| %s | %d | %.4f (%.4f-%.4f) | %.1f | %d | %.0f | %.3f | %.2f |\n" "$rule" "$n" \
            "$(each_seed final_test_acc | mean_all)" \
            "$(each_seed final_test_acc | sort -g | head -1)" \
            "$(each_seed final_test_acc | sort -g | tail -1)" \
            "$(each_seed staleness_mean | mean_all)" \
            "$(each_seed staleness_max | sort -g | tail -1)" \
            "$(each_seed updates | mean_all)" "$(each_seed time_s | mean_all)" \
            "$(each_seed wall_time_s | mean_all)"
    done
done
