#!/usr/bin/env bash
# End-to-end checks of the rt_manipulator_study program: the default run writes every
# output and meets the study's claims (payload near 2 kg, closer with weighting 2, the phi
# residual following the elastic deformation); the same record through --measurements_csv gives
# the same estimates; bad flags and bad files exit 2 with a message naming the flag or the file
# and line, and leave nothing behind.
# Usage: rt_manipulator_study_cli_test.sh PATH/TO/rt_manipulator_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"
# json FILE EXPRESSION: a value of summary.json (python3 is needed for the figures anyway).
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

"$binary" --out_dir="$work/out" --figures=false > "$work/log" 2>&1 ||
  fail "good run exited non-zero: $(cat "$work/log")"
for f in rt_study.csv summary.json; do
  [[ -s "$work/out/$f" ]] || fail "good run did not write $f"
done
grep -q "^weighting2 " "$work/log" || fail "no weighting2 row in the table: $(cat "$work/log")"
ls -A "$work/out" | grep -q staging && fail "staging folder left behind"
s="$work/out/summary.json"
w1=$(json "$s" "d['weighting1']['smoother_payload_kg']")
w2=$(json "$s" "d['weighting2']['smoother_payload_kg']")
check "weighting 2 smoother payload within 1 % of 2 kg" "a > 1.98 && a < 2.02" "$w2"
check "weighting 2 closer to 2 kg than weighting 1" "(a - 2) ^ 2 < (b - 2) ^ 2" "$w2" "$w1"
check "weighting 2 filter payload within 2 % at the end" "a > 1.96 && a < 2.04" \
  "$(json "$s" "d['weighting2']['filter_final_payload_kg']")"
check "phi residual follows the deformation" "a > 0.9" \
  "$(json "$s" "d['phi_residual_vs_deformation']['correlation']")"

# The smoother's payload sd follows the data (the HAC sandwich): larger with more noise. The
# all-trusted estimate's model error (+0.21 kg) is inside its wide HAC interval (± c sd, the
# fixed-b c); the white sandwich's interval excludes 2 kg, and the run says so.
check "weighting 1's HAC interval holds its model error" "a == 1 && b > 0.1 && c > 1.96" \
  "$(json "$s" "int(d['weighting1']['smoother_interval_covers_truth'])")" \
  "$(json "$s" "d['weighting1']['smoother_payload_sd_hac_kg']")" \
  "$(json "$s" "d['weighting1']['smoother_payload_interval_critical_value_95']")"
# The HAC σ against its white-noise reference: weighting 1's width is the flexibility's error
# persisting in the residuals (6.4–6.7 over 50 seeds), weighting 2's the fit's own (0.98–1.01).
check "HAC excess: weighting 1 well above 1, weighting 2 about 1" "a > 3 && b > 0.7 && b < 1.4" \
  "$(json "$s" "d['weighting1']['smoother_payload_hac_excess']")" \
  "$(json "$s" "d['weighting2']['smoother_payload_hac_excess']")"
"$binary" --out_dir="$work/white" --covariance=sandwich --figures=false > "$work/log" 2>&1 ||
  fail "sandwich run exited non-zero"
check "weighting 1 labelled biased under the white sandwich" "a == 0" \
  "$(json "$work/white/summary.json" "int(d['weighting1']['smoother_interval_covers_truth'])")"
grep -q "^weighting1 .*biased: the 95 % interval excludes the true 2 kg" "$work/log" ||
  fail "weighting 1's bias not labelled on the console: $(cat "$work/log")"
"$binary" --out_dir="$work/noisy" --noise_scale=100 --figures=false > /dev/null 2>&1 ||
  fail "noisy run exited non-zero"
check "payload sd grows with the noise" "b > 2 * a" \
  "$(json "$s" "d['weighting2']['smoother_payload_sd_kg']")" \
  "$(json "$work/noisy/summary.json" "d['weighting2']['smoother_payload_sd_kg']")"

# --monte_carlo: a few seeds, coverage.csv with the required columns and finite values.
"$binary" --out_dir="$work/mc" --monte_carlo=3 --noise_scale=10 --figures=false \
  > "$work/mclog" 2>&1 || fail "Monte Carlo run exited non-zero: $(cat "$work/mclog")"
grep -v '^#' "$work/mc/coverage.csv" | head -1 |
  grep -q "^estimator,parameter,runs,bias,spread,mean_reported_std,coverage_95,calibrated," ||
  fail "unexpected coverage.csv header: $(grep -v '^#' "$work/mc/coverage.csv" | head -1)"
awk -F, '$1 == "smoother_weighting2" { print $3, $4, $5, $6, $7, $8 }' "$work/mc/coverage.csv" |
  { read -r runs bias spread sd coverage calibrated
    check "Monte Carlo: 3 runs, finite statistics, not calibrated on 3 runs" \
      "a == 3 && b > 0 && c > 0 && d == 0" "$runs" "$spread" "$sd" "$calibrated"
    [[ "$bias $spread $sd $coverage" != *nan* ]] || fail "Monte Carlo: a NaN statistic"; }
[[ $(wc -l < "$work/mc/monte_carlo_runs.csv") -eq 37 ]] ||
  fail "monte_carlo_runs.csv should hold 3 runs x (10 estimates + 2 HAC excess measures)"
