#!/usr/bin/env bash
# The simulator's own overhead: hogwild with the null compute model (no
# time, no gradients) on a tiny softmax model (8 features, 2 classes: 18
# parameters), so that what is measured is the event loop, the coroutine
# switches and the shard handlers. Each worker's share of the data is 10
# examples, passed over STEPS/10 times, so that making the data set takes
# next to none of the wall time. Prints events/s and wall time per
# simulated worker-step, for each worker count, as a Markdown table.
#   bench/sim_overhead.sh [STEPS_PER_WORKER] [WORKER_COUNTS...]
# ASGD=PATH times another build's binary (to compare two side by side).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-200}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 16 256 1024)
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # summary_field

echo "| workers | worker-steps | events | wall s | events/s | wall per worker-step |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in "${counts[@]}"; do
    size=$((n * 10))
    dir=$("${ASGD:-$root/build/asgd}" train /dev/null experiment.out="$out" experiment.mode=sim \
          train.algorithm=hogwild cluster.workers="$n" data.dataset=synthetic \
          data.train_size="$size" data.test_size=16 data.dim=8 data.classes=2 \
          model.type=softmax train.batch=1 train.epochs=$((steps / 10)) sim.compute=null eval.every=0 \
          eval.steps_every=1000000000)
    ev=$(summary_field "$dir" sim_events); wall=$(summary_field "$dir" wall_time_s); upd=$(summary_field "$dir" updates)
    awk -v n="$n" -v u="$upd" -v e="$ev" -v w="$wall" 'BEGIN {
        printf "| %d | %d | %d | %.3f | %.0f | %.2f us |\n", n, u, e, w, e / w, 1e6 * w / u }'
done
