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
# Installed when the release has them; without them the tests that need
# them say so and are skipped: the libFuzzer harnesses' compiler
# (scripts/fuzz.sh); hosts made of network namespaces (iproute2, util-linux's
# nsenter and unshare); the launchers tests/test_launchers.py starts jobs
# with (Open MPI, MPICH, Slurm and its munge).
optional=(clang libclang-rt-14-dev iproute2 util-linux openmpi-bin mpich slurm-wlm munge)
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
for p in "${missing_optional[@]}"; do   # one by one: one missing loses no other
    if ! $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null; then
        echo "setup: $p could not be installed: the tests that need it will be skipped" >&2
    fi
done
