#!/usr/bin/env bash
# End-to-end checks of the measured-record path of scara_study (--measurements_csv): the record
# of a short simulated run, written as a measured CSV (true positions, measured torques), gives
# LS within 1 % of the truth from IRWSM2 kinematics, a torque-prediction row per estimate in
# validation.csv and nothing that needs the truth; likewise with measured velocities in shuffled
# columns. Bad records and simulation flags exit 2 naming the file:line or the flag, and leave
# nothing behind.
# Usage: scara_study_measured_cli_test.sh PATH/TO/scara_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"

# The simulated record (6 s, no sign statistics, no figures).
"$binary" --out_dir="$work/sim" --figures=false --duration_s=6 --seed_repeats=0 > "$work/log" 2>&1 ||
  fail "simulated run exited non-zero: $(cat "$work/log")"

[[ -e "$work/sim/torque_prediction.csv" ]] && fail "simulated run wrote torque_prediction.csv"

# meas.csv: t,q1,q2,d3 from q1..q3 and tau1,tau2,f3 from tau_measured1..3; meas_dq.csv adds the
# velocities qd1..3 as dq1,dq2,dd3, the columns shuffled and an extra column. Both from
# t = 0.5 s on: the closed loop starts with a transient that alternates sample to sample
# (±60 rad/s² at the Nyquist rate), which no differentiator of the sampled positions resolves
# (with it LS is off by 9 % and the UKF loses positive definiteness).
python3 - "$work/sim/record.csv" "$work" <<'PY' || fail "could not build the CSVs"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if float(r["t"]) >= 0.5 - 1e-9]
def write(name, header, columns):
    with open(sys.argv[2] + "/" + name, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r[c] if c in r else "7" for c in columns) + "\n")
write("meas.csv", ["t", "q1", "q2", "d3", "tau1", "tau2", "f3"],
      ["t", "q1", "q2", "q3", "tau_measured1", "tau_measured2", "tau_measured3"])
write("meas_dq.csv", ["f3", "dq1", "t", "q1", "q2", "d3", "tau1", "tau2", "dq2", "extra", "dd3"],
      ["tau_measured3", "qd1", "t", "q1", "q2", "q3", "tau_measured1", "tau_measured2", "qd2",
       "extra", "qd3"])
PY

# check_measured_run DIR VELOCITIES: the outputs of a measured run.
check_measured_run() {
  local dir="$1" velocities="$2"
  for f in record.csv evolution.csv estimates.csv table7.csv validation.csv ekf_diagnosis.csv \
           torque_prediction.csv summary.json; do
    [[ -s "$dir/$f" ]] || fail "$dir: did not write $f"
  done
  ls -A "$dir" | grep -q staging && fail "$dir: staging folder left behind"
  head -1 "$dir/evolution.csv" | grep -q "true_" && fail "$dir: evolution.csv has true_ columns"
  head -1 "$dir/record.csv" | grep -q "q_ref" && fail "$dir: record.csv has a reference"
  head -1 "$dir/torque_prediction.csv" |
    grep -q "^t,tau_measured1,tau_measured2,tau_measured3,LS_tau1,LS_tau2,LS_tau3,UKF_RTS_tau1" ||
    fail "$dir: torque_prediction.csv header: $(head -1 "$dir/torque_prediction.csv")"
  python3 - "$dir" "$work/sim/summary.json" "$velocities" <<'PY' || fail "$dir: outputs wrong"
import csv, json, math, sys
out, truth_file, velocities = sys.argv[1:4]
names = ("IZZ1", "IZZ2", "mr", "m3")
truth = json.load(open(truth_file))["true_parameters"]
rows = {r["method"]: r for r in csv.DictReader(open(out + "/estimates.csv"))}
summary = json.load(open(out + "/summary.json"))
bad = []
# The truth of the simulation, used here only: LS and the smoothers within 1 %.
for method in ("LS", "WR_smoother", "UKF_RTS"):
    for p in names:
        err = 100 * abs(float(rows[method][p]) - truth[p]) / truth[p]
        if not err <= 1.0:
            bad.append((method, p, "error %.3g %%" % err))
# Nothing compares with a truth: errors NaN / null, no true parameters, no verdicts.
for method, r in rows.items():
    if any(not math.isnan(float(r["err_percent_" + p])) for p in names):
        bad.append((method, "err_percent not nan"))
if summary["true_parameters"] is not None:
    bad.append("true_parameters not null")
acceptance = summary["acceptance"]
for key in ("ls_within_1_percent", "smoother_within_1_percent", "ukf_within_3_percent",
            "ls_max_relative_error"):
    if acceptance[key] is not None:
        bad.append((key, "not null"))
if not (acceptance["ukf_positive_definite_throughout"] and acceptance["filters_carry_covariance"]):
    bad.append(("acceptance", acceptance))
if "ekf_seed_statistics" in summary or "validation_crosscheck_max_abs_q_difference" in summary:
    bad.append("sign statistics or tracking validation ran")
# The kinematics source and the fitted NVRs.
record = summary["record"]
if record["filter_velocities"] != velocities or record["regressor_kinematics"] != "irwsm2":
    bad.append(("record", record))
if sorted(record["irw"]) != ["d3", "q1", "q2"] or not all(
        record["irw"][j]["nvr"] > 0 for j in record["irw"]):
    bad.append(("irw", record["irw"]))
# A torque-prediction row per estimate and joint; LS predicts within 3 % of the RMS torque.
validation = list(csv.DictReader(open(out + "/validation.csv")))
if sorted((v["method"], v["joint"]) for v in validation) != sorted(
        (m, j) for m in rows for j in "123"):
    bad.append("validation.csv rows do not match the estimates")
for v in validation:
    if not (math.isfinite(float(v["rms_error"])) and float(v["rms_torque"]) > 0):
        bad.append(("validation", v))
    if v["method"] == "LS" and not float(v["rms_error_percent"]) < 3.0:
        bad.append(("LS torque prediction", v))
if [e["method"] for e in summary["validation"]] != list(rows):
    bad.append("summary.json validation does not list every estimate")
if bad:
    print(bad)
    sys.exit(1)
PY
}

