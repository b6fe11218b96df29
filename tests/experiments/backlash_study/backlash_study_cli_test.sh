#!/usr/bin/env bash
# End-to-end checks of the backlash_study program: a short good run writes every output and
# prints the table; bad flags exit 2 with a message naming the flag and leave nothing behind.
# Usage: backlash_study_cli_test.sh PATH/TO/backlash_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"

# A short good run (2000 samples, small bootstrap, no Q_pp scan, no figures).
"$binary" --out_dir="$work/out" --figures=false --samples=2000 --bootstrap=20 \
  --qpp_factors= --cases=sim2,linear > "$work/log" 2>&1 ||
  fail "good run exited non-zero: $(cat "$work/log")"
for f in results.csv summary.json sim2_series.csv linear_series.csv; do
  [[ -s "$work/out/$f" ]] || fail "good run did not write $f"
done
head -1 "$work/out/results.csv" | grep -q "^case,estimator,b_true,b_estimate,b_lower,b_upper,K_true," ||
  fail "unexpected results.csv header: $(head -1 "$work/out/results.csv")"
grep -q "^sim2 *smoother " "$work/log" || fail "no sim2 smoother row in the table: $(cat "$work/log")"
grep -q '"verdict"' "$work/out/summary.json" || fail "summary.json lacks the verdicts"
ls -A "$work/out" | grep -q staging && fail "staging folder left behind"

# The acceptance on the short record (0.2 s of Simulation 2, seed covariances): the
# shape-constrained smoother within 10 % on b and K with intervals that cover the truth, the
# smoothers beating the SAEKF in tau_K error, and the linear spring backlash-free for every
# estimator.
field() {  # field CASE ESTIMATOR COLUMN_NAME
  awk -F, -v c="$1" -v e="$2" -v name="$3" \
    'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
     $1 == c && $2 == e { print $col[name] }' "$work/out/results.csv"
}
b=$(field sim2 smoother_shape b_estimate); k=$(field sim2 smoother_shape K_estimate)
check "sim2 smoother_shape b within 10 %" "a > 0.09 && a < 0.11" "$b"
check "sim2 smoother_shape K within 10 %" "a > 71.1 && a < 86.9" "$k"
check "sim2 smoother_shape b interval covers 0.1" "a <= 0.1 && b >= 0.1" \
  "$(field sim2 smoother_shape b_lower)" "$(field sim2 smoother_shape b_upper)"
check "sim2 smoother_shape K interval covers 79" "a <= 79 && b >= 79" \
  "$(field sim2 smoother_shape K_lower)" "$(field sim2 smoother_shape K_upper)"
check "sim2 tau_K error: shape < smoother < saekf" "a < b && b < c" \
  "$(field sim2 smoother_shape tau_rms_error)" "$(field sim2 smoother tau_rms_error)" \
  "$(field sim2 saekf tau_rms_error)"
for e in saekf smoother smoother_q0 smoother_shape; do
  [[ "$(field linear $e backlash_detected)" == "0" ]] ||
    fail "linear spring: $e reports backlash"
done
check "linear smoother_shape K within 2 %" "a > 65.66 && a < 68.34" \
  "$(field linear smoother_shape K_estimate)"

# The real-data path: the sim2 record of the good run (time, torque, both measured velocities)
# as a CSV gives the same estimates as the simulated case, and nothing that needs a truth.
python3 - "$work/out/sim2_series.csv" "$work/meas.csv" "$work/motor.csv" <<'PY' ||
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as both, open(sys.argv[3], "w") as motor:
    both.write("# the sim2 record of backlash_study_cli_test.sh\nt,u,x3,x4\n")
    motor.write("t,u,x3\n")
    for r in rows:
        both.write(",".join(r[c] for c in ["t", "u", "y_x3", "y_x4"]) + "\n")
        motor.write(",".join(r[c] for c in ["t", "u", "y_x3"]) + "\n")
PY
  fail "could not build the CSV"
"$binary" --out_dir="$work/real" --figures=false --bootstrap=20 --qpp_factors=1,10 \
  --measurements_csv="$work/meas.csv" > "$work/log" 2>&1 ||
  fail "CSV run exited non-zero: $(cat "$work/log")"
for f in results.csv summary.json measured_series.csv qpp_sweep.csv qpp_sweep_measured.csv; do
  [[ -s "$work/real/$f" ]] || fail "CSV run did not write $f"
