#!/usr/bin/env bash
# End-to-end checks of weight_sweep --monte_carlo: without --grid it runs at the case's base
# weights, with --grid at every grid point (one scenario each), and writes coverage.csv (the
# columns of solvers/coverage.h, smoother, smoother_scaled, smoother_sandwich and smoother_hac per
# parameter),
# monte_carlo_runs.csv
# and summary.json; its runs are the sweep's estimates of the same point and seed; a sweep quotes
# the coverage.csv beside its predicted sd at the same settings, and says so when the settings
# differ; bad flags exit 2 naming the flag and write nothing.
# Usage: weight_sweep_monte_carlo_cli_test.sh PATH/TO/weight_sweep
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"
common=(--figures=false --case_name=msd --nodes=101)
grid=--grid=V.z.a_measured:1e3:1e5:2

# At the base weights.
"$binary" "${common[@]}" --monte_carlo=4 --monte_carlo_threads=2 --out_dir="$work/base" \
  > "$work/log_base" 2>&1 || fail "base-weights Monte Carlo failed: $(cat "$work/log_base")"
head -1 "$work/base/coverage.csv" |
  grep -q "^# settings: weight_sweep --monte_carlo=4 --first_seed=1 --nodes=101$" ||
  fail "coverage.csv does not record its settings: $(head -1 "$work/base/coverage.csv")"
grep -v '^#' "$work/base/coverage.csv" | head -1 |
  grep -q "^estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated," ||
  fail "unexpected coverage.csv header"
for row in "smoother,mass" "smoother,stiffness" "smoother_scaled,damping" \
  "smoother_sandwich,mass" "smoother_hac,stiffness"; do
  grep -q "^$row,4,.*,base_weights," "$work/base/coverage.csv" ||
    fail "coverage.csv lacks $row over 4 runs at base_weights"
done
grep -q "4 seeds (1..4), elapsed" "$work/log_base" || fail "no job line: $(cat "$work/log_base")"

# On a 2-point grid from seed 3: one scenario per point; run (point 1, seed 4) is the sweep's.
"$binary" "${common[@]}" "$grid" --monte_carlo=2 --first_seed=3 --out_dir="$work/grid" \
  > "$work/log_grid" 2>&1 || fail "grid Monte Carlo failed: $(cat "$work/log_grid")"
"$binary" "${common[@]}" "$grid" --seeds=2 --first_seed=3 --threads=2 --observability=false \
  --coverage_csv="$work/grid/coverage.csv" --out_dir="$work/sweep" > "$work/log_sweep" 2>&1 ||
  fail "sweep failed: $(cat "$work/log_sweep")"
python3 - "$work/grid" "$work/sweep" <<'PY' || fail "Monte Carlo and sweep disagree"
import csv, json, math, sys
mc, sweep = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(l for l in open(mc + "/coverage.csv") if not l.startswith("#"))]
assert sorted({r["scenario"] for r in rows}) == ["V.z.a_measured=1000", "V.z.a_measured=100000"], rows
runs = list(csv.DictReader(open(mc + "/monte_carlo_runs.csv")))
points = list(csv.DictReader(open(sweep + "/points.csv")))
p = [r for r in points if r["point"] == "1" and r["seed"] == "4"][0]
for name in ("mass", "damping", "stiffness"):
    r = [r for r in runs if r["scenario"] == "V.z.a_measured=100000" and r["seed"] == "4"
         and r["estimator"] == "smoother_scaled" and r["parameter"] == name][0]
    assert math.isclose(float(r["estimate"]), float(p["theta_" + name]), rel_tol=1e-9), (r, p)
    assert math.isclose(float(r["reported_std"]), float(p["scaled_sd_" + name]), rel_tol=1e-9)
    r = [r for r in runs if r["scenario"] == "V.z.a_measured=100000" and r["seed"] == "4"
         and r["estimator"] == "smoother_sandwich" and r["parameter"] == name][0]
    assert float(r["reported_std"]) > 0, r
    assert math.isclose(float(r["reported_std"]), float(p["sandwich_sd_" + name]), rel_tol=1e-9)
    # The HAC form's interval is ± c σ, c the fixed-b value (> 1.96).
    r = [r for r in runs if r["scenario"] == "V.z.a_measured=100000" and r["seed"] == "4"
         and r["estimator"] == "smoother_hac" and r["parameter"] == name][0]
    sd = float(r["reported_std"])
    assert math.isclose(sd, float(p["hac_sd_" + name]), rel_tol=1e-9), (r, p)
    c = (float(r["upper"]) - float(r["estimate"])) / sd
    assert 1.96 < c < 3.0 and math.isclose(c, (float(r["estimate"]) - float(r["lower"])) / sd), r
