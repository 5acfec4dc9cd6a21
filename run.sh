#!/usr/bin/env bash
# The main job: installs what is missing, builds, and compares the update
# rules on Fashion-MNIST (MLP 256-128, 4 workers, real processes, 3 seeds
# each), writing convergence, time-to-accuracy, throughput and staleness
# figures and results.md; prints where they are.
#   ./run.sh [EPOCHS (3)] [SEEDS (3)]
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
exec "$root/experiments/compare-rules/run.sh" "$@"