"$binary" --out_dir="$work/real" --figures=false --measurements_csv="$work/meas.csv" \
  > "$work/log" 2>&1 || fail "CSV run exited non-zero: $(cat "$work/log")"
grep -q "measured record .*filter velocities irwsm2" "$work/log" ||
  fail "CSV run did not report the measured record: $(cat "$work/log")"
grep -q "UKF positive definite on every run: yes" "$work/log" || fail "CSV run: UKF not PD"
grep -q " %$" "$work/log" && fail "CSV run prints relative errors"
check_measured_run "$work/real" irwsm2

"$binary" --out_dir="$work/real_dq" --figures=false --measurements_csv="$work/meas_dq.csv" \
  > "$work/log" 2>&1 || fail "CSV run with velocities exited non-zero: $(cat "$work/log")"
check_measured_run "$work/real_dq" measured
# LS sees the IRWSM2 kinematics of the positions either way.
[[ "$(grep '^LS,' "$work/real/estimates.csv")" == "$(grep '^LS,' "$work/real_dq/estimates.csv")" ]] ||
  fail "LS differs between the runs with and without velocity columns"

# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
expect_error() { local expected="$1"; shift; expect_exit 2 "$expected" --figures=false "$@"; }
m="$work/meas.csv"
expect_error "missing.csv: cannot open file" --measurements_csv="$work/missing.csv"
cut -d, -f1-5,7 "$m" > "$work/column.csv"
expect_error "column.csv:1: missing column 'tau2'" --measurements_csv="$work/column.csv"
awk -F, 'NR == 1 { $0 = $0 ",dq1" } NR > 1 { $0 = $0 ",0" } { print }' "$m" > "$work/partial.csv"
expect_error "partial.csv:1: missing column(s) dq2,dd3" --measurements_csv="$work/partial.csv"
awk -F, 'NR == 40 { $3 = "x" } { print }' OFS=, "$m" > "$work/cell.csv"
expect_error "cell.csv:40:3 (column 'q2'): non-numeric cell 'x'" --measurements_csv="$work/cell.csv"
awk -F, 'NR == 60 { $1 = $1 + 0.0005 } { print }' OFS=, "$m" > "$work/jitter.csv"
expect_error "jitter.csv:60:1 (column 't'): time step" --measurements_csv="$work/jitter.csv"
head -150 "$m" > "$work/short.csv"
expect_error "short.csv: expected at least 200 data rows, got 149" --measurements_csv="$work/short.csv"
{ head -100 "$work/meas_dq.csv"; sed -n 3p "$work/meas_dq.csv"; tail -n +101 "$work/meas_dq.csv"; } \
  > "$work/order.csv"
expect_error "order.csv:101:3 (column 't'): time not strictly increasing" \
  --measurements_csv="$work/order.csv"
for flag in --seed=5 --duration_s=10 --dt=0.01 --pid_bandwidth_hz=3 --seed_repeats=0; do
  expect_error "${flag%%=*} is not used with --measurements_csv" --measurements_csv="$m" "$flag"
done
expect_error "--noise_scale must be > 0" --measurements_csv="$m" --noise_scale=0
expect_error "--measurement_std is used only with --measurements_csv" \
  --measurement_std=1e-4,1e-3,1e-4,1e-3,1e-5,1e-4
expect_error "--noise_scale does not apply with --measurement_std" --measurements_csv="$m" \
  --noise_scale=2 --measurement_std=1e-4,1e-3,1e-4,1e-3,1e-5,1e-4
expect_error "--measurement_std: expected 6 comma-separated numbers" --measurements_csv="$m" \
  --measurement_std=1e-4,1e-3
expect_error "--measurement_std: every std must be > 0" --measurements_csv="$m" \
  --measurement_std=1e-4,1e-3,0,1e-3,1e-5,1e-4
# The filters' R from --measurement_std (encoder-like std on these noise-free positions).
"$binary" --out_dir="$work/std" --figures=false --measurements_csv="$m" --wr_smoother=false \
  --measurement_std=1e-4,1e-2,1e-4,1e-2,1e-5,1e-3 > "$work/log" 2>&1 ||
  fail "CSV run with --measurement_std exited non-zero: $(cat "$work/log")"
python3 - "$work/std/summary.json" <<'PY' || fail "--measurement_std not used: $(cat "$work/log")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["measurement_std_source"] == "--measurement_std", s["measurement_std_source"]
assert s["measurement_std"] == [1e-4, 1e-2, 1e-4, 1e-2, 1e-5, 1e-3], s["measurement_std"]
PY
# Flags of the estimators stay valid with a record.
"$binary" --out_dir="$work/flags" --figures=false --measurements_csv="$m" --noise_scale=2 \
  --torque_noise_std=0.1,0.04,0.2 --wr_smoother=false > "$work/log" 2>&1 ||
  fail "CSV run with --noise_scale and --torque_noise_std exited non-zero: $(cat "$work/log")"

finish scara_study_measured
