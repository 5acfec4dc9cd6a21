#!/usr/bin/env bash
# Final accuracy and mean staleness against workers from 1 to 1,024 for
# hogwild, downpour, easgd and dynsgd (simulated). Prints a Markdown table;
# run folders go to runs/scale/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all
field() { summary_field "$@"; }
echo "| rule | workers | final acc | staleness mean | staleness max | updates | virtual time s | wall s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for rule in hogwild downpour easgd dynsgd; do
    for n in 1 4 16 64 256 1024; do
        dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
              train.algorithm="$rule" cluster.workers="$n")
        printf "| %s | %d | %.4f | %.1f | %d | %d | %.3f | %.2f |\n" "$rule" "$n" \
            "$(field "$dir" final_test_acc)" "$(field "$dir" staleness_mean)" \
            "$(field "$dir" staleness_max)" "$(field "$dir" updates)" \
            "$(field "$dir" time_s)" "$(field "$dir" wall_time_s)"
    done
done
