#!/usr/bin/env bash
# End-to-end checks of the tx40_study program: a shortened simulated run writes every output
# with the documented columns; its simulated motor-side CSVs go through the real-data path
# (with and without a reference: the real-data defaults (no guard band), the guard-band
# comparison, IDIM-IV with the substitute reference); bad flags and bad files exit non-zero with a message naming
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
grep -q '"stalled": false' "$work/sim/summary.json" || fail "summary.json lacks the IV runs' stalled verdict"
grep -q "pre-processed" "$work/log" || fail "no progress lines printed"
grep -q "guard band max(0 rows, 0 s) (the realistic simulation's default: no guard band" "$work/log" ||
  fail "the simulated run does not state its guard band on the console"
grep -q "realistic simulation (friction beyond Coulomb + viscous: Stribeck excess 0.5 fc" "$work/log" ||
  fail "the simulated run does not state the realistic simulation"
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
[[ "$(json "$work/sim/summary.json" "d['guard_band']['rows'], d['guard_band']['seconds']")" == "0 0.0" ]] ||
  fail "simulated run: guard band is not the realistic default (none)"
# The realistic default lands in the band of the real robot (Brunot et al. (2018) Table 3: 4.66 %
# for IDIM-LS with good knowledge), the ideal simulation at the old small error.
in_range() { python3 -c "import sys; v, lo, hi = map(float, sys.argv[1:]); sys.exit(not lo <= v <= hi)" "$@"; }
ls_error="d['runs'][[r['method'] for r in d['runs']].index('idim_ls_conventional')]['relative_error'] * 100"
realistic_error=$(json "$work/sim/summary.json" "$ls_error")
in_range "$realistic_error" 3 6 ||
  fail "realistic simulation: IDIM-LS relative error $realistic_error % outside [3, 6] %"
grep -q "Measured coverage of the 95 % intervals" "$work/sim/tables.md" ||
  fail "tables.md lacks the measured coverage of the intervals"
grep -q '"coverage_label"' "$work/sim/summary.json" || fail "summary.json lacks the coverage labels"
"$binary" --out_dir="$work/ideal" --figures=false --duration_s=5 --knowledge=good \
  --methods=idim_ls_conventional --simulation=ideal > "$work/log" 2>&1 ||
  fail "ideal simulated run exited non-zero: $(tail -5 "$work/log")"
grep -q "guard band max(5 rows, 0.04 s) (the ideal simulation's default)" "$work/log" ||
  fail "the ideal run does not state its guard band on the console"
ideal_error=$(json "$work/ideal/summary.json" "$ls_error")
in_range "$ideal_error" 0 0.5 ||
  fail "ideal simulation: IDIM-LS relative error $ideal_error % outside [0, 0.5] %"
# --torque_offsets: 61 parameters; the offsets take up the realistic simulation's direction
# asymmetry (truth a fc_j, a = 0.2: off1 = 1.396), so the relative error falls well below the
# default run's; at the settings of the shipped Monte Carlo (7 s record, 0.1 rad/s threshold)
# the run quotes that coverage as measured at its own settings (the second "# settings:" line of
# the joined file).
"$binary" --out_dir="$work/offsets" --figures=false --knowledge=good \
  --methods=idim_ls_conventional --torque_offsets --velocity_threshold=0.1 > "$work/log" 2>&1 ||
  fail "--torque_offsets run exited non-zero: $(tail -5 "$work/log")"
grep -q "61 identified parameters (base, torque offsets)" "$work/log" ||
  fail "--torque_offsets run does not state its 61 parameters"
grep -q "^idim_ls_conventional,good,off1,1\.[2-5][0-9.e-]*,[0-9.e-]*,,1.396" "$work/offsets/estimates.csv" ||
  fail "--torque_offsets: off1 not near its truth 0.2 fc1 = 1.396: $(grep ',off1,' "$work/offsets/estimates.csv")"
offsets_error=$(json "$work/offsets/summary.json" "$ls_error")
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 0.6 * float(sys.argv[2]))" \
  "$offsets_error" "$realistic_error" ||
  fail "--torque_offsets: relative error $offsets_error % not below 0.6 × $realistic_error %"
