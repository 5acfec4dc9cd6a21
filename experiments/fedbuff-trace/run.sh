#!/usr/bin/env bash
# FedBuff against synchronous rounds of local steps (average, FedAvg's
# shape) in virtual time, with and without the heterogeneity trace
# trace.csv, 3 seeds each. Prints a Markdown table (final accuracy and
# virtual seconds to 0.80, mean over the seeds, and the speed-up) and draws
# runs/fedbuff-trace/convergence.png (seed 1, accuracy against virtual
# time). Run folders go to runs/fedbuff-trace/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
out="$root/runs/fedbuff-trace"
rm -rf "$out"
target=0.80
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all, time_to_target
field() { summary_field "$@"; }
mean() { awk -v f="$1" '{s += $1; n++} END {if (n) printf f, s / n; else printf "never"}'; }
declare -A acc time
for trace in none trace; do
    for rule in fedbuff average; do
        extra=()
        [ "$trace" = trace ] && extra=(sim.trace="$here/trace.csv")
        accs="" times=""
        for seed in 1 2 3; do
            id="$rule-$trace-seed$seed"
            dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
                  train.algorithm="$rule" experiment.seed="$seed" experiment.run_id="$id" \
                  experiment.label="$rule, $trace" "${extra[@]}")
            accs+="$(field "$dir" final_test_acc)"$'\n'
            t=$(time_to_target "$dir" "$target")
            times+="${t:-}${t:+$'\n'}"
            [ -n "$t" ] || times+="never"$'\n'
        done
        acc[$rule-$trace]=$(printf "%.4f" "$(printf "%s" "$accs" | mean_all)")   # nan: one diverged
        nevers=$(printf "%s" "$times" | grep -c never || true)
        if [ "$nevers" -gt 0 ]; then   # a mean of the seeds that reached it would flatter
            time[$rule-$trace]="never in $nevers of 3 seeds"
        else
            time[$rule-$trace]=$(printf "%s" "$times" | mean %.3f)
        fi
    done
done
echo "| trace | rule | final test accuracy | virtual s to $target |"
echo "|---|---|---|---|"
for trace in none trace; do
    for rule in fedbuff average; do
        echo "| $trace | $rule | ${acc[$rule-$trace]} | ${time[$rule-$trace]} |"
    done
done
for trace in none trace; do
    a=${time[average-$trace]} f=${time[fedbuff-$trace]}
    if [[ $a != never* && $f != never* ]]; then
        echo "$trace: FedBuff reaches $target $(awk -v a="$a" -v f="$f" 'BEGIN {printf "%.2f", a / f}')x as fast"
    fi
done
mkdir -p "$out/seed1"
for d in "$out"/*-seed1; do ln -sfn "$d" "$out/seed1/$(basename "$d")"; done
"$root/build/asgd" plot "$out/seed1" -o "$out/convergence.png" --kind convergence --x time \
    --target "$target" --size page >/dev/null
echo "figure: $out/convergence.png (the committed $here/convergence.png: cp it there on purpose)"
