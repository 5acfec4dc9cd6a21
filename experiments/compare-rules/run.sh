#!/usr/bin/env bash
# The default job: every distributed rule asgd has (`asgd help algorithms
# --names`) on Fashion-MNIST with the MLP 256-128 and 4 workers, as real
# processes, each with its own experiment's config (experiments/RULE/, or
# configs/mlp.ini for a rule without one), for EPOCHS epochs (default 5);
# then convergence, throughput and staleness figures. Runs already
# complete are kept, so a second call only redraws.
#   experiments/compare-rules/run.sh [EPOCHS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
epochs=${1:-5}
"$root/scripts/build.sh"
asgd="$root/build/asgd"
out="$root/runs/compare-rules"
mapfile -t rules < <("$asgd" help algorithms --names)
for i in "${!rules[@]}"; do
    rule=${rules[$i]}
    if grep -qs '"complete":	true' "$out/$rule/summary.json"; then
        continue
    fi
    rm -rf "${out:?}/$rule"
    config="$root/experiments/$rule/config.ini"
    [ -f "$config" ] || config="$root/configs/mlp.ini"
    printf 'compare-rules: %s (%d of %d)\n' "$rule" $((i + 1)) ${#rules[@]} >&2
    "$asgd" train "$config" experiment.out="$root/runs" train.algorithm="$rule" \
        experiment.name=compare-rules experiment.run_id="$rule" experiment.label="$rule" \
        train.epochs="$epochs" cluster.workers=4 eval.every=1 >/dev/null
done
"$asgd" plot "$out" -o "$out/convergence.png" --kind convergence --x time \
    --title "Fashion-MNIST, MLP 256-128, 4 workers: test accuracy" >/dev/null
"$asgd" plot "$out" -o "$out/throughput.png" --kind throughput \
    --title "training throughput, 4 workers on 2 cores" >/dev/null
"$asgd" plot "$out" -o "$out/staleness.png" --kind staleness \
    --title "staleness of pushes, 4 workers" >/dev/null
echo "figures: $out/convergence.png $out/throughput.png $out/staleness.png"
echo "runs:    $out/<rule>/ (config.ini, eval.csv, steps.csv, summary.json, log.txt)"