[[ "$(json "$work/offsets/summary.json" "d['torque_offsets']")" == "True" ]] ||
  fail "--torque_offsets: summary.json does not say so"
offsets_label=$(json "$work/offsets/summary.json" "d['runs'][0]['coverage_label_hac']")
grep -q "of 61 parameters calibrated\|all 61 parameters" <<< "$offsets_label" ||
  fail "--torque_offsets: the run does not quote the shipped coverage of its scenario: $offsets_label"
grep -q "other settings" <<< "$offsets_label" &&
  fail "--torque_offsets at the shipped Monte Carlo's settings: labelled as other settings: $offsets_label"
grep -q "not measured at this run's settings" "$work/log" &&
  fail "--torque_offsets at the shipped Monte Carlo's settings: console says other settings"
# The shipped coverage is of the realistic simulation: the ideal run's intervals are labelled as
# not measured (or by the ideal rows, if a coverage file holds them).
grep -q "coverage_label" "$work/ideal/summary.json" || fail "ideal run: summary.json lacks coverage labels"
grep -q "guard_band_comparison" "$work/sim/summary.json" &&
  fail "simulated run: unexpected guard-band comparison"
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
# Real data default to the procedure of Brunot et al. (2018): no guard band, stated everywhere,
# and IDIM-LS conv. is also run with the simulated study's guard band to show its effect.
grep -q "and no guard band around them — the real-data default" "$work/real/tables.md" ||
  fail "real-data tables.md does not state the default guard band (none)"
grep -q "guard band max(0 rows, 0 s) (the real-data default" "$work/log" ||
  fail "real-data console does not state the default guard band"
[[ "$(json "$work/real/summary.json" "d['guard_band']['rows'], d['guard_band']['seconds']")" == "0 0.0" ]] ||
  fail "real-data summary.json: guard band is not 0 rows / 0 s"
grep -q "## Guard band: its effect on the IDIM-LS conv. estimates" "$work/real/tables.md" ||
  fail "real-data tables.md lacks the guard-band comparison"
grep -q "IDIM-LS conv. was run again with guard band max(5 rows, 0.04 s)" "$work/real/tables.md" ||
  fail "the guard-band comparison does not name the compared guard band"
comparison="d['guard_band_comparison']['levels'][0]"
[[ "$(json "$work/real/summary.json" "len($comparison['parameters']), $comparison['scenario']")" == "28 good" ]] ||
  fail "summary.json: the guard-band comparison lacks the 28 essential parameters"
# Explicit flags win; the comparison is then against no guard band, and the estimates with the
# guard band agree with the comparison of the default run.
"$binary" --out_dir="$work/realguard" --figures=false --positions_csv="$pos" --torques_csv="$tau" \
  --knowledge=good --methods=idim_ls_conventional --guard_rows=5 --guard_s=0.04 > "$work/log" 2>&1 ||
  fail "real-data run with an explicit guard band exited non-zero: $(tail -5 "$work/log")"
[[ "$(json "$work/realguard/summary.json" "d['guard_band']['rows'], d['guard_band']['source']")" == "5 given by --guard_rows/--guard_s" ]] ||
  fail "explicit --guard_rows/--guard_s did not win on real data"
grep -q "IDIM-LS conv. was run again with no guard band" "$work/realguard/tables.md" ||
  fail "explicit guard band: the comparison is not against no guard band"
with_default=$(json "$work/real/summary.json" "$comparison['parameters'][1]['with_guard_band']")
with_explicit=$(grep "^idim_ls_conventional,good,fc1," "$work/realguard/estimates.csv" | cut -d, -f4)
python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 1e-6 * abs(a))" \
  "$with_default" "$with_explicit" ||
  fail "fc1 with the guard band: comparison $with_default, explicit run $with_explicit"
# IDIM-IV without a reference: the substitute (smoothed measured positions), labelled.
"$binary" --out_dir="$work/realsub" --figures=false --positions_csv="$pos" --torques_csv="$tau" \
  --knowledge=good --methods=idim_iv_irwsm1 > "$work/log" 2>&1 ||
  fail "real-data IV run with the substitute reference exited non-zero: $(tail -5 "$work/log")"