done
measured_field() {  # measured_field ESTIMATOR COLUMN_NAME
  awk -F, -v e="$1" -v name="$2" \
    'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
     $1 == "measured" && $2 == e { print $col[name] }' "$work/real/results.csv"
}
check "CSV run: smoother_shape b and K equal the simulated case's" "a == b && c == d" \
  "$(measured_field smoother_shape b_estimate)" "$(field sim2 smoother_shape b_estimate)" \
  "$(measured_field smoother_shape K_estimate)" "$(field sim2 smoother_shape K_estimate)"
[[ "$(measured_field smoother_shape b_true)" == "nan" ]] || fail "CSV run reports a true b"
head -1 "$work/real/measured_series.csv" | grep -q "tau_true" && fail "CSV run writes tau_true"
grep -q '"true": null' "$work/real/summary.json" || fail "summary.json should have no true system"
[[ $(grep -c "^measured,1000," "$work/real/qpp_sweep.csv") -eq 4 ]] ||
  fail "the Q_pp scan did not run on the record: $(cat "$work/real/qpp_sweep.csv")"
"$binary" --out_dir="$work/motor" --figures=false --bootstrap=20 --qpp_factors= \
  --smoother_q0=false --measurements_csv="$work/motor.csv" --qxx=0,0,0,0 > "$work/log" 2>&1 ||
  fail "motor-velocity-only CSV run exited non-zero: $(cat "$work/log")"
grep -q '"arm_velocity_measured": false' "$work/motor/summary.json" ||
  fail "motor-only CSV run: arm velocity reported as measured"

# A short Q_pp scan writes the long table and the per-case wide table.
"$binary" --out_dir="$work/sweep" --figures=false --samples=1000 --bootstrap=20 --cases=sim2 \
  --sweep_cases=sim2 --qpp_factors=1,10 --smoother_q0=false > "$work/log" 2>&1 ||
  fail "scan run exited non-zero: $(cat "$work/log")"
[[ $(grep -c "^sim2,1000," "$work/sweep/qpp_sweep.csv") -eq 3 ]] ||
  fail "qpp_sweep.csv lacks the Q_pp = 1000 rows: $(cat "$work/sweep/qpp_sweep.csv")"
[[ $(wc -l < "$work/sweep/qpp_sweep_sim2.csv") -eq 3 ]] ||
  fail "qpp_sweep_sim2.csv should have a header and 2 rows"

# --monte_carlo: a few seeds of short records, coverage.csv with the required columns and
# finite statistics for every estimator of both cases; then that file quoted by a single run.
"$binary" --out_dir="$work/mc" --figures=false --samples=1000 --bootstrap=20 \
  --cases=sim2,linear --monte_carlo=3 --monte_carlo_threads=2 > "$work/mclog" 2>&1 ||
  fail "Monte Carlo run exited non-zero: $(cat "$work/mclog")"
grep -v '^#' "$work/mc/coverage.csv" | head -1 |
  grep -q "^estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated,scenario," ||
  fail "unexpected coverage.csv header: $(grep -v '^#' "$work/mc/coverage.csv" | head -1)"
[[ $(awk -F, '!/^#/ && $9 == "sim2"' "$work/mc/coverage.csv" | wc -l) -eq 8 ]] ||
  fail "coverage.csv should hold 4 estimators x 2 parameters of sim2"
awk -F, '!/^#/ && $9 == "sim2" && ($3 + $14 != 3 || $4 == "nan" || $5 == "nan" || $8 != 0) {
           print "bad row: " $0; bad = 1 } END { exit bad }' "$work/mc/coverage.csv" ||
  fail "coverage.csv: sim2 rows need 3 runs, finite bias and spread, no calibration on 3 runs"
grep -q "sim2 smoother_shape K_nm_per_rad" "$work/mclog" || fail "no coverage table on the console"
"$binary" --out_dir="$work/mc1" --figures=false --samples=1000 --bootstrap=20 \
  --cases=sim2,linear --monte_carlo=3 --monte_carlo_threads=1 > /dev/null 2>&1 ||
  fail "one-thread Monte Carlo run exited non-zero"
cmp -s "$work/mc/monte_carlo_runs.csv" "$work/mc1/monte_carlo_runs.csv" ||
  fail "the Monte Carlo runs depend on the thread count"
"$binary" --out_dir="$work/quoted" --figures=false --samples=1000 --bootstrap=20 --cases=sim2 \
  --qpp_factors= --coverage_csv="$work/mc/coverage.csv" > "$work/log" 2>&1 ||
  fail "run quoting a coverage file exited non-zero: $(cat "$work/log")"
