#!/usr/bin/env bash
# Runs the sequential baseline; extra arguments are config overrides,
# e.g. ./run.sh train.epochs=2
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
exec "$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" "$@"
