#!/usr/bin/env bash
# Training throughput on the CPU, asgd against PyTorch (Debian's
# python3-torch), side by side in one run: softmax and the MLP 256-128 on
# Fashion-MNIST, batch 64, one thread, plain SGD. Each configuration runs
# REPS times, alternating asgd and PyTorch; the medians and their ratio are
# printed as a Markdown table.
#   bench/cpu_train.sh [EPOCHS] [REPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-2}
reps=${2:-3}
ASGD_SETUP_EXTRA=python3-torch "$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # median

echo "| model | batch | threads | asgd samples/s | PyTorch samples/s | ratio |"
echo "| --- | --- | --- | --- | --- | --- |"
for model in softmax mlp; do
    : >"$out/asgd" ; : >"$out/torch"
    for _ in $(seq "$reps"); do
        dir=$("$root/build/asgd" train "$root/configs/$model.ini" experiment.out="$out/runs" \
              data.normalize=standard train.epochs="$epochs" train.batch=64 train.lr=0.05 \
              backend.threads=1 eval.every=0 eval.steps_every=1000000)
        grep -o '"samples_per_s":[^,]*' "$dir/summary.json" | grep -o '[0-9.]*$' >>"$out/asgd"
        OMP_NUM_THREADS=1 /usr/bin/python3 "$root/bench/torch_train.py" --model "$model" \
              --epochs "$epochs" --batch 64 --threads 1 --lr 0.05 |
            sed 's/.*samples_per_s=\([0-9.]*\).*/\1/' >>"$out/torch"
    done
    a=$(median <"$out/asgd"); t=$(median <"$out/torch")
    printf "| %s | 64 | 1 | %.0f | %.0f | %.2f |\n" "$model" "$a" "$t" "$(awk -v a="$a" -v t="$t" 'BEGIN {print a / t}')"
done