grep -q "^sim2 *smoother_shape .*| coverage b [0-9.]* ([0-9]*/3)" "$work/log" ||
  fail "the measured coverage is not quoted on the console: $(cat "$work/log")"
head -1 "$work/quoted/results.csv" |
  grep -q ",b_coverage_95,K_coverage_95,b_calibrated,K_calibrated,model_mismatch$" ||
  fail "results.csv lacks the coverage columns"
grep -q '"measured_coverage"' "$work/quoted/summary.json" ||
  fail "summary.json lacks the measured coverage"
grep -q '"exact_model": true' "$work/out/summary.json" ||
  fail "the default run's summary.json should state the exact model"
[[ "$(field sim2 smoother_shape model_mismatch)" == "none" ]] ||
  fail "the default run's results.csv should say model_mismatch none"

# Model mismatch: the estimators' arm inertia +10 % (the simulator keeps the truth). The
# summary, results.csv and console state it, and the coverage measured with the exact model is
# not quoted; a coverage.csv given with --coverage_csv (measured at that setting) is.
"$binary" --out_dir="$work/mismatch" --figures=false --samples=1000 --bootstrap=20 --cases=sim2 \
  --qpp_factors= --smoother_q0=false --model_arm_inertia_scale=1.1 > "$work/log" 2>&1 ||
  fail "mismatched run exited non-zero: $(cat "$work/log")"
grep -q "^MODEL MISMATCH (the simulator keeps the truth): estimators' arm inertia x1.1 " \
  "$work/log" || fail "the console does not state the mismatch: $(cat "$work/log")"
[[ $(grep -c "^sim2 .*| coverage not measured for this setting$" "$work/log") -eq 3 ]] ||
  fail "every mismatched row should withhold the coverage: $(cat "$work/log")"
python3 - "$work/mismatch/summary.json" <<'PY' || fail "mismatched summary.json: see above"
import json, sys
s = json.load(open(sys.argv[1]))
m = s["model_mismatch"]
assert m["exact_model"] is False and m["estimator_model_factors"]["arm_inertia"] == 1.1, m
assert "arm inertia x1.1" in m["description"] and m["unmodelled_effect"] is None, m
assert "not measured for this setting" in s["measured_coverage_note"], s
case = s["cases"]["sim2"]
assert case["model_mismatch"] == m, case["model_mismatch"]
assert abs(case["known_parameters"]["arm_inertia_kgm2"] - 1.1 * 0.001765) < 1e-15, case
assert case["simulated_parameters"]["arm_inertia_kgm2"] == 0.001765, case
for e in ("saekf", "smoother", "smoother_shape"):
    c = case[e]["measured_coverage"]
    assert c["b_rad"] is None and c["K_nm_per_rad"] is None and c["source"] == "", c
    assert "not measured for this setting" in c["note"], c
PY
[[ "$(awk -F, 'NR > 1 { print $NF }' "$work/mismatch/results.csv" | sort -u)" == \
   "estimators' arm inertia x1.1 of the true (+10 %)" ]] ||
  fail "results.csv should name the mismatch: $(cat "$work/mismatch/results.csv")"
"$binary" --out_dir="$work/mismatch_quoted" --figures=false --samples=1000 --bootstrap=20 \
  --cases=sim2 --qpp_factors= --smoother_q0=false --model_arm_inertia_scale=1.1 \
  --coverage_csv="$work/mc/coverage.csv" > "$work/log" 2>&1 ||
  fail "mismatched run quoting a coverage file exited non-zero: $(cat "$work/log")"
grep -q "^sim2 *smoother_shape .*| coverage b [0-9.]* ([0-9]*/3)" "$work/log" ||
  fail "a coverage file given with --coverage_csv is not quoted: $(cat "$work/log")"
# The unmodelled effect (encoder quantisation) in a short Monte Carlo: its summary states it.
"$binary" --out_dir="$work/mc_encoder" --figures=false --samples=1000 --bootstrap=20 \
  --cases=sim2 --smoother_q0=false --monte_carlo=2 --encoder_counts=4096 > "$work/log" 2>&1 ||
  fail "Monte Carlo with an encoder exited non-zero: $(cat "$work/log")"
grep -q "^model mismatch: unmodelled: velocities from 4096-count/rev encoders" "$work/log" ||
  fail "the Monte Carlo console does not state the unmodelled effect: $(cat "$work/log")"
