#!/usr/bin/env bash
# End-to-end checks of the backlash_study program: a short good run writes every output and
# prints the table; bad flags exit 2 with a message naming the flag and leave nothing behind.
# Usage: backlash_study_cli_test.sh PATH/TO/backlash_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A short good run (2000 samples, small bootstrap, no sweep, no figures).
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

# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
expect_error() {
  local expected="$1"; shift
  rm -rf "$work/bad"
  "$binary" --out_dir="$work/bad" --figures=false "$@" > "$work/log" 2>&1
  local code=$?
  [[ $code -eq 2 ]] || fail "exit code $code (expected 2) for: $*"
  grep -qF -- "$expected" "$work/log" || fail "message for '$*' lacks '$expected': $(cat "$work/log")"
  if [[ -d "$work/bad" ]] && [[ -n "$(ls -A "$work/bad")" ]]; then
    fail "outputs left behind for: $*"
  fi
}
expect_error "--cases: unknown case 'sim3'" --cases=sim3
expect_error "--cases: give at least one case" --cases=
expect_error "--qpp_factors: '-1' is not a positive number" --qpp_factors=-1
expect_error "--qpp_factors: 'x' is not a positive number" --qpp_factors=1,x
expect_error "--sweep_cases: unknown case 'real'" --sweep_cases=real
expect_error "--samples must be 0 (case default) or >= 100" --samples=10
expect_error "--bootstrap must be >= 20" --bootstrap=5
expect_error "--rk4_steps must be >= 1" --rk4_steps=0
expect_error "--prbs_amplitude" --prbs_amplitude=0
expect_error "unexpected argument 'extra'" extra

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "backlash_study CLI: all checks passed"
