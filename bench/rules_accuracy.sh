#!/usr/bin/env bash
# Every rule's experiment on Fashion-MNIST with real processes: final and
# best test accuracy, time, training samples/s, and mean and maximum
# staleness, as a Markdown table. WORKERS overrides cluster.workers. With
# no EXPERIMENT named: every experiment folder whose config runs a
# distributed rule on the MLP in real mode, and configs/mlp.ini for each
# rule (`asgd help algorithms --names`) that has no such folder.
#   bench/rules_accuracy.sh [WORKERS] [EXPERIMENT ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
workers=${1:-4}
shift || true
"$root/scripts/build.sh"
asgd="$root/build/asgd"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# KEY's resolved value in CONFIG (`asgd help config` prints "key = value"
# under each [section]).
resolved() {
    "$asgd" help config "$1" | awk -v s="[${2%%.*}]" -v k="${2#*.}" \
        '/^\[/ {in_s = ($0 == s)} in_s && $1 == k {print $3; exit}'
}

configs=()
labels=()
if [ $# -gt 0 ]; then
    for x in "$@"; do configs+=("$root/experiments/$x/config.ini"); labels+=("$x"); done
else
    mapfile -t rules < <("$asgd" help algorithms --names)
    declare -A covered=()
    for config in "$root"/experiments/*/config.ini; do
        rule=$(resolved "$config" train.algorithm)
        if [[ " ${rules[*]} " == *" $rule "* ]] && [ "$(resolved "$config" experiment.mode)" = real ] &&
           [ "$(resolved "$config" model.type)" = mlp ]; then
            configs+=("$config")
            labels+=("$(basename "$(dirname "$config")")")
            covered[$rule]=1
        fi
    done
    for rule in "${rules[@]}"; do
        if [ -z "${covered[$rule]:-}" ]; then
            configs+=("$root/configs/mlp.ini train.algorithm=$rule")
            labels+=("configs/mlp.ini")
        fi
    done
fi

. "$root/bench/lib.sh"   # summary_field, run_verdict

echo "| experiment | rule | workers | final acc | best acc | time_s | samples/s | staleness mean | staleness max | run |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for i in "${!configs[@]}"; do
    # shellcheck disable=SC2086
    dir=$("$asgd" train ${configs[$i]} experiment.out="$out" cluster.workers="$workers" |
          tail -1) || true
    rule=$(summary_field "$dir" algorithm | tr -d '"')
    printf "| %s | %s | %d | %.4f | %.4f | %.1f | %.0f | %.2f | %s | %s |\n" "${labels[$i]}" "$rule" \
        "$workers" "$(summary_field "$dir" final_test_acc)" "$(summary_field "$dir" best_test_acc)" \
        "$(summary_field "$dir" time_s)" "$(summary_field "$dir" samples_per_s)" \
        "$(summary_field "$dir" staleness_mean)" "$(summary_field "$dir" staleness_max)" \
        "$(run_verdict "$dir")"
done
