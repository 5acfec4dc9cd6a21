#!/usr/bin/env bash
# Submits job.sbatch to the Slurm cluster this host belongs to and waits for
# it; arguments are config overrides (e.g. train.epochs=2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if ! command -v sbatch >/dev/null || ! sinfo >/dev/null 2>&1; then
    echo "run.sh: no Slurm controller answers here (sbatch, sinfo); see $here/README.md" >&2
    exit 2
fi
"$root/scripts/build.sh" >&2
cd "$root"
exec sbatch --wait --export=ALL,ASGD="$root/build/asgd" "$here/job.sbatch" \
    "$here/config.ini" "$@"
