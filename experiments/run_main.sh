#!/usr/bin/env bash
# The main job of dynid on a fresh Debian 12 machine: installs the dependencies, builds
# (Release, in build/), and runs the main experiment.
# Main experiment: the TX40 study of Brunot et al. (2018) (experiments/tx40_study/tx40_study.cc) on
# its default simulated experiment — IDIM-LS / IDIM-IV with conventional and IRWSM1/IRWSM2
# pre-processing under good, poor and no prior knowledge; tables, estimates.csv, summary.json and
# figures go to out/tx40_study/. Extra arguments are passed to tx40_study (e.g. --positions_csv=F
# --torques_csv=G for real TX40 data).
# Then the IRW smoothing differentiator on the shipped example signal
# data/examples/encoder_positions.csv; results go to out/main/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"  # lets clones in other folders share the compiler cache
bash .ci/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)"
./build/bin/tx40_study --out_dir=out/tx40_study "$@"
./build/bin/irw_smooth --out_dir=out/main
