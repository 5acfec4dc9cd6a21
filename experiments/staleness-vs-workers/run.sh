#!/usr/bin/env bash
# Mean staleness against workers, from the same sweep as
# experiments/accuracy-vs-workers (runs already done are reused); draws
# runs/rules-vs-workers/staleness-vs-workers.png (the copy beside this file is refreshed by hand).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
"$root/build/asgd" sweep "$root/experiments/accuracy-vs-workers/sweep.ini" -j 2
"$root/build/asgd" plot "$root/runs/rules-vs-workers" -o "$root/runs/rules-vs-workers/staleness-vs-workers.png" \
    --kind scaling --x workers --y staleness_mean --logx --size page
