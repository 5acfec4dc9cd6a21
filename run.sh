#!/usr/bin/env bash
# The main job: installs what is missing, builds, and compares the update
# rules on Fashion-MNIST (MLP 256-128, 4 workers, real processes), writing
# convergence, throughput and staleness figures; prints where they are.
# An argument sets the epochs per rule (default 5).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
exec "$root/experiments/compare-rules/run.sh" "$@"
