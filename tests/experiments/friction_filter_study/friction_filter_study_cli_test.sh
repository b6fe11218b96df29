#!/usr/bin/env bash
# End-to-end checks of the friction_filter_study program: a short good run writes every output and
# prints the error table with the jump measures (jumps.csv one row per filter and jump); its
# measurements through --measurements_csv give the same estimates;
# bad flags and bad records exit 2 with a message naming the flag or the file and line and leave
# nothing behind; an output folder that cannot be created exits 1 with a message.
# Usage: friction_filter_study_cli_test.sh PATH/TO/friction_filter_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../cli_test_lib.sh"

# A short good run (1.2 s at 2 ms, both masses, no figures; friction jumps at 0.608 and 1.108 s).
"$binary" --out_dir="$work/out" --figures=false --duration_s=1.2 --sample_period_s=2e-3 \
  --transient_s=0.25 > "$work/log" 2>&1 ||
  fail "good run exited non-zero: $(cat "$work/log")"
for f in results.csv results.md summary.json case_mass1.csv case_mass2.csv jumps.csv \
  jump_zoom.csv; do
  [[ -s "$work/out/$f" ]] || fail "good run did not write $f"
done
head -1 "$work/out/results.csv" | grep -q "^true_mass_kg,filter,rms_error_n,rms_error_after_transient_n," ||
  fail "unexpected results.csv header: $(head -1 "$work/out/results.csv")"
[[ $(wc -l < "$work/out/results.csv") -eq 5 ]] || fail "results.csv should have 4 rows"
grep -q "^2 *linear_optimal " "$work/log" || fail "no mass-2 optimal-filter row: $(cat "$work/log")"
grep -q "realistic sensors" "$work/log" || fail "the table does not name the sensors: $(cat "$work/log")"
# Two jumps per case and filter, each a velocity reversal of -4 N or +4 N (w_s = w_d = 2 N).
python3 - "$work/out/jumps.csv" "$work/out/results.csv" <<'PY' || fail "unexpected jumps.csv"
import csv, sys
jumps = list(csv.DictReader(open(sys.argv[1])))
assert len(jumps) == 8, len(jumps)
for j in jumps:
    assert j["kind"] == "reversal", j
    assert abs(abs(float(j["size_n"])) - 4.0) < 0.2, j
    assert float(j["lag90_s"]) >= 0.0, j
results = list(csv.DictReader(open(sys.argv[2])))
assert all(r["jumps"] == "2" for r in results), results
PY
# jump_zoom.csv: 20 ms before to 100 ms after the first jump (0.608 s) at 2 ms.
python3 - "$work/out/jump_zoom.csv" <<'PY' || fail "unexpected jump_zoom.csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0]) == ["t", "w", "sl_e", "of_e"], list(rows[0])
assert len(rows) == 60, len(rows)
assert abs(float(rows[0]["t"]) - 0.588) < 1e-9 and float(rows[0]["w"]) == 2.0, rows[0]
assert float(rows[-1]["w"]) == -2.0, rows[-1]
PY
grep -q '"reaching_time_s"' "$work/out/summary.json" || fail "summary.json lacks reaching times"
[[ $(head -1 "$work/out/case_mass1.csv" | tr ',' '\n' | wc -l) -eq 29 ]] ||
  fail "case_mass1.csv should have 29 columns"
ls -A "$work/out" | grep -q staging && fail "staging folder left behind"

# The real-data path: the measurements of the mass-1 case as a CSV give the same estimates.
python3 - "$work/out/case_mass1.csv" "$work/meas.csv" <<'PY' || fail "could not build the CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    f.write("t,s,a,f\n")
    for r in rows:
        f.write(",".join(r[c] for c in ["t", "z_s", "z_a", "z_f"]) + "\n")
PY
"$binary" --out_dir="$work/real" --figures=false --measurements_csv="$work/meas.csv" \
  --transient_s=0.25 > "$work/log" 2>&1 || fail "CSV run exited non-zero: $(cat "$work/log")"
for f in results.csv results.md summary.json case_measured.csv; do
  [[ -s "$work/real/$f" ]] || fail "CSV run did not write $f"
done
head -1 "$work/real/results.csv" | grep -q "^filter,friction_at_end_n," ||
  fail "unexpected results.csv header of the CSV run: $(head -1 "$work/real/results.csv")"
python3 - "$work/out/case_mass1.csv" "$work/real/case_measured.csv" <<'PY' ||
import csv, sys
simulated = list(csv.DictReader(open(sys.argv[1])))
measured = list(csv.DictReader(open(sys.argv[2])))
assert "w" not in measured[0], "the CSV run writes a true friction"
for column in ["sl_e", "of_e", "sl_v", "of_s"]:
    assert all(a[column] == b[column] for a, b in zip(simulated, measured)), column
