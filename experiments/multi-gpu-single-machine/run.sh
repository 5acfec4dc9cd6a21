#!/usr/bin/env bash
# One synchronous worker per visible GPU (CUDA_VISIBLE_DEVICES respected),
# learning rate 0.01 x workers; arguments are config overrides and win.
# Without a GPU it says so and runs the same job on the CPU with 2 workers
# for 1 epoch, so that the experiment can be tried anywhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    visible=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c . || true)
    [ "$visible" -lt "$gpus" ] && gpus=$visible
fi
if [ "$gpus" -gt 0 ]; then
    echo "multi-gpu-single-machine: $gpus GPU(s): $gpus workers, worker k on GPU k" >&2
    set -- cluster.workers="$gpus" train.lr="$(awk -v n="$gpus" 'BEGIN {print 0.01 * n}')" "$@"
else
    echo "multi-gpu-single-machine: no GPU visible; running the same job on the CPU" \
         "(2 workers, 1 epoch)" >&2
    set -- cluster.workers=2 train.lr=0.02 backend.device=cpu train.epochs=1 "$@"
fi
exec "$here/../../scripts/experiment.sh" "$here" "$@"
