#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with CTest, printing
# the output of any that fail. Arguments go to ctest (e.g. -L unit).
# ASGD_SANITIZE=ON ./test.sh runs the suite under ASan and UBSan;
# ASGD_SANITIZE=thread under ThreadSanitizer (slow: pick tests, -R NAME).
# Without arguments it then runs each libFuzzer harness (fuzz/) for
# ASGD_FUZZ_SECONDS seconds (default 5; 0 skips them).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
"$root/scripts/build.sh"
dir="$root/build"
if [ "${ASGD_SANITIZE:-OFF}" = ON ]; then
    dir="$root/build-sanitize"
    # protect_shadow_gap=0: the CUDA driver maps memory where ASan's gap is
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:protect_shadow_gap=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
elif [ "${ASGD_SANITIZE:-OFF}" = thread ]; then
    dir="$root/build-tsan"
    # every process of a test reports (exit 66); one BLAS thread, whose
    # own threads TSan cannot see into
    export TSAN_OPTIONS="halt_on_error=1:exitcode=66:suppressions=$root/scripts/tsan.supp"
    export OPENBLAS_NUM_THREADS=1
fi
cd "$dir"
ctest --output-on-failure -j"$(nproc)" "$@"
seconds=${ASGD_FUZZ_SECONDS:-5}
if [ $# -eq 0 ] && [ "$seconds" != 0 ]; then
    ASGD_FUZZ_SEED=${ASGD_FUZZ_SEED:-1} "$root/scripts/fuzz.sh" "$seconds"
fi
