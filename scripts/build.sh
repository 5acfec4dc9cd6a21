#!/usr/bin/env bash
# Installs missing packages and builds asgd (Release) into build/.
# ASGD_SANITIZE=ON builds with address and undefined-behaviour sanitizers
# into build-sanitize/ instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
if [ "${ASGD_SANITIZE:-OFF}" = ON ]; then
    dir="$root/build-sanitize"
    flags=(-DCMAKE_BUILD_TYPE=Debug -DASGD_SANITIZE=ON)
else
    dir="$root/build"
    flags=(-DCMAKE_BUILD_TYPE=Release)
fi
cmake -S "$root" -B "$dir" -DASGD_WERROR=ON "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
