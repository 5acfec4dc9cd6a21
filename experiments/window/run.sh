#!/usr/bin/env bash
# Sweeps agn, downpour and aeasgd over the communication window (simulated;
# resumable) and draws runs/window/window.png (this folder's copy is refreshed by hand).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
"$root/build/asgd" sweep "$here/sweep.ini" -j 2
"$root/build/asgd" plot "$root/runs/window" -o "$root/runs/window/window.png" --kind scaling \
    --x algorithm.window --y final_test_acc --logx --size page