# The reported sd is the HAC sandwich's; the white sandwich's and the variance factor's have rows
# of their own.
for form in sandwich variance_factor; do
  awk -F, -v e="smoother_weighting2_$form" '$1 == e { print $3, $6 }' "$work/mc/coverage.csv" |
    { read -r runs sd
      check "Monte Carlo: the $form row" "a == 3 && b > 0" "$runs" "$sd"; }
done
grep -q "smoother_weighting1 payload_kg" "$work/mclog" || fail "no coverage table on the console"
"$binary" --out_dir="$work/mc1" --monte_carlo=3 --noise_scale=10 --monte_carlo_threads=1 \
  --figures=false > /dev/null 2>&1 || fail "one-thread Monte Carlo run exited non-zero"
cmp -s "$work/mc/monte_carlo_runs.csv" "$work/mc1/monte_carlo_runs.csv" ||
  fail "the Monte Carlo runs depend on the thread count"

# The real-data path: the measured channels of the good run as a CSV.
python3 - "$work/out/rt_study.csv" "$work/meas.csv" <<'PY' || fail "could not build the CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = ["t", "r_measured", "phi_measured", "radial_acc_measured", "tangential_acc_measured",
        "F_measured", "T_measured"]
with open(sys.argv[2], "w") as f:
    f.write("t,r,phi,radial_acceleration,tangential_acceleration,F,T\n")
    for r in rows:
        f.write(",".join(r[c] for c in cols) + "\n")
PY
# Model mismatch: the estimators' link mass +10 % moves the payload by about -0.9 kg; stated.
"$binary" --out_dir="$work/mismatch" --model_link_mass_scale=1.1 --figures=false > "$work/log" 2>&1 ||
  fail "mismatched run exited non-zero: $(cat "$work/log")"
grep -q "^MODEL MISMATCH (the simulator keeps the truth): the estimators' link mass ml x1.1" \
  "$work/log" || fail "the console does not state the mismatch: $(cat "$work/log")"
python3 - "$work/mismatch/summary.json" <<'PY' || fail "mismatched payload not moved, or not stated"
import json, sys
s = json.load(open(sys.argv[1]))
assert "link mass ml x1.1" in s["flags"]["model_mismatch"], s["flags"]
w2 = s["weighting2"]
assert abs(w2["smoother_payload_kg"] - 1.077) < 0.02, w2["smoother_payload_kg"]
assert w2["smoother_interval_covers_truth"] is False and "biased" in w2["smoother_note"], w2
PY
"$binary" --out_dir="$work/real" --measurements_csv="$work/meas.csv" --figures=false \
  > "$work/log" 2>&1 || fail "CSV run exited non-zero: $(cat "$work/log")"
grep -q "measured record" "$work/log" || fail "CSV run did not report measured data"
r="$work/real/summary.json"
for w in weighting1 weighting2; do
  check "CSV run: $w smoother payload equals the simulated run's" "a == b" \
    "$(json "$r" "d['$w']['smoother_payload_kg']")" "$(json "$s" "d['$w']['smoother_payload_kg']")"
done
grep -q '"true_payload_kg"' "$r" && fail "CSV run reports a true payload"
head -1 "$work/real/rt_study.csv" | grep -q "deformation" && fail "CSV run writes a deformation"

# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
expect_error() { local expected="$1"; shift; expect_exit 2 "$expected" --figures=false "$@"; }
expect_error "--sample_period_s must be in (0, 0.01]" --sample_period_s=0
expect_error "--duration_s must be in [0.2, 10]" --duration_s=20
expect_error "--stiffness must be > 0" --stiffness=-1
expect_error "--noise_scale must be >= 0" --noise_scale=-1
expect_error "--deweight must be > 0" --deweight=0
expect_error "--covariance must be hac, sandwich or variance_factor" --covariance=scaled
expect_error "--monte_carlo must be >= 0" --monte_carlo=-1
expect_error "--monte_carlo needs --noise_scale > 0" --monte_carlo=3
expect_error "--monte_carlo_threads must be >= 0" --monte_carlo=3 --noise_scale=1 \
  --monte_carlo_threads=-2
expect_error "--monte_carlo needs the simulation" --monte_carlo=3 \
  --measurements_csv="$work/meas.csv"
expect_error "--monte_carlo" --monte_carlo=abc
expect_error "unexpected argument 'extra'" extra
expect_error "--link_mass is used only with --measurements_csv" --link_mass=3
expect_error "--model_link_mass_scale must be a number > 0" --model_link_mass_scale=0
expect_error "--model_joint_inertia_scale must be a number > 0" --model_joint_inertia_scale=nan
expect_error "--stiffness is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --stiffness=100
expect_error "--joint_inertia must be a number > 0" \
  --measurements_csv="$work/meas.csv" --joint_inertia=0
expect_error "missing.csv" --measurements_csv="$work/missing.csv"
printf 't,r,phi\n0,1,2\n' > "$work/header.csv"
expect_error "header.csv" --measurements_csv="$work/header.csv"
head -15 "$work/meas.csv" > "$work/short.csv"
expect_error "expected at least 20 data rows, got 14" --measurements_csv="$work/short.csv"
{ head -40 "$work/meas.csv"; sed -n 2p "$work/meas.csv"; } > "$work/time.csv"
expect_error "time.csv:41:1: time not strictly increasing" --measurements_csv="$work/time.csv"

finish rt_manipulator_study
