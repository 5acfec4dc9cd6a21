#!/usr/bin/env bash
# One synchronous worker per visible GPU (CUDA_VISIBLE_DEVICES respected),
# learning rate 0.01 x workers, a shard per two cores (up to 8); arguments
# are config overrides and win.
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
    # a shard per two cores, up to 8: one shard alone sums and applies every
    # worker's 13 MB gradient on one core (4 workers on an H200: 8,168-15,260
    # samples/s with 1 shard, 23,478 with 8; bench/RESULTS.md)
    servers=$(( $(nproc) / 2 ))
    servers=$(( servers < 1 ? 1 : servers > 8 ? 8 : servers ))
    echo "multi-gpu-single-machine: $gpus GPU(s): $gpus workers, worker k on GPU k;" \
         "$servers shards" >&2
    set -- cluster.workers="$gpus" cluster.servers="$servers" \
        train.lr="$(awk -v n="$gpus" 'BEGIN {print 0.01 * n}')" "$@"
else
    echo "multi-gpu-single-machine: no GPU visible; running the same job on the CPU" \
         "(2 workers, 1 epoch)" >&2
    set -- cluster.workers=2 train.lr=0.02 backend.device=cpu train.epochs=1 "$@"
fi
exec "$here/../../scripts/experiment.sh" "$here" "$@"
