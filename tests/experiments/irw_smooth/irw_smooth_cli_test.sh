#!/usr/bin/env bash
# End-to-end checks of the irw_smooth program: a good run writes every output; bad flags and
# bad files exit non-zero with a message naming the problem and leave nothing behind.
# Usage: irw_smooth_cli_test.sh PATH/TO/irw_smooth
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A good run on a small generated signal.
python_free_csv="$work/good.csv"
{
  echo "t,a,b"
  for k in $(seq 0 399); do
    awk -v k="$k" 'BEGIN { t = k * 0.01; printf "%.2f,%.6f,%.6f\n", t, sin(t), t * t }'
  done
} > "$python_free_csv"
"$binary" --input_csv="$python_free_csv" --out_dir="$work/out" --figures=false > "$work/log" 2>&1 ||
  fail "good run exited non-zero: $(cat "$work/log")"
for f in smoothed.csv summary.json; do
  [[ -s "$work/out/$f" ]] || fail "good run did not write $f"
done
head -1 "$work/out/smoothed.csv" | grep -q "^t,a,a_velocity,a_acceleration,a_std,a_velocity_std,a_acceleration_std,b," ||
  fail "unexpected smoothed.csv header: $(head -1 "$work/out/smoothed.csv")"
grep -q '"n_samples": 400' "$work/out/summary.json" || fail "summary.json lacks n_samples"
ls -A "$work/out" | grep -q staging && fail "staging folder left behind"

# expect_error EXPECTED_SUBSTRING ARGS...: non-zero exit, message, and no outputs.
expect_error() {
  local expected="$1"; shift
  rm -rf "$work/bad"
  if "$binary" --out_dir="$work/bad" --figures=false "$@" > "$work/log" 2>&1; then
    fail "exit 0 for: $*"
  fi
  grep -qF -- "$expected" "$work/log" || fail "message for '$*' lacks '$expected': $(cat "$work/log")"
  if [[ -d "$work/bad" ]] && [[ -n "$(ls -A "$work/bad")" ]]; then
    fail "outputs left behind for: $*"
  fi
}
printf 't,q\n0,1\n0.1,2\n0.1,3\n' > "$work/time.csv"
printf 't,q\n0,1\n0.1,x\n' > "$work/cell.csv"
printf 't,q\n0,1\n0.1,2,3\n' > "$work/ragged.csv"
printf 't,q\n0,nan\n' > "$work/nan.csv"
: > "$work/empty.csv"
expect_error "--model: unknown IRW model 'irw3'" --input_csv="$python_free_csv" --model=irw3
expect_error "--nvr must be 'auto', 'tracking' or a positive number" --input_csv="$python_free_csv" --nvr=-1
expect_error "--criterion: unknown NVR criterion" --input_csv="$python_free_csv" --criterion=aic
expect_error "cannot open file" --input_csv="$work/missing.csv"
expect_error "time.csv:4:1 (column 't'): time is not strictly increasing" --input_csv="$work/time.csv"
expect_error "cell.csv:3:2 (column 'q'): non-numeric cell 'x'" --input_csv="$work/cell.csv"
expect_error "ragged.csv:3: ragged row" --input_csv="$work/ragged.csv"
expect_error "nan.csv:2:2 (column 'q'): NaN" --input_csv="$work/nan.csv"
expect_error "empty.csv: empty file" --input_csv="$work/empty.csv"
expect_error "no column 'zz'" --input_csv="$python_free_csv" --columns=zz
expect_error "--nvr=tracking needs --columns" --input_csv="$python_free_csv" --nvr=tracking
expect_error "--encoder_resolution: 'x' is not a positive number" --input_csv="$python_free_csv" \
  --nvr=tracking --columns=a --reference_columns=b --encoder_resolution=x
expect_error "--gcv_gamma: gcv_gamma must be >= 1" --input_csv="$python_free_csv" --gcv_gamma=0.5

# Jittered time stamps (steps 7.7–12.3 ms): smoothed at the stamps with the ML NVR; GCV refused.
{
  echo "t,q"
  awk 'BEGIN { srand(3); t = 0; for (k = 0; k < 400; k++) {
    printf "%.6f,%.9f\n", t, sin(2 * t); t += 0.0077 + 0.0046 * rand() } }'
} > "$work/jitter.csv"
"$binary" --input_csv="$work/jitter.csv" --criterion=ml --out_dir="$work/jitter" \
  --figures=false > "$work/log" 2>&1 || fail "jittered run exited non-zero: $(cat "$work/log")"
grep -q '"time_stamps": "irregular"' "$work/jitter/summary.json" ||
  fail "summary.json of the jittered run does not say irregular"
# The velocity at the stamps is 2 cos(2t): error small against its amplitude 2.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  NR > 20 && NR < 380 { e = $col["q_velocity"] - 2 * cos(2 * $col["t"]); s += e * e; n++ }
  END { exit !(sqrt(s / n) < 0.01) }' "$work/jitter/smoothed.csv" ||
  fail "jittered run: velocity error too large"
expect_error "not uniformly sampled" --input_csv="$work/jitter.csv"

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "irw_smooth CLI: all checks passed"
