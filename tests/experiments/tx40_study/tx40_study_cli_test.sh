#!/usr/bin/env bash
# End-to-end checks of the tx40_study program: a shortened simulated run writes every output
# with the documented columns; its simulated motor-side CSVs go through the real-data path
# (with and without a reference); bad flags and bad files exit non-zero with a message naming
# the problem and leave nothing behind.
# Usage: tx40_study_cli_test.sh PATH/TO/tx40_study
set -u
binary="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. Shortened simulated study (good knowledge, two methods), measurements exported.
"$binary" --out_dir="$work/sim" --figures=false --duration_s=5 --knowledge=good \
  --methods=idim_ls_conventional,idim_iv_irwsm1 --write_measurements > "$work/log" 2>&1 ||
  fail "simulated run exited non-zero: $(tail -5 "$work/log")"
for f in tables.md estimates.csv summary.json torques_good.csv autocorrelation_good.csv \
         estimates_good.csv measured_motor_positions.csv measured_motor_torques.csv \
         reference_motor_positions.csv; do
  [[ -s "$work/sim/$f" ]] || fail "simulated run did not write $f"
done
head -1 "$work/sim/estimates.csv" | grep -qx "method,scenario,parameter,estimate,rel_std_percent,published,true" ||
  fail "unexpected estimates.csv header: $(head -1 "$work/sim/estimates.csv")"
grep -q "^idim_iv_irwsm1,good,zz1r,[-0-9.e]*,[0-9.e-]*,1.25,1.30" "$work/sim/estimates.csv" ||
  fail "estimates.csv lacks the IV IRWSM1 zz1r row with published 1.25 and true 1.30…"
for key in relative_error iterations condition_number rows_used residual_white converged; do
  grep -q "\"$key\"" "$work/sim/summary.json" || fail "summary.json lacks $key"
done
grep -q "Table 2" "$work/sim/tables.md" || fail "tables.md lacks Table 2"
grep -q "%σ HAC" "$work/sim/tables.md" || fail "tables.md lacks the HAC standard deviations"
grep -q '"rel_std_percent_hac"' "$work/sim/summary.json" || fail "summary.json lacks rel_std_percent_hac"
grep -q "pre-processed" "$work/log" || fail "no progress lines printed"
ls -A "$work/sim" | grep -q staging && fail "staging folder left behind"

# 2. Real-data path on the exported motor-side CSVs.
pos="$work/sim/measured_motor_positions.csv"
tau="$work/sim/measured_motor_torques.csv"
ref="$work/sim/reference_motor_positions.csv"
"$binary" --out_dir="$work/real" --figures=false --positions_csv="$pos" --torques_csv="$tau" \
  --knowledge=good --methods=idim_ls_conventional,idim_wls_irwsm1 > "$work/log" 2>&1 ||
  fail "real-data run exited non-zero: $(tail -5 "$work/log")"
grep -q "^idim_wls_irwsm1,good,fv1,[-0-9.e]*,[0-9.e-]*,,$" "$work/real/estimates.csv" ||
  fail "real-data estimates.csv: expected an empty 'true' column: $(grep fv1 "$work/real/estimates.csv")"
grep -q "Sample selection: ON" "$work/real/tables.md" || fail "real-data report does not state the selection"
"$binary" --out_dir="$work/realiv" --figures=false --positions_csv="$pos" --torques_csv="$tau" \
  --reference_csv="$ref" --knowledge=good --methods=idim_iv_conventional > "$work/log" 2>&1 ||
  fail "real-data IV run exited non-zero: $(tail -5 "$work/log")"
grep -q "idim_iv_conventional" "$work/realiv/summary.json" || fail "real-data IV run lacks its summary"

# expect_error EXPECTED_SUBSTRING ARGS...: non-zero exit, message, and no outputs.
expect_error() {
  local expected="$1"; shift
  rm -rf "$work/bad"
  if "$binary" --out_dir="$work/bad" --figures=false "$@" > "$work/log" 2>&1; then
    fail "exit 0 for: $*"
  fi
  grep -qF -- "$expected" "$work/log" || fail "message for '$*' lacks '$expected': $(tail -3 "$work/log")"
  if [[ -d "$work/bad" ]] && [[ -n "$(ls -A "$work/bad")" ]]; then
    fail "outputs left behind for: $*"
  fi
}
printf 'a,b,c,d,e\n1,2,3,4,5\n' > "$work/five.csv"
{ head -3 "$pos"; echo "1,2,x,4,5,6"; } > "$work/cell.csv"
head -100 "$tau" > "$work/short.csv"
expect_error "--knowledge: unknown prior-knowledge level 'some'" --knowledge=some
expect_error "--methods: unknown method 'idim_xx'" --methods=idim_xx
expect_error "needs both --positions_csv and --torques_csv" --positions_csv="$pos"
expect_error "idim_iv_irwsm1 needs a reference trajectory" --positions_csv="$pos" --torques_csv="$tau" --methods=idim_iv_irwsm1
expect_error "--sample_selection must be on or off" --sample_selection=maybe
expect_error "--guard_rows must be >= 0" --guard_rows=-1
expect_error "cannot open file" --positions_csv="$work/missing.csv" --torques_csv="$tau"
expect_error "five.csv:1:1: unknown column 'a' (expected m1,m2,m3,m4,m5,m6" --positions_csv="$work/five.csv" --torques_csv="$tau"
expect_error "reference_csv: $work/five.csv:1:1: unknown column 'a'" --positions_csv="$pos" --torques_csv="$tau" --reference_csv="$work/five.csv"
printf 'm1,m2,m3,m4,m5\n1,2,3,4,5\n2,3,4,5,6\n' > "$work/missing_m6.csv"
expect_error "missing_m6.csv:1: missing column 'm6'" --positions_csv="$work/missing_m6.csv" --torques_csv="$tau"
expect_error "cell.csv:4:3 (column 'm3'): non-numeric cell" --positions_csv="$work/cell.csv" --torques_csv="$tau"
expect_error "data rows but" --positions_csv="$pos" --torques_csv="$work/short.csv"

# Columns are bound by name: swapping two columns (names and values) gives the same estimates.
awk -F, -v OFS=, '{ t = $1; $1 = $2; $2 = t; print }' "$pos" > "$work/swapped.csv"
"$binary" --out_dir="$work/swapped" --figures=false --positions_csv="$work/swapped.csv" \
  --torques_csv="$tau" --knowledge=good --methods=idim_ls_conventional,idim_wls_irwsm1 \
  > "$work/log" 2>&1 || fail "swapped-column run exited non-zero: $(tail -3 "$work/log")"
cmp -s "$work/real/estimates.csv" "$work/swapped/estimates.csv" ||
  fail "swapped motor columns changed the estimates"

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "tx40_study CLI: all checks passed"
