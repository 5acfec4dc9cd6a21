#!/usr/bin/env bash
# What a shard's checkpoints cost: hogwild with 4 workers, the MLP 256-128 on
# Fashion-MNIST (0.94 MB of parameters, one shard), without checkpoints and
# with one every INTERVAL seconds, alternating ROUNDS times. Prints a
# Markdown table: samples/s (median, and the range over the rounds), each
# setting's ratio to none, the
# checkpoints written and the mean time one took (checkpoint_s / checkpoints,
# the shard's pause: nothing is applied meanwhile), each the median over
# the rounds that completed without diverging, the file's size, and how
# many rounds those were.
#   bench/checkpoint_cost.sh [EPOCHS] [ROUNDS] [INTERVAL...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-2}
rounds=${2:-3}
shift 2 || shift $# || true
intervals=("$@")
[ ${#intervals[@]} -gt 0 ] || intervals=(1 0.25)
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # median, run_verdict

settings=(0 "${intervals[@]}")
declare -A rates counts seconds sizes
for ((r = 0; r < rounds; r++)); do
    for every in "${settings[@]}"; do
        dir=$("$root/build/asgd" train "$root/experiments/hogwild/config.ini" \
              experiment.out="$out" train.epochs="$epochs" eval.every=0 \
              checkpoint.every="$every" | tail -1) || true
        verdict=$(run_verdict "$dir")
        if [ "$verdict" != ok ]; then   # a word the medians leave out, counted below
            rates[$every]+="$verdict "
            continue
        fi
        rates[$every]+="$(summary_field "$dir" samples_per_s) "
        n=$(summary_field "$dir" checkpoints)
        counts[$every]+="$n "   # each round's, for their medians beside the rate's
        seconds[$every]+="$(awk -v s="$(summary_field "$dir" checkpoint_s)" -v n="$n" \
                           'BEGIN {print n ? 1000 * s / n : 0}') "
        if [ -f "$dir/checkpoints/ps-0.ckpt" ]; then
            sizes[$every]=$(stat -c %s "$dir/checkpoints/ps-0.ckpt")
        fi
    done
done

echo "| checkpoint.every | samples/s (median of $rounds) | range | / none | checkpoints (median) | ms each (median) | file | usable runs |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
base=$(tr ' ' '\n' <<<"${rates[0]}" | grep . | median)
for every in "${settings[@]}"; do
    rate=$(tr ' ' '\n' <<<"${rates[$every]}" | grep . | median)
    range=$(tr ' ' '\n' <<<"${rates[$every]}" | grep '^[0-9]' | sort -g |
            awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR) printf "%.0f-%.0f", lo, hi; else print "-"}')
    usable="$(tr ' ' '\n' <<<"${rates[$every]}" | grep -c '^[0-9]' || true) of $rounds"
    if [ "$every" = 0 ]; then
        printf "| none | %.0f | %s | 1.00 | 0 | - | - | %s |\n" "$rate" "$range" "$usable"
        continue
    fi
    printf "| %s s | %.0f | %s | %.3f | %s | %.1f | %.2f MB | %s |\n" "$every" "$rate" "$range" \
        "$(awk -v a="$rate" -v b="$base" 'BEGIN {print a / b}')" \
        "$(tr ' ' '\n' <<<"${counts[$every]}" | grep . | median)" \
        "$(tr ' ' '\n' <<<"${seconds[$every]}" | grep . | median)" \
        "$(awk -v b="${sizes[$every]:-0}" 'BEGIN {print b / 1e6}')" "$usable"
done