substitute="IDIM-IV with a substitute reference (smoothed measured positions)"
grep -qF "$substitute" "$work/log" || fail "console does not state the substitute reference"
grep -qF "**$substitute**" "$work/realsub/tables.md" || fail "tables.md does not state the substitute reference"
grep -qF "| IDIM-IV IRWSM1 (subst. ref.) | good |" "$work/realsub/tables.md" ||
  fail "tables.md does not label the IV run with the substitute"
[[ "$(json "$work/realsub/summary.json" "d['iv_note'], d['iv_substitute_reference'], d['runs'][0]['converged']")" == "$substitute True True" ]] ||
  fail "summary.json does not state the substitute reference or the run did not converge"
grep -q "guard_band_comparison" "$work/realsub/summary.json" &&
  fail "guard-band comparison without IDIM-LS conv. in --methods"
"$binary" --out_dir="$work/realiv" --figures=false --positions_csv="$pos" --torques_csv="$tau" \
  --reference_csv="$ref" --knowledge=good --methods=idim_iv_conventional > "$work/log" 2>&1 ||
  fail "real-data IV run exited non-zero: $(tail -5 "$work/log")"
grep -q "idim_iv_conventional" "$work/realiv/summary.json" || fail "real-data IV run lacks its summary"
grep -qF "substitute reference" "$work/realiv/tables.md" && fail "the --reference_csv run mentions the substitute reference"

# expect_error EXPECTED_SUBSTRING ARGS...: exit code 2, message, and no outputs.
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
printf 'a,b,c,d,e\n1,2,3,4,5\n' > "$work/five.csv"
{ head -3 "$pos"; echo "1,2,x,4,5,6"; } > "$work/cell.csv"
head -100 "$tau" > "$work/short.csv"
expect_error "--knowledge: unknown prior-knowledge level 'some'" --knowledge=some
expect_error "--methods: unknown method 'idim_xx'" --methods=idim_xx
expect_error "needs both --positions_csv and --torques_csv" --positions_csv="$pos"
expect_error "idim_iv_irwsm1 needs a reference trajectory" --positions_csv="$pos" --torques_csv="$tau" --methods=idim_iv_irwsm1 --substitute_reference=false
expect_error "--substitute_reference is only used with real data" --substitute_reference
expect_error "--substitute_reference: not used with --reference_csv" --positions_csv="$pos" --torques_csv="$tau" --reference_csv="$ref" --substitute_reference=true
expect_error "--substitute_cutoff_hz must be in (0, --sample_rate_hz/2)" --positions_csv="$pos" --torques_csv="$tau" --substitute_cutoff_hz=2500
expect_error "--substitute_cutoff_hz: not used with --reference_csv" --positions_csv="$pos" --torques_csv="$tau" --reference_csv="$ref" --substitute_cutoff_hz=40
expect_error "--guard_comparison is only used with real data" --guard_comparison
expect_error "--guard_comparison needs --sample_selection=on" --positions_csv="$pos" --torques_csv="$tau" --sample_selection=off --guard_comparison
expect_error "--guard_comparison needs idim_ls_conventional in --methods" --positions_csv="$pos" --torques_csv="$tau" --methods=idim_wls_irwsm1 --guard_comparison
expect_error "--guard_s must be >= 0" --positions_csv="$pos" --torques_csv="$tau" --guard_s=-1
expect_error "--sample_selection must be on or off" --sample_selection=maybe
expect_error "--guard_rows must be >= 0" --guard_rows=-1
expect_error "--iv_stall_iterations must be >= 0 (0 = off)" --iv_stall_iterations=-1
expect_error "--hac_critical: expected fixed_b or normal, got 'student'" --hac_critical=student
expect_error "cannot open file" --positions_csv="$work/missing.csv" --torques_csv="$tau"
expect_error "five.csv:1:1: unknown column 'a' (expected m1,m2,m3,m4,m5,m6" --positions_csv="$work/five.csv" --torques_csv="$tau"
expect_error "reference_csv: $work/five.csv:1:1: unknown column 'a'" --positions_csv="$pos" --torques_csv="$tau" --reference_csv="$work/five.csv"
printf 'm1,m2,m3,m4,m5\n1,2,3,4,5\n2,3,4,5,6\n' > "$work/missing_m6.csv"
expect_error "missing_m6.csv:1: missing column 'm6'" --positions_csv="$work/missing_m6.csv" --torques_csv="$tau"
expect_error "cell.csv:4:3 (column 'm3'): non-numeric cell" --positions_csv="$work/cell.csv" --torques_csv="$tau"
expect_error "data rows but" --positions_csv="$pos" --torques_csv="$work/short.csv"
# The simulation and its imperfections.
expect_error "--simulation must be 'realistic' or 'ideal', got 'perfect'" --simulation=perfect
expect_error "--stribeck_ratio must be finite and >= 0" --stribeck_ratio=-0.1
expect_error "--stribeck_velocity must be finite and > 0" --stribeck_velocity=0
expect_error "--friction_asymmetry must be in [0, 1)" --friction_asymmetry=1
expect_error "--load_friction must be in [0, 1)" --load_friction=-0.5
expect_error "--motor_torque_noise_std must be finite and >= 0" --motor_torque_noise_std=-1
expect_error "--motor_torque_lsb must be finite and >= 0" --motor_torque_lsb=nan
expect_error "--encoder_resolution_scale must be in [0, 1000]" --encoder_resolution_scale=-1
expect_error "--stribeck_ratio is only used with the realistic simulation" --simulation=ideal --stribeck_ratio=0.3
expect_error "--motor_torque_lsb is only used with the realistic simulation" --positions_csv="$pos" --torques_csv="$tau" --motor_torque_lsb=0.01
expect_error "--torque_noise_std is the ideal simulation's joint-side noise" --torque_noise_std=0.5
expect_error "--simulation is only used with the simulated experiment" --positions_csv="$pos" --torques_csv="$tau" --simulation=ideal
expect_error "--coverage_csv: " --coverage_csv="$work/missing_coverage.csv" --knowledge=good --methods=idim_ls_conventional

