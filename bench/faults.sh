#!/usr/bin/env bash
# Every rule through a lossy network: each distributed rule's experiment
# (experiments/RULE/config.ini, EPOCHS epochs), once clean and once with
# [cluster] drop = DROP, duplicate = DUP and resend = RESEND, side by side.
# Prints a Markdown table: final test accuracy both ways, the faults
# injected (messages dropped / sent twice), pushes applied both ways, and
# training time both ways.
#   bench/faults.sh [EPOCHS] [DROP] [DUP] [RESEND]
# RULES picks the experiments; by default every distributed rule that has
# an experiments/RULE folder (`asgd help algorithms --names`), and
# downpour-easy after downpour.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-2}
drop=${2:-0.05}
dup=${3:-0.01}
resend=${4:-0.02}
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # summary_field, run_verdict

echo "| rule | accuracy clean | accuracy faulty | dropped | sent twice | pushes clean | pushes faulty | time clean (s) | time faulty (s) | runs |"
echo "|---|---|---|---|---|---|---|---|---|---|"
if [ -z "${RULES:-}" ]; then
    for r in $("$root/build/asgd" help algorithms --names); do
        [ -f "$root/experiments/$r/config.ini" ] || continue
        RULES+=" $r"
        if [ "$r" = downpour ]; then RULES+=" downpour-easy"; fi
    done
fi
for rule in $RULES; do
    config="$root/experiments/$rule/config.ini"
    clean=$("$root/build/asgd" train "$config" experiment.out="$out" train.epochs="$epochs" |
            tail -1) || true
    faulty=$("$root/build/asgd" train "$config" experiment.out="$out" train.epochs="$epochs" \
             cluster.drop="$drop" cluster.duplicate="$dup" cluster.resend="$resend" | tail -1) ||
        true
    printf "| %s | %.4f | %.4f | %s | %s | %s | %s | %.1f | %.1f | %s, %s |\n" "$rule" \
        "$(summary_field "$clean" final_test_acc)" "$(summary_field "$faulty" final_test_acc)" \
        "$(summary_field "$faulty" injected_drops)" "$(summary_field "$faulty" injected_duplicates)" \
        "$(summary_field "$clean" pushes)" "$(summary_field "$faulty" pushes)" \
        "$(summary_field "$clean" time_s)" "$(summary_field "$faulty" time_s)" \
        "$(run_verdict "$clean")" "$(run_verdict "$faulty")"
done
