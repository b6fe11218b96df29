#!/usr/bin/env bash
# End-to-end checks of the xy_table_study program: a short good run on simulated data writes
# every output and prints the tables; the same through --measurements_csv (the simulated record
# written as CSV) works; bad flags and bad files exit 2 with a message naming the flag or the
# file and line, and leave nothing behind.
# Usage: xy_table_study_cli_test.sh PATH/TO/xy_table_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"

# A short good run: 0.6 s identification interval, one scanned weight, no evaluation, no figures.
short=(--figures=false --duration_s=1.4 --interval_start_s=0.4 --interval_end_s=1.0
       --acceleration_weight_sweep=2.5e-5 --evaluation=false --max_iterations=60)
"$binary" --out_dir="$work/out" "${short[@]}" > "$work/log" 2>&1 ||
  fail "good run exited non-zero: $(cat "$work/log")"
for f in tables.md summary.json interval.csv sweep.csv evaluation.csv; do
  [[ -e "$work/out/$f" ]] || fail "good run did not write $f"
done
grep -q "^| rigid |" "$work/log" || fail "no rigid row in the table: $(cat "$work/log")"
grep -q "^| flexible_with_accelerations |" "$work/log" || fail "no stage-3 row: $(cat "$work/log")"
grep -q '"residual_percent_of_range"' "$work/out/summary.json" || fail "summary lacks residuals"
# The reported σ are the HAC sandwich's (bandwidth, fixed-b c), with the white sandwich's variance
# factor of every term of the functional beside them.
python3 - "$work/out/summary.json" <<'PY' || fail "summary lacks the HAC sandwich covariance"
import json, math, sys
for stage in json.load(open(sys.argv[1]))["stages"]:
    assert stage["covariance"] == "hac", stage["covariance"]
    hac = stage["hac"]
    b = hac["bandwidth_fraction"]
    assert hac["lags"] >= 1 and 0 < b < 1, hac
    c = 1.959963984540054 + 2.9694 * b + 0.4160 * b * b - 0.5324 * b * b * b
    assert abs(stage["interval_critical_value_95"] - c) < 1e-9, (stage["interval_critical_value_95"], c)
    # The white-noise reference of every parameter's HAC σ and the ratio to it.
    assert hac["white_reference_draws"] == 64, hac
    names = stage["estimate"].keys()
    for name in names:
        ref, excess = hac["white_reference_standard_deviation"][name], hac["excess"][name]
        ratio = stage["standard_deviation"][name] / ref
        assert ref > 0 and 0.1 < excess < 20 and abs(ratio - excess) < 1e-9 * excess, (name, hac)
    terms = stage["sandwich_term_variance"]
    assert terms["V.z.phi1_measured"] > 0 and terms["W.v.phi1"] > 0, terms
    # Terms weighted 0 have no rows and no variance: the accelerations but in stage 3, the
    # effector positions in the rigid stage.
    assert (terms["V.z.acceleration_along"] is None) == (stage["stage"] != "flexible_with_accelerations"), terms
    assert (terms["V.z.x_effector"] is None) == (stage["stage"] == "rigid"), terms
PY
grep -q "^± is the HAC sandwich σ" "$work/out/tables.md" || fail "tables.md does not name the HAC sandwich"
grep -q "^HAC σ / the HAC σ of white errors through the same fit .*: rigid J1 [0-9.]*" \
  "$work/out/tables.md" || fail "tables.md does not give the HAC σ over its white-noise reference"
# Each stage solves first at 10, 4 and 2 times the friction smoothing (the continuation).
grep -q "^| rigid |.*| [0-9]* (+[0-9]* continuation) |" "$work/log" ||
  fail "the rigid row does not give the continuation's iterations: $(cat "$work/log")"
check "continuation's smoothing steps" "a == 3" "$(python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["stages"][0]["solver"]["continuation"]))' "$work/out/summary.json")"
grep -q '"hamiltonian_rate_per_s"' "$work/out/summary.json" ||
  fail "summary lacks the acceleration-weight scan"
head -1 "$work/out/interval.csv" | grep -q "flexible_with_accelerations_model_a_orth" ||
  fail "interval.csv lacks the model accelerations"
head -1 "$work/out/interval.csv" | grep -q "^t,x_e_measured,y_e_measured," ||
  fail "unexpected interval.csv header: $(head -1 "$work/out/interval.csv")"
