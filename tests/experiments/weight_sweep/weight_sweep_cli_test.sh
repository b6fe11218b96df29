#!/usr/bin/env bash
# End-to-end checks of the weight_sweep program: a short good run (2 × 2 grid × 2 seeds, heat
# maps) writes every output; a run killed part-way resumes without recomputing or duplicating
# points; a finished sweep re-run computes nothing; a journal of another configuration is
# refused; bad flags exit 2 with a message naming the flag and leave nothing behind.
# Usage: weight_sweep_cli_test.sh PATH/TO/weight_sweep
set -u
binary="$1"
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# --- a short good run with heat maps -----------------------------------------------------------
"$binary" --out_dir="$work/out" --case_name=msd --nodes=101 --seeds=2 --threads=2 \
  --grid=V.z.a_measured:1e3:1e5:2,W.v.s:1:100:2 > "$work/log" 2>&1 ||
  fail "good run exited non-zero: $(cat "$work/log")"
for f in points.csv summary.csv summary.json; do
  [[ -s "$work/out/$f" ]] || fail "good run did not write $f"
done
head -1 "$work/out/points.csv" |
  grep -q "^point,seed_index,seed,V.z.a_measured,W.v.s,converged,iterations," ||
  fail "unexpected points.csv header: $(head -1 "$work/out/points.csv")"
[[ $(wc -l < "$work/out/points.csv") -eq 9 ]] || fail "points.csv should have 8 rows"
[[ $(wc -l < "$work/out/summary.csv") -eq 5 ]] || fail "summary.csv should have 4 rows"
grep -q '"eq_2_28"' "$work/out/summary.json" || fail "summary.json lacks the observability tests"
grep -q "best RMS rel. error" "$work/log" || fail "no best-point lines: $(cat "$work/log")"
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  for f in heatmap_mass.png heatmap_damping.png heatmap_stiffness.png; do
    [[ -s "$work/out/$f" ]] || fail "heat map $f not rendered"
  done
fi
ls -A "$work/out" | grep -q staging && fail "staging folder left behind"
[[ -d "$work/out/.weight_sweep_journal" ]] || fail "no journal folder"

# --- list the weight names ---------------------------------------------------------------------
"$binary" --case_name=rt_rigid --list_weights > "$work/log" 2>&1 || fail "--list_weights failed"
grep -q "^V.z.phi_measured " "$work/log" || fail "--list_weights lacks V.z.phi_measured"

# --- kill part-way, resume ---------------------------------------------------------------------
args=(--out_dir="$work/resume" --case_name=msd --nodes=1001 --seeds=3 --threads=1
      --grid=V.z.a_measured:1e2:1e6:10 --figures=false --observability=false)
"$binary" "${args[@]}" > "$work/log1" 2>&1 &
pid=$!
pids+=("$pid")
journal="$work/resume/.weight_sweep_journal/journal-0.txt"
for _ in $(seq 1 1500); do
  [[ -f "$journal" ]] && (( $(grep -c '^P ' "$journal") >= 4 )) && break
  sleep 0.02
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
done_before=$(grep -c '^P ' "$journal")
(( done_before >= 4 && done_before < 30 )) ||
  fail "the kill came too late or too early ($done_before of 30 points journalled)"
[[ -f "$work/resume/points.csv" ]] && fail "a killed run left points.csv"
"$binary" "${args[@]}" > "$work/log2" 2>&1 || fail "resumed run failed: $(cat "$work/log2")"
grep -q "resuming: " "$work/log2" || fail "resumed run did not report resuming: $(cat "$work/log2")"
computed=$(sed -n 's/.*computed \([0-9]*\) here.*/\1/p' "$work/log2")
(( computed > 0 && computed <= 30 - done_before + 1 )) ||
  fail "resumed run computed $computed points (journal had $done_before)"
/usr/bin/python3 - "$work/resume" <<'EOF' || fail "resume check failed"
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/points.csv")))
keys = [(r["point"], r["seed_index"]) for r in rows]
assert len(rows) == 30, len(rows)
assert len(set(keys)) == 30, "duplicated points in points.csv"
complete = []
for line in open(d + "/.weight_sweep_journal/journal-0.txt"):
    f = line.split()
    if f and f[0] == "P" and len(f) == int(f[3]) + 5:
        complete.append((f[1], f[2]))
assert len(complete) == len(set(complete)) == 30, ("journal", len(complete), len(set(complete)))
EOF
# A finished sweep re-run computes nothing and gives the same table.
cp "$work/resume/points.csv" "$work/points_first.csv"
"$binary" "${args[@]}" > "$work/log3" 2>&1 || fail "re-run failed: $(cat "$work/log3")"
grep -q "computed 0 here" "$work/log3" || fail "re-run recomputed points: $(cat "$work/log3")"
cmp -s "$work/resume/points.csv" "$work/points_first.csv" || fail "re-run changed points.csv"
# Another configuration in the same folder is refused.
"$binary" "${args[@]}" --seeds=4 > "$work/log" 2>&1
[[ $? -eq 2 ]] || fail "a different configuration over an existing journal should exit 2"
grep -q "journal of other settings" "$work/log" || fail "no message: $(cat "$work/log")"

# --- bad flags ---------------------------------------------------------------------------------
# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
expect_error() {
  local expected="$1"; shift
  rm -rf "$work/bad"
  "$binary" --out_dir="$work/bad" --figures=false "$@" > "$work/log" 2>&1
  local code=$?
  [[ $code -eq 2 ]] || fail "exit code $code (expected 2) for: $*"
  grep -qF -- "$expected" "$work/log" || fail "message for '$*' lacks '$expected': $(cat "$work/log")"
  [[ -e "$work/bad" ]] && fail "outputs left behind for: $*"
}
expect_error "--grid: empty grid" --grid=
expect_error "--grid: unknown weight 'V.z.nope' for model mass_spring_damper" \
  --grid=V.z.nope:1:10:3
expect_error "--grid: 'V.z.a_measured:1:10' is not NAME:LOW:HIGH:COUNT" --grid=V.z.a_measured:1:10
expect_error "LOW and HIGH must be positive numbers" --grid=V.z.a_measured:0:10:3
expect_error "COUNT must be an integer in [1, 10000]" --grid=V.z.a_measured:1:10:0
expect_error "appears twice" --grid=V.z.a_measured:1:10:2,V[2]:1:10:2
expect_error "relative grid on R0.theta.mass, whose base weight is 0" --relative \
  --grid=R0.theta.mass:1:10:2
expect_error "unknown case 'xy'" --case_name=xy
expect_error "num_nodes must be 0 (case default) or in [20, 1e6]" --nodes=5
expect_error "--seeds must be in [1, 100000]" --seeds=0
expect_error "--threads must be in [0, 1024]" --threads=-1
expect_error "--transcription: expected shooting or collocation" --transcription=euler
expect_error "--trust_region: expected levenberg_marquardt or dogleg" --trust_region=newton
expect_error "--max_iterations must be >= 1" --max_iterations=0
expect_error "--theta_start_factor must be > 0" --theta_start_factor=0
expect_error "unexpected argument 'extra'" extra

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "weight_sweep CLI: all checks passed"
