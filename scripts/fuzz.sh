#!/usr/bin/env bash
# Builds the libFuzzer harnesses in fuzz/ with clang (into build-fuzz/) and
# runs each for SECONDS (default 5) from its seed corpus in fuzz/corpus/.
#
#   scripts/fuzz.sh [SECONDS] [wire|compress|config|cluster|idx ...]
#
# ./test.sh runs every harness briefly; a long campaign is, for example,
#   scripts/fuzz.sh 600 wire
# New inputs that reach new code collect in build-fuzz/corpus/NAME and are
# kept for the next run; an input that breaks a promise or trips a
# sanitizer is saved as build-fuzz/crashes/NAME-crash-* and the script
# fails, printing the command that replays it. Where clang or its libFuzzer
# runtime is missing, it says so and does nothing. ASGD_FUZZ_SEED fixes
# libFuzzer's seed (./test.sh sets 1, so that CI mutates the same way each
# time; the new inputs then go to a fresh folder instead of
# build-fuzz/corpus, so that a run repeats); unset, libFuzzer draws one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-5}
shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    names=(wire compress config cluster idx)
fi
dir="$root/build-fuzz"

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >"$probe/p.c"
if ! command -v clang >/dev/null ||
   ! clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null; then
    echo "fuzz: skipped: no clang with libFuzzer (apt-get install clang libclang-rt-14-dev)"
    exit 0
fi

CC=clang cmake -S "$root" -B "$dir" -DASGD_FUZZ=ON -DASGD_CUDA=OFF -DASGD_WERROR=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
mkdir -p "$dir/crashes"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
for name in "${names[@]}"; do
    bin="$dir/fuzz/fuzz_$name"
    if [ ! -x "$bin" ]; then
        echo "fuzz: no harness \"$name\" (wire, compress, config, cluster, idx)" >&2
        exit 2
    fi
    corpus="$dir/corpus/$name"
    if [ -n "${ASGD_FUZZ_SEED:-}" ]; then
        corpus="$probe/$name"
    fi
    mkdir -p "$corpus"
    log="$dir/fuzz_$name.log"
    if "$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        ${ASGD_FUZZ_SEED:+-seed="$ASGD_FUZZ_SEED"} \
        -artifact_prefix="$dir/crashes/$name-" "$corpus" "$root/fuzz/corpus/$name" \
        >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz_$name: $runs inputs in ${seconds} s, corpus $(ls "$corpus" | wc -l), no failure"
    else
        failed=1
        crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        grep -E "broken promise|ERROR|runtime error|SUMMARY" "$log" | head -5 >&2 || true
        echo "fuzz_$name: FAILED (log $log); replay: $bin $crash" >&2
    fi
done
exit $failed
