#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the default
# experiment (the sequential baseline on Fashion-MNIST). Prints the run folder.
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
exec "$root/experiments/sequential/run.sh" "$@"
