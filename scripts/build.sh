#!/usr/bin/env bash
# Installs missing packages and builds asgd (Release) into build/.
# ASGD_SANITIZE=ON builds with address and undefined-behaviour sanitizers
# into build-sanitize/ instead; ASGD_SANITIZE=thread with ThreadSanitizer
# into build-tsan/.
# ASGD_PREBUILT=1 builds nothing: the benchmarks then time build/ as it is
# (a build made another way, such as device-build.sh's on a device machine).
set -euo pipefail
[ "${ASGD_PREBUILT:-0}" = 1 ] && exit 0
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
if [ "${ASGD_SANITIZE:-OFF}" = ON ]; then
    dir="$root/build-sanitize"
    flags=(-DCMAKE_BUILD_TYPE=Debug -DASGD_SANITIZE=ON)
elif [ "${ASGD_SANITIZE:-OFF}" = thread ]; then
    dir="$root/build-tsan"
    flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DASGD_TSAN=ON)
else
    dir="$root/build"
    flags=(-DCMAKE_BUILD_TYPE=Release)
fi
[ -f "$dir/CMakeCache.txt" ] || echo "build: configuring $dir (the first build takes a minute or two)" >&2
cmake -S "$root" -B "$dir" -DASGD_WERROR=ON "${flags[@]}" >/dev/null
# what is compiled, as it is (nothing when everything is up to date); the
# compiler's errors still reach stderr whole
cmake --build "$dir" -j"$(nproc)" |
    { grep --line-buffered -E '^\[ *[0-9]+%\] (Building|Linking)' | sed -u 's/^/build: /' >&2 || true; }
