#!/usr/bin/env bash
# The main job of dynid on a fresh Debian 12 machine: installs the dependencies, builds
# (Release, in build/), and runs the main experiment on the shipped default data.
# Until the TX40 study lands, the main job is the IRW smoothing differentiator on the shipped
# example signal data/examples/encoder_positions.csv; results go to out/main/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)"
./build/experiments/irw_smooth --out_dir=out/main "$@"