ls -A "$work/out" | grep -q staging && fail "staging folder left behind"
# The default truth is drawn away from the thesis's values; --truth=thesis keeps them.
grep -q '"truth": "drawn (seed 1, spread 0.2)"' "$work/out/summary.json" ||
  fail "default run's truth is not the drawn one"
true_j1() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["true_system"]["J1"])' "$1"; }
check "drawn J1 differs from the thesis's 2.099e-3" "a != 0.002099 && a > 0.0016 && a < 0.0026" \
  "$(true_j1 "$work/out/summary.json")"
grep -q "^| truth of the simulation |" "$work/log" || fail "no truth row: $(cat "$work/log")"
# The shipped coverage was measured at the default flags: this short run says so instead.
grep -q "^| flexible |.*| coverage not measured for this setting" "$work/log" ||
  fail "the shipped coverage is quoted for other settings: $(cat "$work/log")"
grep -q "measured by xy_table_study at --covariance=hac, this run at --covariance=hac .*--interval_end_s=1" \
  "$work/out/summary.json" "$work/log" || fail "the other settings are not named"
"$binary" --out_dir="$work/thesis" "${short[@]}" --truth=thesis --acceleration_weight_sweep= \
  --model_transverse_mass_scale=1.1 --viscous_friction=0.3 > "$work/log" 2>&1 ||
  fail "thesis-truth run exited non-zero: $(cat "$work/log")"
check "--truth=thesis keeps the thesis's J1" "a == 0.002099" "$(true_j1 "$work/thesis/summary.json")"
grep -q "coverage not measured for this setting" "$work/log" ||
  fail "mismatch run quotes the shipped coverage: $(cat "$work/log")"
check "--viscous_friction=0.3 gives c1 = 0.3 x 0.461 / 50" "a > 0.0027659 && a < 0.0027661" \
  $(grep -o '"viscous_friction1": [0-9.e-]*' "$work/thesis/summary.json" | cut -d' ' -f2)

# A 2-seed Monte Carlo (2 threads) writes coverage.csv with a row per stage and parameter, the
# acceleration effect in summary.json; the same with 1 thread gives the same coverage.csv.
mc=(--monte_carlo=2 --monte_carlo_acceleration_weights=0.25 "${short[@]}")
"$binary" --out_dir="$work/mc" "${mc[@]}" --monte_carlo_threads=2 > "$work/log" 2>&1 ||
  fail "Monte Carlo exited non-zero: $(cat "$work/log")"
grep -v '^#' "$work/mc/coverage.csv" | head -1 |
  grep -q "^estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated," ||
  fail "unexpected coverage.csv header: $(grep -v '^#' "$work/mc/coverage.csv" | head -1)"
# A single run at the Monte Carlo's flags quotes its coverage.
"$binary" --out_dir="$work/quoted" "${short[@]}" --coverage_csv="$work/mc/coverage.csv" \
  > "$work/log_quoted" 2>&1 || fail "quoting run exited non-zero: $(cat "$work/log_quoted")"
grep -q "^| flexible |.*| coverage J1 " "$work/log_quoted" ||
  fail "no measured coverage beside the flexible stage: $(cat "$work/log_quoted")"
for row in "rigid,J1" "flexible,k" "flexible_sandwich,k" "flexible_with_accelerations,k" \
           "flexible_with_accelerations_w0.25,k"; do
  grep -q "^$row," "$work/mc/coverage.csv" || fail "coverage.csv lacks $row"
done
check "flexible k: 2 runs (converged or not), none covered (k is spindle + belts in series)" \
  "a + b == 2 && c == 0" \
  $(awk -F, '$1 == "flexible" && $2 == "k" { print $3, $14, $16 }' "$work/mc/coverage.csv")
[[ -e "$work/mc/monte_carlo_runs.csv" ]] || fail "Monte Carlo did not write monte_carlo_runs.csv"
grep -q '"acceleration_effect_percent"' "$work/mc/summary.json" ||
  fail "summary lacks the acceleration effect"
grep -q "thesis (2.5e-5, real data)" "$work/log" || fail "no thesis row in the effect table"
"$binary" --out_dir="$work/mc1" "${mc[@]}" --monte_carlo_threads=1 > "$work/log" 2>&1 ||
  fail "1-thread Monte Carlo exited non-zero: $(cat "$work/log")"
cmp -s "$work/mc/coverage.csv" "$work/mc1/coverage.csv" ||
  fail "coverage.csv depends on the thread count"

