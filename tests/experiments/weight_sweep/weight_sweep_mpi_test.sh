#!/usr/bin/env bash
# weight_sweep_mpi with 3 ranks on one machine gives the same merged table as the threaded
# weight_sweep (every column but the timings), with each rank journalling its own points.
# Usage: weight_sweep_mpi_test.sh PATH/TO/weight_sweep PATH/TO/weight_sweep_mpi [MPIEXEC]
set -u
threaded="$1"
mpi="$2"
mpiexec="${3:-mpirun}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

args=(--case_name=msd --nodes=101 --seeds=3 --grid=V.z.a_measured:1e3:1e5:3,W.v.s:1:100:2
      --figures=false --progress=false)
"$threaded" "${args[@]}" --out_dir="$work/threaded" --threads=2 > "$work/log_t" 2>&1 ||
  fail "threaded run failed: $(cat "$work/log_t")"
"$mpiexec" --oversubscribe --allow-run-as-root -np 3 "$mpi" "${args[@]}" --out_dir="$work/mpi" \
  --threads=1 > "$work/log_m" 2>&1 || fail "MPI run failed: $(cat "$work/log_m")"
grep -q "1 thread(s) × 3 rank(s)" "$work/log_m" || fail "MPI run did not use 3 ranks: $(cat "$work/log_m")"
for r in 0 1 2; do
  n=$(grep -c '^P ' "$work/mpi/.weight_sweep_journal/journal-$r.txt" 2>/dev/null || echo 0)
  (( n == 6 )) || fail "rank $r journalled $n points (expected 6 of 18)"
done
/usr/bin/python3 - "$work/threaded" "$work/mpi" <<'PY' || fail "merged MPI table differs from the threaded one"
import csv, sys
def load(path):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r.pop("time_s", None)
        r.pop("mean_time_s", None)
    return rows
a, b = sys.argv[1], sys.argv[2]
for name in ("points.csv", "summary.csv"):
    x, y = load(a + "/" + name), load(b + "/" + name)
    assert len(x) > 0 and x == y, name
print("tables equal:", len(load(a + "/points.csv")), "rows")
PY

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "weight_sweep MPI: all checks passed"
