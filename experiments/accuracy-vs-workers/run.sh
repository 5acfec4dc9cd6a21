#!/usr/bin/env bash
# Sweeps rules x workers x 3 seeds (simulated; resumable) and draws
# runs/rules-vs-workers/accuracy-vs-workers.png (the copy beside this file is refreshed by hand).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
"$root/build/asgd" sweep "$here/sweep.ini" -j 2
"$root/build/asgd" plot "$root/runs/rules-vs-workers" -o "$root/runs/rules-vs-workers/accuracy-vs-workers.png" \
    --kind scaling --x workers --y final_test_acc --logx --size page