# Columns are bound by name: swapping two columns (names and values) gives the same estimates.
awk -F, -v OFS=, '{ t = $1; $1 = $2; $2 = t; print }' "$pos" > "$work/swapped.csv"
"$binary" --out_dir="$work/swapped" --figures=false --positions_csv="$work/swapped.csv" \
  --torques_csv="$tau" --knowledge=good --methods=idim_ls_conventional,idim_wls_irwsm1 \
  > "$work/log" 2>&1 || fail "swapped-column run exited non-zero: $(tail -3 "$work/log")"
cmp -s "$work/real/estimates.csv" "$work/swapped/estimates.csv" ||
  fail "swapped motor columns changed the estimates"

# Figures: each knowledge level's CSVs and figures are written into the output stage as soon as
# its runs are done (while the other levels compute) and committed with the rest; a renderer
# that fails fails the run, which then leaves nothing in the out_dir.
"$binary" --out_dir="$work/fig" --duration_s=5 --knowledge=good,poor \
  --methods=idim_ls_conventional > "$work/log" 2>&1 ||
  fail "run with figures exited non-zero: $(tail -3 "$work/log")"
for level in good poor; do
  for f in "torques_$level.png" "autocorrelation_$level.png" "estimates_$level.png" \
           "torques_$level.csv" "estimates_$level.figure.json"; do
    [[ -s "$work/fig/$f" ]] || fail "run with figures did not write $f"
  done
done
[[ -z "$(find "$work/fig" -mindepth 1 -type d)" ]] || fail "run with figures left a staging folder"
if DYNID_PYTHON=/bin/false "$binary" --out_dir="$work/nofig" --duration_s=5 \
  --knowledge=good,poor --methods=idim_ls_conventional > "$work/log" 2>&1; then
  fail "a failing renderer did not fail the run"
fi
grep -q "figure '[a-z_]*' not rendered" "$work/log" ||
  fail "a failing renderer is not reported: $(tail -1 "$work/log")"
[[ -z "$(ls -A "$work/nofig" 2>/dev/null)" ]] ||
  fail "the run with a failing renderer left files: $(ls -A "$work/nofig")"

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "tx40_study CLI: all checks passed"
