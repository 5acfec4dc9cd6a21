#!/usr/bin/env bash
# Samples per second of one training step, asgd (build/bench/bench_step)
# against PyTorch eager (bench/torch_step.py) on the same device, model and
# batch, side by side in one run: the MLP 256-128 at batch 64 and 512, the
# TensorFlow-tutorial CNN at batch 64 (on the CPU twice: through Winograd's
# transforms, backend.conv's default, and through im2col). Also prints the share of asgd's step
# that its GEMMs alone take (the step's rate as a fraction of cuBLAS's or
# OpenBLAS's rate for the same shapes). On a GPU, the CNN at batch 512 too,
# and PyTorch with the whole step captured in a CUDA graph beside eager
# (torch_step.py --graphs), the stronger anchor. Prints a Markdown table.
#   bench/step_speed.sh [cuda|cpu] [REPS]
# THREADS=N sets both sides' CPU threads (OPENBLAS_NUM_THREADS, torch's
# set_num_threads); ROUNDS=R (1) alternates asgd and PyTorch R times per
# row and reports the medians, with the range of the rounds' ratios.
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

threads=${THREADS:-0}
rounds=${ROUNDS:-1}
blas=()   # asgd's threads; PyTorch's are its own (--threads), not its BLAS's
[ "$threads" = 0 ] || blas=(env OPENBLAS_NUM_THREADS="$threads")
. "$root/bench/lib.sh"   # median, line_field

echo "| model | batch | device | threads | asgd samples/s | PyTorch samples/s | ratio (rounds' range) | GEMM share of asgd's step | PyTorch CUDA graphs samples/s | ratio to graphs |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
runs=("mlp 64 400" "mlp 512 200" "cnn 64 50")
[ "$device" = cpu ] && runs+=("cnn 64 50 im2col")
[ "$device" = cuda ] && runs+=("cnn 512 20")
for run in "${runs[@]}"; do
    read -r model batch steps conv <<<"$run"
    conv=${conv:-winograd}
    [ "$device" = cpu ] && [ "$model" = cnn ] && steps=10
    rows=""
    for ((r = 0; r < rounds; r++)); do
        a=$("${blas[@]}" "$root/build/bench/bench_step" "$device" "$model" "$batch" "$steps" "$reps" "$conv")
        t=$("$python" "$root/bench/torch_step.py" --device "$device" --model "$model" \
              --batch "$batch" --steps "$steps" --reps "$reps" --threads "$threads")
        g=none   # not a number: the median leaves a failed or skipped run out
        if [ "$device" = cuda ]; then   # the eager figures stand without it
            g=$("$python" "$root/bench/torch_step.py" --device cuda --model "$model" \
                  --batch "$batch" --steps "$steps" --reps "$reps" --graphs |
                  line_field samples_per_s) || g=failed
        fi
        rows+="$(line_field samples_per_s <<<"$a") $(line_field samples_per_s <<<"$t") \
$(line_field gemm_fraction <<<"$a") $g"$'\n'
        name=$(sed 's/.*device=\(.*\) model=.*/\1/' <<<"$a")
    done
    as=$(awk 'NF {print $1}' <<<"$rows" | median)
    ts=$(awk 'NF {print $2}' <<<"$rows" | median)
    share=$(awk 'NF {print $3}' <<<"$rows" | median)
    gs=$(awk 'NF {print $4}' <<<"$rows" | median)
    graphs="- | -"
    [ "$device" = cuda ] && graphs=$(awk -v a="$as" -v g="$gs" \
        'BEGIN {if (g != "nan" && g > 0) printf "%.0f | %.2f", g, a / g; else print "failed | -"}')
    range=$(awk 'NF {r = $1 / $2; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r}
                 END {printf "%.2f-%.2f", lo, hi}' <<<"$rows")
    label=$model
    [ "$model" = cnn ] && [ "$device" = cpu ] && label="cnn ($conv)"
    printf "| %s | %s | %s | %s | %.0f | %.0f | %.2f (%s) | %s | %s |\n" "$label" "$batch" "$name" \
        "${threads/#0/default}" "$as" "$ts" "$(awk -v a="$as" -v t="$ts" 'BEGIN {print a / t}')" \
        "$range" "$share" "$graphs"
done
