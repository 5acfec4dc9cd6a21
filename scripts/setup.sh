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
    clang libclang-rt-14-dev    # the libFuzzer harnesses (scripts/fuzz.sh)
)
# shellcheck disable=SC2206
packages+=(${ASGD_SETUP_EXTRA:-})

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