python3 - "$work/mc_encoder/summary.json" <<'PY' || fail "encoder Monte Carlo summary.json"
import json, sys
m = json.load(open(sys.argv[1]))["model_mismatch"]
assert m["exact_model"] is False and m["unmodelled_effect"]["counts_per_revolution"] == 4096, m
PY

# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
expect_error() { local expected="$1"; shift; expect_exit 2 "$expected" --figures=false "$@"; }
expect_error "--cases: unknown case 'sim3'" --cases=sim3
expect_error "--cases: give at least one case" --cases=
expect_error "--qpp_factors: '-1' is not a positive number" --qpp_factors=-1
expect_error "--qpp_factors: 'x' is not a positive number" --qpp_factors=1,x
expect_error "--sweep_cases: unknown case 'real'" --sweep_cases=real
expect_error "--samples must be 0 (case default) or >= 100" --samples=10
expect_error "--bootstrap must be >= 20" --bootstrap=5
expect_error "--fit_threads must be >= 0" --fit_threads=-2
expect_error "--rk4_steps must be >= 1" --rk4_steps=0
expect_error "--refine_radius must be >= 0" --refine_radius=-1
expect_error "--shape_function_tolerance must be in (0, 1)" --shape_function_tolerance=0
expect_error "--shape_curve: unknown curve point 'end'" --shape_curve=end
expect_error "--shape_hold: unknown hold 'second'" --shape_hold=second
expect_error "--shape_curve applies to --shape_hold=zero only" --shape_curve=node
expect_error "--prbs_amplitude" --prbs_amplitude=0
expect_error "unexpected argument 'extra'" extra
expect_error "--monte_carlo must be >= 0" --monte_carlo=-3
expect_error "--monte_carlo" --monte_carlo=x
expect_error "--monte_carlo_threads must be >= 0" --monte_carlo=2 --monte_carlo_threads=-1
printf 'estimator,parameter\n' > "$work/coverage.csv"
expect_error "coverage.csv:1: not a coverage.csv header" --coverage_csv="$work/coverage.csv"
expect_error "--coverage_csv" --coverage_csv="$work/missing_coverage.csv"
# Bad records and flags of the real-data path.
expect_error "missing.csv" --measurements_csv="$work/missing.csv"
printf 't,u,x2\n0,1,2\n' > "$work/header.csv"
expect_error "header.csv:1: expected the header t,u,x3" --measurements_csv="$work/header.csv"
head -50 "$work/meas.csv" > "$work/short.csv"
expect_error "expected at least 100 data rows, got 48" --measurements_csv="$work/short.csv"
{ head -100 "$work/meas.csv"; sed -n 3,4p "$work/meas.csv"; } > "$work/order.csv"
expect_error "order.csv:101:1: time not strictly increasing" --measurements_csv="$work/order.csv"
awk -F, 'NR == 60 { $1 = $1 + 0.00004 } { print }' OFS=, "$work/meas.csv" > "$work/jitter.csv"
expect_error "jitter.csv:60:1: time step" --measurements_csv="$work/jitter.csv"
expect_error "--cases is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --cases=sim2
expect_error "--motor_inertia is used only with --measurements_csv" --motor_inertia=0.001
expect_error "--motor_inertia must be a number > 0" \
  --measurements_csv="$work/meas.csv" --motor_inertia=0
expect_error "--qxx: expected 4 comma-separated numbers" --measurements_csv="$work/meas.csv" --qxx=1,2
expect_error "--samples=5000 exceeds the 2000 rows" --measurements_csv="$work/meas.csv" --samples=5000
expect_error "--monte_carlo is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --monte_carlo=2
# Bad model mismatch and unmodelled-effect flags.
expect_error "--model_arm_inertia_scale must be a number > 0" --model_arm_inertia_scale=0
expect_error "--model_arm_inertia_scale must be a number > 0" --model_arm_inertia_scale=-1.1
expect_error "--model_arm_inertia_scale must be a number > 0" --model_arm_inertia_scale=nan
expect_error "--model_arm_inertia_scale" --model_arm_inertia_scale=10%
expect_error "--model_motor_inertia_scale must be a number > 0" --model_motor_inertia_scale=0
expect_error "--model_damping_scale must be a number >= 0" --model_damping_scale=-0.5
expect_error "--model_friction_scale must be a number >= 0" --model_friction_scale=inf
expect_error "--encoder_counts must be >= 0" --encoder_counts=-4096
expect_error "--encoder_counts" --encoder_counts=1.5
expect_error "--model_arm_inertia_scale is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --model_arm_inertia_scale=1.1
expect_error "--encoder_counts is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --encoder_counts=4096

finish backlash_study
