#!/usr/bin/env bash
# Every compressor, with and without error feedback, on the experiments of
# the RULES (default: hogwild and downpour, 4 workers, real processes) for
# EPOCHS epochs (default: the experiment's own, 10). Prints a Markdown
# table: bytes per push (one worker's push to every shard, headers
# included), how many times fewer than uncompressed, final test accuracy,
# and samples/s while training. Every row goes through the sockets
# (cluster.shm = off): a compressed push cannot use a shared segment, so
# with the default an uncompressed row would take another path and its
# samples/s would not compare encodings alone.
#   bench/compression.sh [EPOCHS] [RULES...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-}
shift || true
rules=("$@")
[ ${#rules[@]} -gt 0 ] || rules=(hogwild downpour)
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # summary_field, run_verdict

# a run that diverged or failed says so in its last column: its samples/s
# are of the steps before it stopped, its accuracy null
echo "| rule | compress | error feedback | bytes per push | fewer bytes | final test accuracy | samples/s | run |"
echo "|---|---|---|---|---|---|---|---|"
for rule in "${rules[@]}"; do
    config="$root/experiments/$rule/config.ini"
    plain=""
    for compress in none fp16 bf16 topk:0.01 randomk:0.01 sign qsgd:4; do
        for feedback in off on; do
            [ "$compress" = none ] && [ "$feedback" = on ] && continue
            args=(experiment.out="$out" cluster.shm=off algorithm.compress="$compress"
                  algorithm.error_feedback="$feedback")
            [ -n "$epochs" ] && args+=(train.epochs="$epochs")
            dir=$("$root/build/asgd" train "$config" "${args[@]}" | tail -1) || true
            bytes=$(summary_field "$dir" bytes_per_push)
            [ -n "$plain" ] || plain=$bytes
            printf "| %s | %s | %s | %.0f | %.1fx | %.4f | %.0f | %s |\n" "$rule" "$compress" \
                "$feedback" "$bytes" "$(awk -v a="$plain" -v b="$bytes" 'BEGIN {print (b != "nan" && b + 0 > 0 ? a / b : "nan")}')" \
                "$(summary_field "$dir" final_test_acc)" "$(summary_field "$dir" samples_per_s)" \
                "$(run_verdict "$dir")"
        done
    done
done
