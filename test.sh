#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with CTest, printing
# the output of any that fail. Arguments go to ctest (e.g. -L unit).
# ASGD_SANITIZE=ON ./test.sh runs the suite under ASan and UBSan.
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/build.sh"
dir="$root/build"
if [ "${ASGD_SANITIZE:-OFF}" = ON ]; then
    dir="$root/build-sanitize"
    # protect_shadow_gap=0: the CUDA driver maps memory where ASan's gap is
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:protect_shadow_gap=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cd "$dir"
exec ctest --output-on-failure -j"$(nproc)" "$@"