# The real-data path: the measured channels of the good run as a CSV.
python3 - "$work/out/interval.csv" "$work/meas.csv" <<'PY' || fail "could not build the CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = ["t", "x_e_measured", "y_e_measured", "a_along_measured", "a_orth_measured",
        "phi1_measured", "phi2_measured", "i1_measured", "i2_measured"]
with open(sys.argv[2], "w") as f:
    f.write("t,x_effector,y_effector,acceleration_along,acceleration_orthogonal,phi1,phi2,i1,i2\n")
    for r in rows:
        f.write(",".join(r[c] for c in cols) + "\n")
PY
"$binary" --out_dir="$work/real" --measurements_csv="$work/meas.csv" "${short[@]}" \
  > "$work/log" 2>&1 || fail "CSV run exited non-zero: $(cat "$work/log")"
grep -q "measured data" "$work/log" || fail "CSV run did not report measured data"
grep -q '"true_system"' "$work/real/summary.json" && fail "CSV run reports a true system"

# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
expect_error() { local expected="$1"; shift; expect_exit 2 "$expected" --figures=false "$@"; }
expect_error "--interval_start_s/--interval_end_s" --interval_start_s=2 --interval_end_s=1
expect_error "--sample_period_s must be in (0, 0.01]" --sample_period_s=0
expect_error "--duration_s must exceed --interval_end_s" --duration_s=3
expect_error "--noise_scale must be >= 0" --noise_scale=-1
expect_error "--transcription must be shooting or collocation" --transcription=euler
expect_error "--acceleration_weight_sweep: 'x' is not a number >= 0" --acceleration_weight_sweep=1,x
expect_error "--max_iterations must be >= 1" --max_iterations=0
expect_error "--trust_region must be dogleg or levenberg_marquardt" --trust_region=lm
expect_error "--covariance must be hac, sandwich or variance_factor" --covariance=white
expect_error "--smoothing_continuation: the factors must be > 1 and decreasing" \
  --smoothing_continuation=4,10
expect_error "--smoothing_continuation: the factors must be > 1 and decreasing" \
  --smoothing_continuation=10,1
expect_error "--smoothing_continuation: 'z' is not a number" --smoothing_continuation=10,z
expect_error "--friction_smoothing must be a number > 0" --friction_smoothing=0
expect_error "--first_order_r0_factor must be a number > 0" --first_order_r0_factor=-1
expect_error "--first_order_damping must be in (0, 1]" --first_order_damping=1.5
expect_error "--circle_csv needs --measurements_csv" --circle_csv=foo.csv
expect_error "--truth must be drawn or thesis" --truth=nominal
expect_error "--truth_spread must be in [0, 0.5]" --truth_spread=0.7
expect_error "--truth_seed must be >= 0" --truth_seed=-1
expect_error "--model_transverse_mass_scale must be in [0.5, 1.5]" --model_transverse_mass_scale=2
expect_error "--viscous_friction must be in [0, 2]" --viscous_friction=-0.1
expect_error "--monte_carlo must be >= 0" --monte_carlo=-1
expect_error "--monte_carlo_threads must be >= 0" --monte_carlo_threads=-2
expect_error "--monte_carlo_acceleration_weights: 'y' is not a number >= 0" \
  --monte_carlo=2 --monte_carlo_acceleration_weights=1,y
expect_error "--coverage_csv is read by the single run" --monte_carlo=2 --coverage_csv=c.csv
expect_error "--coverage_csv" --coverage_csv="$work/missing_coverage.csv"
expect_error "unexpected argument 'extra'" extra
expect_error "missing.csv" --measurements_csv="$work/missing.csv"
printf 't,x\n0,1\n' > "$work/header.csv"
expect_error "header.csv" --measurements_csv="$work/header.csv"
{ head -1 "$work/meas.csv"; sed -n 2,40p "$work/meas.csv"; sed -n 2p "$work/meas.csv"; } > "$work/time.csv"
expect_error "time not strictly increasing" --measurements_csv="$work/time.csv" \
  --interval_start_s=0.4 --interval_end_s=1.0
expect_error "holds" --measurements_csv="$work/meas.csv" --interval_start_s=5 --interval_end_s=6
expect_error "--truth applies to a simulated record" --measurements_csv="$work/meas.csv" \
  --truth=thesis
expect_error "--monte_carlo applies to a simulated record" --measurements_csv="$work/meas.csv" \
  --monte_carlo=2

finish xy_table_study