# The sweep quotes the measured coverage of every point and parameter.
summary = list(csv.DictReader(open(sweep + "/summary.csv")))
for s in summary:
    for name in ("mass", "damping", "stiffness"):
        assert 0.0 <= float(s["coverage_95_" + name]) <= 1.0, s
quoted = json.load(open(sweep + "/summary.json"))["predicted_sd_coverage"]
assert len(quoted["rows"]) == 6, quoted
assert all("too few to judge" in r["label"] for r in quoted["rows"]), quoted
# ... and how many of the two sandwich forms' measured pairs are calibrated (none on 3 runs).
for key in ("sandwich_sd_coverage", "hac_sd_coverage"):
    other = json.load(open(sweep + "/summary.json"))[key]
    assert other["measured"] == 6 and other["pairs"] == 6 and other["calibrated"] == 0, other
PY
grep -q "predicted sd (smoother_scaled): 6 of 6 point × parameter pairs measured" \
  "$work/log_sweep" || fail "the sweep does not state the quoted coverage: $(cat "$work/log_sweep")"
grep -q "HAC sd (smoother_hac): 6 of 6 pairs measured, 0 calibrated" "$work/log_sweep" ||
  fail "the sweep does not state the HAC form's coverage: $(cat "$work/log_sweep")"

# At other settings the coverage is not quoted, and the sweep says what differs.
"$binary" "${common[@]}" "$grid" --seeds=2 --noise_scale=2 --observability=false \
  --coverage_csv="$work/grid/coverage.csv" --out_dir="$work/other" > "$work/log_other" 2>&1 ||
  fail "sweep at other settings failed: $(cat "$work/log_other")"
grep -q "coverage not measured for this setting (measured by weight_sweep at --nodes=101, this run at --nodes=101 --noise_scale=2)" \
  "$work/log_other" || fail "other settings not stated: $(cat "$work/log_other")"
python3 - "$work/other/summary.csv" <<'PY' || fail "coverage quoted at other settings"
import csv, math, sys
for s in csv.DictReader(open(sys.argv[1])):
    assert math.isnan(float(s["coverage_95_mass"])), s
PY

# Bad flags: exit 2 naming the flag, no outputs.
expect_error() { local expected="$1"; shift; expect_exit 2 "$expected" --figures=false "$@"; }
expect_error "--seeds is the sweep's; --monte_carlo=N runs N seeds from --first_seed" \
  --monte_carlo=2 --seeds=3
expect_error "--threads is the sweep's; --monte_carlo runs on --monte_carlo_threads" \
  --monte_carlo=2 --threads=2
expect_error "--coverage_csv is quoted by a sweep, not used with --monte_carlo" \
  --monte_carlo=2 --coverage_csv="$work/grid/coverage.csv"
expect_error "--monte_carlo_threads is used with --monte_carlo only" --monte_carlo_threads=2
expect_error "--monte_carlo_resume needs --monte_carlo=N" --monte_carlo_resume
expect_error "--monte_carlo must be >= 0" --monte_carlo=-1
expect_error "--coverage_csv: " --coverage_csv="$work/missing.csv" --nodes=101 --seeds=1 \
  --grid=V.z.a_measured:1e3:1e3:1

finish weight_sweep_monte_carlo
