#!/usr/bin/env bash
# End-to-end checks of friction_filter_study --monte_carlo: a 3-seed run on a 1.2 s record writes
# coverage.csv (the columns of solvers/coverage.h), monte_carlo_runs.csv, monte_carlo_measures.csv
# and summary.json; the runs are the same on one and on two threads; run i is the single run with
# --seed + i; the sliding-surface filter reports no interval, the optimal filter one per friction
# and velocity estimate; the measures' medians lie within their quartiles; a single run quotes a
# given coverage.csv, or the shipped one at the default settings only; bad flags exit 2.
# Usage: friction_filter_study_monte_carlo_cli_test.sh PATH/TO/friction_filter_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"
common=(--figures=false --duration_s=1.2 --sample_period_s=2e-3 --transient_s=0.25 --seed=5)

"$binary" "${common[@]}" --monte_carlo=3 --monte_carlo_threads=1 --coverage_times_s=0.9 \
  --out_dir="$work/one" > "$work/log1" 2>&1 ||
  fail "1-thread Monte Carlo exited non-zero: $(cat "$work/log1")"
"$binary" "${common[@]}" --monte_carlo=3 --monte_carlo_threads=2 --coverage_times_s=0.9 \
  --out_dir="$work/two" > "$work/log2" 2>&1 ||
  fail "2-thread Monte Carlo exited non-zero: $(cat "$work/log2")"
for f in coverage.csv monte_carlo_runs.csv monte_carlo_measures.csv summary.json; do
  [[ -s "$work/one/$f" ]] || fail "Monte Carlo did not write $f"
done
[[ -e "$work/one/results.csv" ]] && fail "Monte Carlo wrote the single run's results.csv"
grep -v '^#' "$work/one/coverage.csv" | head -1 |
  grep -q "^estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated," ||
  fail "unexpected coverage.csv header: $(grep -v '^#' "$work/one/coverage.csv" | head -1)"
for f in monte_carlo_runs.csv coverage.csv monte_carlo_measures.csv; do
  cmp -s "$work/one/$f" "$work/two/$f" || fail "$f differs between 1 and 2 threads"
done
grep -q "Monte Carlo: 3 seeds per true mass (--seed 5 + 0 .. 2)" "$work/log1" ||
  fail "no header line: $(cat "$work/log1")"
grep -q "sliding_surface reports no uncertainty" "$work/log1" ||
  fail "no statement that the sliding-surface filter reports no uncertainty"

# The single run with --seed=6 is run 2 of the Monte Carlo.
"$binary" "${common[@]/--seed=5/--seed=6}" --out_dir="$work/single" > "$work/log3" 2>&1 ||
  fail "single run exited non-zero: $(cat "$work/log3")"

python3 - "$work/one" "$work/single/case_mass1.csv" <<'PY' || fail "Monte Carlo outputs inconsistent"
import csv, json, math, sys
folder, single_csv = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(folder + "/monte_carlo_runs.csv")))
# Each run's intervals (masses x seeds x filters x (e, v)) and its 10 error and jump measures per
# filter (truth nan: outside the coverage statistics).
runs = [r for r in rows if "_at_" in r["parameter"]]
assert len(runs) == 2 * 3 * 2 * 2, len(runs)
measure_rows = [r for r in rows if "_at_" not in r["parameter"]]
assert len(measure_rows) == 2 * 3 * 2 * 10, len(measure_rows)
assert all(r["truth"] == "nan" for r in measure_rows)
for r in runs:
    if r["estimator"] == "sliding_surface":
        assert r["reported_std"] == "nan", r
    else:
        assert float(r["reported_std"]) > 0, r
single = [r for r in csv.DictReader(open(single_csv)) if abs(float(r["t"]) - 0.9) < 1e-9][0]
for filt, col in (("sliding_surface", "sl_e"), ("linear_optimal", "of_e")):
    run = [r for r in runs if r["seed"] == "6" and r["estimator"] == filt and
           r["parameter"] == "friction_n_at_0.9s" and r["scenario"] == "true_mass_1kg"][0]
    assert float(run["estimate"]) == float(single[col]), (run, single[col])
    assert float(run["truth"]) == float(single["w"]), (run, single["w"])
measures = list(csv.DictReader(open(folder + "/monte_carlo_measures.csv")))
assert len(measures) == 2 * 2 * 10, len(measures)
for m in measures:
    assert m["runs"] == "3", m
    assert float(m["p25"]) <= float(m["median"]) <= float(m["p75"]), m
summary = json.load(open(folder + "/summary.json"))
assert summary["monte_carlo"]["seeds"] == 3
assert "none reported" in summary["monte_carlo"]["sliding_surface_uncertainty"]
PY

# A single run quotes the Monte Carlo's coverage.csv beside the optimal filter's intervals (3 runs,
# too few to judge), and the shipped coverage at the default settings (50 runs).
"$binary" "${common[@]}" --coverage_times_s=0.9 --coverage_csv="$work/one/coverage.csv" \
  --out_dir="$work/quoted" > "$work/log4" 2>&1 || fail "quoting run exited non-zero: $(cat "$work/log4")"
grep -q "^true_mass_1kg linear_optimal friction_n_at_0.9s: .*coverage .* over 3 runs: too few to judge" \
  "$work/log4" || fail "no quoted coverage: $(cat "$work/log4")"
grep -q "sliding_surface: no intervals (the filter reports no uncertainty)" "$work/log4" ||
  fail "no statement on the sliding-surface filter's intervals"
"$binary" --figures=false --out_dir="$work/shipped" > "$work/log5" 2>&1 ||
  fail "default run exited non-zero: $(cat "$work/log5")"
grep -q "^true_mass_1kg linear_optimal friction_n_at_1.35s: .*over 50 runs" "$work/log5" ||
  fail "the default run does not quote the shipped coverage: $(cat "$work/log5")"
"$binary" "${common[@]}" --coverage_times_s=0.9 --out_dir="$work/withheld" > "$work/log6" 2>&1 ||
  fail "short run exited non-zero: $(cat "$work/log6")"
grep -q "coverage not measured for this setting (measured by friction_filter_study at the defaults, this run at .*--sample_period_s=0.002" "$work/log6" ||
  fail "the shipped coverage is quoted for other settings: $(cat "$work/log6")"

# expect_error CODE EXPECTED_SUBSTRING ARGS...: exit code, message, and no outputs.
expect_exit 2 "--monte_carlo_threads must be >= 0" "${common[@]}" --monte_carlo=2 \
  --monte_carlo_threads=-1
expect_exit 2 "--seed must be >= 0 with --monte_carlo" --figures=false --monte_carlo=2 --seed=-1
expect_exit 2 "--coverage_times_s: 'x' is not a number" "${common[@]}" --monte_carlo=2 \
  --coverage_times_s=x

expect_exit 2 "--coverage_csv is quoted by a single run" "${common[@]}" --monte_carlo=2 \
  --coverage_csv="$work/one/coverage.csv"
expect_exit 2 "--coverage_csv: " "${common[@]}" --coverage_csv="$work/missing.csv"

finish friction_filter_study_monte_carlo
