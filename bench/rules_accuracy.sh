#!/usr/bin/env bash
# Every rule's experiment on Fashion-MNIST with real processes: final and
# best test accuracy, time, training samples/s, and mean and maximum
# staleness, as a Markdown table. WORKERS overrides cluster.workers.
#   bench/rules_accuracy.sh [WORKERS] [EXPERIMENT ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
workers=${1:-4}
shift || true
experiments=("$@")
[ ${#experiments[@]} -gt 0 ] || experiments=(sync sync-different-learning-rates hogwild
    downpour downpour-easy agn sagn dynsgd easgd aeasgd aeamsgd ssp writing-a-rule)
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

field() { grep -o "\"$2\":[^,]*" "$1/summary.json" | grep -o '[0-9.e+-]*$'; }

echo "| experiment | rule | workers | final acc | best acc | time_s | samples/s | staleness mean | staleness max |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for x in "${experiments[@]}"; do
    dir=$("$root/build/asgd" train "$root/experiments/$x/config.ini" experiment.out="$out" \
          cluster.workers="$workers")
    rule=$(grep -o '"algorithm":[^,]*' "$dir/summary.json" | cut -d'"' -f4)
    printf "| %s | %s | %d | %.4f | %.4f | %.1f | %.0f | %.2f | %d |\n" "$x" "$rule" "$workers" \
        "$(field "$dir" final_test_acc)" "$(field "$dir" best_test_acc)" \
        "$(field "$dir" time_s)" "$(field "$dir" samples_per_s)" \
        "$(field "$dir" staleness_mean)" "$(field "$dir" staleness_max)"
done
