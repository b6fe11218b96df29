#!/usr/bin/env bash
# Installs dynid into a temporary prefix and builds and runs tests/install/consumer, a separate
# CMake project that finds dynid through find_package alone. Also checks that every installed
# header compiles on its own and that no internal header was installed.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -f "$prefix/lib/cmake/dynid/dynidConfig.cmake" || { echo "FAIL: no dynidConfig.cmake"; exit 1; }
test -f "$prefix/lib/cmake/dynid/dynidConfigVersion.cmake" || { echo "FAIL: no version file"; exit 1; }
test -f "$prefix/share/dynid/plot_figure.py" || { echo "FAIL: figure script not installed"; exit 1; }
if find "$prefix/include" -path '*internal*' | grep -q .; then
  echo "FAIL: internal headers installed:"; find "$prefix/include" -path '*internal*'; exit 1
fi
# Every public header is self-contained and includes no internal or study header.
for header in $(cd "$prefix/include" && find dynid -name '*.h' | sort); do
  if grep -nE '#include "(dynid/[a-z]+/internal/|experiments/)' "$prefix/include/$header"; then
    echo "FAIL: $header includes an internal or study header"; exit 1
  fi
done
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" -j"$(nproc)" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/consumer/consumer" "$work/record.csv"
# An installed program finds its runtime files relative to itself: the example signal.
(cd "$work" && "$prefix/bin/irw_smooth" --out_dir="$work/irw" --figures=false > "$work/irw.log" 2>&1) ||
  { echo "FAIL: installed irw_smooth"; cat "$work/irw.log"; exit 1; }
test -s "$work/irw/smoothed.csv" || { echo "FAIL: installed irw_smooth wrote no smoothed.csv"; exit 1; }
echo "install test: passed"
