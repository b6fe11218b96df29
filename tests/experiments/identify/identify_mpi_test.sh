#!/usr/bin/env bash
# identify_mpi with 2 ranks shares the bootstrap runs of --monte_carlo out and writes exactly the
# CSV outputs of the threaded identify (the turntable with coloured torque noise, 6 runs), each
# rank journalling its own runs.
# Usage: identify_mpi_test.sh PATH/TO/identify PATH/TO/identify_mpi [MPIEXEC]
set -u
threaded="$1"
mpi="$2"
mpiexec="${3:-mpirun}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cat > "$work/turntable.yaml" <<'YAML'
name: turntable
convention: modified
joints:
  - {name: spin, type: revolute, alpha: 0, d: 0, theta: 0, r: 0}
YAML
awk -v seed=12345 '
  function u() { seed = (16807 * seed) % 2147483647; return seed / 2147483647 }
  function gauss() { return sqrt(-2 * log(u())) * cos(6.283185307179586 * u()) }
  BEGIN {
    print "t,q_spin,tau_spin"
    e = 0
    for (k = 0; k < 3000; k++) {
      t = k * 0.005
      q = 0.8 * sin(1.3 * t) + 0.3 * sin(3.1 * t + 0.4)
      qd = 0.8 * 1.3 * cos(1.3 * t) + 0.3 * 3.1 * cos(3.1 * t + 0.4)
      qdd = -0.8 * 1.69 * sin(1.3 * t) - 0.3 * 9.61 * sin(3.1 * t + 0.4)
      s = (qd > 0) - (qd < 0)
      e = 0.98 * e + sqrt(1 - 0.98 * 0.98) * 0.05 * gauss()
      printf "%.4f,%.12g,%.12g\n", t, q, 0.35 * qdd + 0.8 * qd + 0.4 * s + 0.05 + e
    }
  }' > "$work/coloured.csv"
args=(--robot="$work/turntable.yaml" --data="$work/coloured.csv" --monte_carlo=6 --figures=false
      --progress=false)
"$threaded" "${args[@]}" --out_dir="$work/threaded" --monte_carlo_threads=2 > "$work/log_t" 2>&1 ||
  fail "threaded run failed: $(cat "$work/log_t")"
"$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$mpi" "${args[@]}" --out_dir="$work/mpi" \
  --monte_carlo_threads=1 > "$work/log_m" 2>&1 || fail "MPI run failed: $(cat "$work/log_m")"
grep -q "1 thread(s) × 2 rank(s)" "$work/log_m" || fail "MPI run did not use 2 ranks: $(cat "$work/log_m")"
for r in 0 1; do
  n=$(grep -c '^R ' "$work/mpi/.monte_carlo_journal/journal-$r.txt" 2>/dev/null || echo 0)
  (( n == 3 )) || fail "rank $r journalled $n runs (expected 3 of 6)"
done
for f in coverage.csv monte_carlo_runs.csv; do
  cmp -s "$work/threaded/$f" "$work/mpi/$f" || fail "$f of the MPI run differs"
done

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "identify_mpi: all checks passed"
