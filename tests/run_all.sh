#!/usr/bin/env bash
# Builds dynid (Release, in build/) and runs the whole test suite with CTest.
# Installs missing dependencies first (as root), so it also works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"  # lets clones in other folders share the compiler cache
bash .ci/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
