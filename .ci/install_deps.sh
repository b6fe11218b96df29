#!/usr/bin/env bash
# Installs dynid's build and run dependencies from Debian's packages (needs root).
# Idempotent: does nothing when every package is already installed.
# Usage: bash .ci/install_deps.sh [--with-fuzz]
set -euo pipefail
packages=(cmake g++ make ccache pkg-config
          libceres-dev libeigen3-dev libsuitesparse-dev libgflags-dev libgoogle-glog-dev
          libgtest-dev libgmock-dev nlohmann-json3-dev python3 python3-matplotlib
          libopenmpi-dev openmpi-bin liburdfdom-dev libyaml-cpp-dev libfast-float-dev)
if [[ "${1:-}" == "--with-fuzz" ]]; then
  packages+=(clang libclang-rt-14-dev)
fi
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if (( ${#missing[@]} )); then
  echo "installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "error: installing packages needs root (run as root or install: ${missing[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
