#!/usr/bin/env bash
# Runs the experiment in folder DIR (its config.ini) after installing what
# is missing and building; extra arguments are config overrides.
#   scripts/experiment.sh DIR [section.key=value ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "$1" && pwd)
shift
"$root/scripts/build.sh"
exec "$root/build/asgd" train "$dir/config.ini" experiment.out="$root/runs" "$@"
