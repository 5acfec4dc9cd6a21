#!/usr/bin/env bash
# Samples per second of one training step, asgd (build/bench/bench_step)
# against PyTorch eager (bench/torch_step.py) on the same device, model and
# batch, side by side in one run: the MLP 256-128 at batch 64 and 512, the
# TensorFlow-tutorial CNN at batch 64. Also prints the share of asgd's step
# that its GEMMs alone take (the step's rate as a fraction of cuBLAS's or
# OpenBLAS's rate for the same shapes). Prints a Markdown table.
#   bench/step_speed.sh [cuda|cpu] [REPS]
# On a GPU machine PyTorch must see the GPU (python3 -c 'import torch;
# print(torch.cuda.is_available())'); on the CPU, Debian's python3-torch is
# installed here when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
device=${1:-cuda}
reps=${2:-5}
if [ "$device" = cpu ]; then
    ASGD_SETUP_EXTRA=python3-torch "$root/scripts/build.sh"
    python=/usr/bin/python3
else
    "$root/scripts/build.sh"
    python=${PYTHON:-python3}
fi
field() { sed "s/.*$1=\([0-9.]*\).*/\1/"; }

echo "| model | batch | device | asgd samples/s | PyTorch samples/s | ratio | GEMM share of asgd's step |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for run in "mlp 64 400" "mlp 512 200" "cnn 64 50"; do
    read -r model batch steps <<<"$run"
    [ "$device" = cpu ] && [ "$model" = cnn ] && steps=10
    a=$("$root/build/bench/bench_step" "$device" "$model" "$batch" "$steps" "$reps")
    t=$("$python" "$root/bench/torch_step.py" --device "$device" --model "$model" \
          --batch "$batch" --steps "$steps" --reps "$reps")
    as=$(field samples_per_s <<<"$a"); ts=$(field samples_per_s <<<"$t")
    name=$(sed 's/.*device=\(.*\) model=.*/\1/' <<<"$a")
    printf "| %s | %s | %s | %.0f | %.0f | %.2f | %s |\n" "$model" "$batch" "$name" "$as" "$ts" \
        "$(awk -v a="$as" -v t="$ts" 'BEGIN {print a / t}')" "$(field gemm_fraction <<<"$a")"
done
