#!/usr/bin/env bash
# Delay-adaptive asynchronous SGD, plain asynchronous SGD (hogwild) and
# minibatch SGD (sync: every step waits for all 40 workers) on least
# squares with one worker 100x slower, each at several learning rates (the
# paper tunes every method's step size), seeds 1 and 2. Prints, per rule
# and learning rate, the virtual seconds until the test loss first falls to
# TARGET (default 0.01, twice the noise's floor of 0.005) for each seed,
# and draws runs/mishchenko-delayadaptive/loss.png: test loss against
# virtual time for each rule at its best learning rate (seed 1).
#   experiments/mishchenko-delayadaptive/run.sh [TARGET]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${1:-0.01}
if ! [[ $target =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]]; then
    echo "usage: run.sh [TARGET]: TARGET is a test loss (default 0.01), not \"$target\"" >&2
    exit 2
fi
"$root/scripts/build.sh"
out="$root/runs/mishchenko-delayadaptive"
rm -rf "$out"
# virtual seconds until the test loss of a trained model (updates > 0), a
# number, first reaches $2 (never: "-")
reach() { LC_ALL=C awk -F, -v t="$2" 'NR > 1 && $3 > 0 && $5 ~ /^[0-9.eE+-]+$/ && $5 <= t {
                                          print $1; found = 1; exit}
                             END {if (!found) print "-"}' "$1/eval.csv"; }
errors=$(mktemp)   # a run's stderr: shown when it fails (diverged runs say so there too)
trap 'rm -f "$errors"' EXIT
declare -A best best_lr
echo "| rule | lr | seconds to loss $target, seed 1 | seed 2 |"
echo "|---|---|---|---|"
for run in "delayadaptive 0.0025 0.005 0.01 0.02 0.03" "hogwild 0.0025 0.005 0.01 0.02 0.03" \
           "sync 0.2 0.4 0.8 1.6 3.2"; do
    set -- $run
    rule=$1
    shift
    for lr in "$@"; do
        times=()
        for seed in 1 2; do
            dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
                  train.algorithm="$rule" train.lr="$lr" experiment.seed="$seed" \
                  experiment.label="$rule" experiment.run_id="$rule-lr$lr-seed$seed" \
                  2>"$errors") || { tail -3 "$errors" >&2; exit 2; }
            times+=("$(reach "$dir" "$target")")
        done
        echo "| $rule | $lr | ${times[0]} | ${times[1]} |"
        worst=$(printf '%s\n' "${times[@]}" | awk '$1 == "-" {n = 1} {if ($1 > m) m = $1}
                                                   END {print n ? "-" : m}')
        if [ "$worst" != - ] && { [ -z "${best[$rule]:-}" ] ||
           awk -v a="$worst" -v b="${best[$rule]}" 'BEGIN {exit !(a < b)}'; }; then
            best[$rule]=$worst
            best_lr[$rule]=$lr
        fi
    done
done
echo
echo "| rule | best lr | seconds to loss $target (the slower seed) |"
echo "|---|---|---|"
mkdir -p "$out/best"
for rule in delayadaptive hogwild sync; do
    echo "| $rule | ${best_lr[$rule]:--} | ${best[$rule]:-never} |"
    [ -n "${best_lr[$rule]:-}" ] &&
        ln -sfn "$out/$rule-lr${best_lr[$rule]}-seed1" "$out/best/$rule"
done
"$root/build/asgd" plot "$out/best" -o "$out/loss.png" --kind convergence --x time \
    --y loss --logy --xrange 0:1.2 --size page >/dev/null
echo "figure: $out/loss.png (the committed $here/loss.png: cp it there on purpose)"
