#!/usr/bin/env bash
# Installs the Debian packages asgd needs to build, test and run.
# Idempotent: when every package is present it only checks, which takes well
# under a second. Set ASGD_SETUP_EXTRA="pkg ..." to add packages (bench/ uses
# this for python3-torch).
set -euo pipefail

packages=(
    build-essential cmake pkg-config
    libzmq3-dev libopenblas-dev libinih-dev libcjson-dev zlib1g-dev libcmocka-dev
    gnuplot-nox dataset-fashion-mnist python3 python3-numpy python3-yaml
)
# The libFuzzer harnesses' compiler (scripts/fuzz.sh): installed when the
# release has it; without it the fuzzers say so and are skipped.
optional=(clang libclang-rt-14-dev)
# shellcheck disable=SC2206
packages+=(${ASGD_SETUP_EXTRA:-})

missing=()
missing_optional=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing+=("$p")
    fi
done

for p in "${optional[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing_optional+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ]; then
    exit 0
fi

echo "setup: installing ${missing[*]} ${missing_optional[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_optional[@]} -gt 0 ] &&
   ! $sudo apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" >/dev/null; then
    echo "setup: ${missing_optional[*]} could not be installed: the fuzzers will be skipped" >&2
fi
