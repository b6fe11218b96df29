#!/usr/bin/env bash
# End-to-end checks of tx40_study --monte_carlo: two seeds of a short simulated record (good
# knowledge, IDIM-LS conv. and IDIM-IV IRWSM1) write coverage.csv (its documented columns, one row
# per method × knowledge × σ × identified parameter), monte_carlo_runs.csv, relative_errors.csv
# and summary.json; the ideal simulation runs too; bad Monte Carlo flags exit 2 with a message
# naming the flag and leave nothing behind.
# Usage: tx40_study_monte_carlo_cli_test.sh PATH/TO/tx40_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

common=(--figures=false --duration_s=3 --knowledge=good
        --methods=idim_ls_conventional,idim_iv_irwsm1 --monte_carlo=2 --monte_carlo_threads=2)
"$binary" --out_dir="$work/mc" "${common[@]}" --seed=7 > "$work/log" 2>&1 ||
  fail "Monte Carlo run exited non-zero: $(tail -5 "$work/log")"
for f in coverage.csv monte_carlo_runs.csv relative_errors.csv summary.json; do
  [[ -s "$work/mc/$f" ]] || fail "Monte Carlo run did not write $f"
done
grep -v '^#' "$work/mc/coverage.csv" | head -1 | grep -q "^estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated,scenario," ||
  fail "unexpected coverage.csv header: $(grep -v '^#' "$work/mc/coverage.csv" | head -1)"
# 2 methods × 1 level × 2 σ (eq. 8, HAC) × 55 base parameters.
rows=$(( $(grep -vc '^#' "$work/mc/coverage.csv") - 1 ))
(( rows == 220 )) || fail "coverage.csv has $rows rows, expected 220"
for estimator in idim_ls_conventional_good idim_ls_conventional_good_hac idim_iv_irwsm1_good \
                 idim_iv_irwsm1_good_hac; do
  grep -q "^$estimator,zz1r,[0-2],.*,realistic," "$work/mc/coverage.csv" ||
    fail "coverage.csv lacks the realistic zz1r row of $estimator"
done
head -1 "$work/mc/relative_errors.csv" | grep -q "^method,knowledge,seeds,estimates,converged,relative_error_median_percent," ||
  fail "unexpected relative_errors.csv header: $(head -1 "$work/mc/relative_errors.csv")"
grep -q "^idim_ls_conventional,good,2,2,2,[0-9.]*,.*,4.66," "$work/mc/relative_errors.csv" ||
  fail "relative_errors.csv lacks the IDIM-LS row with 2 estimates and the published 4.66 %"
[[ "$(json "$work/mc/summary.json" "d['monte_carlo']['seeds'], d['monte_carlo']['first_seed'], d['monte_carlo']['simulation'], len(d['monte_carlo']['methods'])")" == "2 7 realistic 2" ]] ||
  fail "summary.json: unexpected seeds, first seed, simulation or methods"
median=$(json "$work/mc/summary.json" "d['monte_carlo']['methods'][0]['relative_error_median_percent']")
python3 -c "import sys; v = float(sys.argv[1]); sys.exit(not 2 <= v <= 7)" "$median" ||
  fail "realistic Monte Carlo: IDIM-LS median relative error $median % not in [2, 7] %"
grep -q "IDIM-LS conv.        good: relative error" "$work/log" || fail "no relative-error summary printed"
grep -q "^bias (|bias| > 2 standard errors" "$work/log" || fail "no bias statement printed"
# The HAC intervals are estimate ± c σ with the fixed-b c (> 1.96, growing with the bandwidth),
# the eq. 8 intervals ± 1.96 σ; the settings line records the rule.
grep -q "^# settings: .*--hac_critical=fixed_b" "$work/mc/coverage.csv" ||
  fail "coverage.csv's settings line does not record --hac_critical: $(grep '^#' "$work/mc/coverage.csv")"
