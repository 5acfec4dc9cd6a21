#!/usr/bin/env bash
# AGN and AEASGD at windows 10 and 20 with 5, 10, 20 and 40 simulated
# workers, 2 seeds each. Prints a Markdown table of the final test
# accuracy (mean of the seeds) and draws runs/hermans-agn-aeasgd/accuracy.png
# (accuracy against workers, one line per rule and window). Run folders go
# to runs/hermans-agn-aeasgd/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
out="$root/runs/hermans-agn-aeasgd"
rm -rf "$out"
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all
field() { summary_field "$@"; }
workers=(5 10 20 40)
echo "| rule | window | $(printf '%s workers | ' "${workers[@]}")"
echo "|---|---|$(printf -- '---|%.0s' "${workers[@]}")"
for rule in agn aeasgd; do
    for window in 10 20; do
        row="| $rule | $window |"
        for n in "${workers[@]}"; do
            accs=""
            for seed in 1 2; do
                dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
                      train.algorithm="$rule" algorithm.window="$window" cluster.workers="$n" \
                      experiment.seed="$seed" experiment.label="$rule, window $window" \
                      experiment.run_id="$rule-w$window-n$n-seed$seed")
                accs+="$(field "$dir" final_test_acc)"$'\n'
            done
            row+=" $(printf "%.4f" "$(printf "%s" "$accs" | mean_all)") |"   # nan: one diverged
        done
        echo "$row"
    done
done
"$root/build/asgd" plot "$out" -o "$out/accuracy.png" --kind scaling --x cluster.workers \
    --y final_test_acc --logx --size page >/dev/null
echo "figure: $out/accuracy.png (the committed $here/accuracy.png: cp it there on purpose)"