PY
  fail "CSV run: estimates differ from the simulated case's"

# expect_error CODE EXPECTED_SUBSTRING ARGS...: exit code, message, and no outputs.
expect_error() {
  local code_expected="$1" expected="$2"; shift 2
  expect_exit "$code_expected" "$expected" --figures=false --duration_s=0.2 --transient_s=0.1 "$@"
}
expect_error 2 "--true_masses: 'x' is not a number" --true_masses=1,x
expect_error 2 "--true_masses: masses must be > 0" --true_masses=0
expect_error 2 "--true_masses: give at least one value" --true_masses=
expect_error 2 "--initial_state: expected 3 comma-separated numbers, got '1,2'" --initial_state=1,2
expect_error 2 "--optimal_residual_weights: weights must be > 0" --optimal_residual_weights=1,1,0,1
expect_error 2 "--lambda/--omega/--boundary_layer: lambda must be finite and > 0" --lambda=0
expect_error 2 "--static_friction must be >= --dynamic_friction" --static_friction=1
expect_error 2 "--sample_period_s must be in (0, 0.01]" --sample_period_s=0
expect_error 2 "--transient_s must be in [0, --duration_s)" --transient_s=5
expect_error 2 "unexpected argument 'extra'" extra
expect_error 2 "--sensors must be 'realistic' or 'ideal', got 'x'" --sensors=x
expect_error 2 "--noise_scale is used with --sensors=ideal only" --noise_scale=1
expect_error 2 "--force_delay_s is used with --sensors=realistic only" --sensors=ideal \
  --force_delay_s=0.002
expect_error 2 "--encoder_resolution_m must be in (0, 0.01]" --encoder_resolution_m=0
expect_error 2 "--accelerometer_noise must be finite and > 0" --accelerometer_noise=-1
expect_error 2 "--force_sensor_noise must be finite and > 0" --force_sensor_noise=0
expect_error 2 "--force_delay_s must be in [0, 0.1]" --force_delay_s=1
expect_error 2 "--prefilter_hz must be below the Nyquist frequency" --prefilter_hz=600
expect_error 2 "--jump_window_s must be finite and > 0" --jump_window_s=0
expect_error 2 "--monte_carlo must be >= 0" --monte_carlo=-1
expect_error 2 "--monte_carlo_threads is used with --monte_carlo only" --monte_carlo_threads=2
expect_error 2 "--coverage_times_s: times must be in [--transient_s, --duration_s]" \
  --monte_carlo=2 --coverage_times_s=5
# A single run's interval time outside the record: a flag error naming the time, no outputs.
expect_error 2 "--coverage_times_s: 5 s is outside the record [0, 0.2] s" --coverage_times_s=0.15,5
# expect_csv_error EXPECTED_SUBSTRING ARGS...: as expect_error 2, without the simulation flags.
expect_csv_error() { local expected="$1"; shift; expect_exit 2 "$expected" --figures=false "$@"; }
expect_csv_error "--noise_scale is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --noise_scale=1
expect_csv_error "--monte_carlo is not used with --measurements_csv" \
  --measurements_csv="$work/meas.csv" --monte_carlo=2
expect_csv_error "--coverage_times_s: -1 s is outside the record" \
  --measurements_csv="$work/meas.csv" --coverage_times_s=-1
expect_csv_error "missing.csv" --measurements_csv="$work/missing.csv"
printf 't,s,a\n0,1,2\n' > "$work/header.csv"
expect_csv_error "header.csv" --measurements_csv="$work/header.csv"
head -10 "$work/meas.csv" > "$work/short.csv"
expect_csv_error "expected at least 20 data rows, got 9" --measurements_csv="$work/short.csv"
{ head -30 "$work/meas.csv"; sed -n 2p "$work/meas.csv"; } > "$work/time.csv"
expect_csv_error "time.csv:31:1: time not strictly increasing" --measurements_csv="$work/time.csv"
expect_csv_error "--transient_s must be in [0, the record's last time" \
  --measurements_csv="$work/meas.csv" --transient_s=10
# A regular file where the output folder should be.
touch "$work/file"
"$binary" --out_dir="$work/file/out" --figures=false --duration_s=0.2 --transient_s=0.1 \
  > "$work/log" 2>&1
code=$?
[[ $code -eq 2 ]] || fail "exit code $code (expected 2) for an out_dir under a file"
grep -q "friction_filter_study: error: .*$work/file" "$work/log" ||
  fail "no message naming the bad out_dir: $(cat "$work/log")"

finish friction_filter_study