python3 - "$work/mc/monte_carlo_runs.csv" <<'PY' || fail "HAC intervals are not estimate ± c σ with fixed-b c"
import csv, sys
hac, plain = [], []
for r in csv.DictReader(open(sys.argv[1])):
    if r["parameter"] != "zz1r" or not r["upper"] or not r["reported_std"]:
        continue
    c = (float(r["upper"]) - float(r["estimate"])) / float(r["reported_std"])
    c_low = (float(r["estimate"]) - float(r["lower"])) / float(r["reported_std"])
    assert abs(c - c_low) < 1e-6 * c, (c, c_low)
    (hac if r["estimator"].endswith("_hac") else plain).append(c)
assert len(hac) == 4 and len(plain) == 4, (hac, plain)
assert all(abs(c - 1.959964) < 1e-4 for c in plain), plain
assert all(1.97 < c < 3.0 for c in hac), hac
PY
# Run i is the single run with --seed + i: the first seed's IDIM-LS estimate of zz1r.
"$binary" --out_dir="$work/single" --figures=false --duration_s=3 --knowledge=good \
  --methods=idim_ls_conventional --seed=7 > "$work/log" 2>&1 ||
  fail "single run exited non-zero: $(tail -5 "$work/log")"
single=$(grep "^idim_ls_conventional,good,zz1r," "$work/single/estimates.csv" | cut -d, -f4)
python3 - "$work/mc/monte_carlo_runs.csv" "$single" <<'PY' || fail "Monte Carlo seed 7 differs from the single run with --seed=7"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["seed"] == "7" and r["estimator"] == "idim_ls_conventional_good" and r["parameter"] == "zz1r"]
sys.exit(len(rows) != 1 or abs(float(rows[0]["estimate"]) - float(sys.argv[2])) > 1e-8 * abs(float(sys.argv[2])))
PY
# The ideal simulation.
"$binary" --out_dir="$work/ideal" "${common[@]}" --simulation=ideal --methods=idim_ls_conventional \
  > "$work/log" 2>&1 || fail "ideal Monte Carlo exited non-zero: $(tail -5 "$work/log")"
grep -q "^idim_ls_conventional_good,zz1r,2,.*,ideal," "$work/ideal/coverage.csv" ||
  fail "ideal Monte Carlo: coverage.csv lacks the ideal zz1r row"
ideal=$(json "$work/ideal/summary.json" "d['monte_carlo']['methods'][0]['relative_error_median_percent']")
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 0.6)" "$ideal" ||
  fail "ideal Monte Carlo: IDIM-LS median relative error $ideal % not < 0.6 %"

expect_error() {
  local expected="$1"; shift
  rm -rf "$work/bad"
  "$binary" --out_dir="$work/bad" --figures=false "$@" > "$work/log" 2>&1
  local code=$?
  (( code == 2 )) || fail "exit $code (expected 2) for: $*"
  grep -qF -- "$expected" "$work/log" || fail "message for '$*' lacks '$expected': $(tail -3 "$work/log")"
  if [[ -d "$work/bad" ]] && [[ -n "$(ls -A "$work/bad")" ]]; then
    fail "outputs left behind for: $*"
  fi
}
expect_error "--monte_carlo must be >= 0" --monte_carlo=-1
expect_error "--monte_carlo must be in [0, 10000]" --monte_carlo=20000
expect_error "--monte_carlo_threads must be >= 0" --monte_carlo=2 --monte_carlo_threads=-1
expect_error "--monte_carlo_threads is only used with --monte_carlo" --monte_carlo_threads=2
expect_error "--write_measurements is not used with --monte_carlo" --monte_carlo=2 --write_measurements
expect_error "--threads is not used with --monte_carlo" --monte_carlo=2 --threads=1
expect_error "--monte_carlo is only used with the simulated experiment" --monte_carlo=2 \
  --positions_csv="$work/p.csv" --torques_csv="$work/t.csv"

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "tx40_study Monte Carlo CLI: all checks passed"
