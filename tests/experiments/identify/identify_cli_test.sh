#!/usr/bin/env bash
# End-to-end checks of the identify program.
#  1. A one-joint turntable from a DH table (YAML) with default drives, torques generated exactly
#     as (zz + ia) q'' + fv q' + fc sign(q') + off: the estimates match, every output is written.
#  2. The real TIAGo arm recording shipped in data/robots/tiago (Schunk URDF as prior, torques of
#     arm_1..arm_4 from currents, first 70 % identified, last 30 % validated): the validation
#     errors meet the published comparison (least squares ≤ 0.40 / 0.18 / 0.27 / 0.30, pooled
#     ≤ 0.20), the physically consistent fit is no worse than LS plus 10 %, and the report says
#     the inertial parameters are not identifiable from this recording; run from another folder
#     (absolute and relative paths) it quotes the shipped coverage, and not for a changed record
#     nor with the settings line of a file that does not record the HAC bandwidth rule.
#  3. Bad flags, descriptions and records: exit 2, a message naming the file, line and column or
#     the flag, nothing written.
#  4. --monte_carlo, the parametric block bootstrap, on the turntable with noisy torques: the
#     expected rows of coverage.csv, the same files for 1 and 2 threads, a resumed Monte Carlo
#     equal to a fresh one byte for byte; with white torque noise the classical σ are calibrated,
#     with strongly coloured noise (AR(1), 0.98 per sample) they are not while the HAC σ cover
#     better — and the i.i.d. bootstrap (blocks of one sample) misses it; a single run labels its
#     intervals with a given coverage.csv (console: one summary line per estimator), and
#     withholds one measured at other flags; the settings compare the files by content (quoted
#     from other folders and for a copy, withheld for a changed record; older lines by path);
#     the HAC bandwidth rule (acf by default, the residuals' autocorrelation function; ar1 the
#     lag-1 plug-in) is recorded in the settings at either value and in the summaries, the HAC σ
#     of both rules cover the AR(1) noise better than the classical ones, and a file whose
#     settings do not record the rule (measured when ar1 was the default) is quoted by neither.
# Usage: identify_cli_test.sh PATH/TO/identify
set -u
binary="$1"
here="$(cd "$(dirname "$0")" && pwd)"
tiago="$here/../../../data/robots/tiago"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$here/../cli_test_lib.sh"

json() {  # json FILE PYTHON_EXPRESSION_ON_d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# 1. The turntable.
cat > "$work/turntable.yaml" <<'YAML'
name: turntable
convention: modified
joints:
  - {name: spin, type: revolute, alpha: 0, d: 0, theta: 0, r: 0}
YAML
awk 'BEGIN {
  print "t,q_spin,tau_spin"
  zz = 0.35; fv = 0.8; fc = 0.4; off = 0.05
  for (k = 0; k < 3000; k++) {
    t = k * 0.005
    q = 0.8 * sin(1.3 * t) + 0.3 * sin(3.1 * t + 0.4)
    qd = 0.8 * 1.3 * cos(1.3 * t) + 0.3 * 3.1 * cos(3.1 * t + 0.4)
    qdd = -0.8 * 1.69 * sin(1.3 * t) - 0.3 * 9.61 * sin(3.1 * t + 0.4)
    s = (qd > 0) - (qd < 0)
    printf "%.4f,%.12g,%.12g\n", t, q, zz * qdd + fv * qd + fc * s + off
  }
}' > "$work/turntable.csv"
"$binary" --robot="$work/turntable.yaml" --data="$work/turntable.csv" --method=ls \
  --out_dir="$work/turntable" --figures=false > "$work/log" 2>&1 ||
  fail "turntable run exited non-zero: $(cat "$work/log")"
for f in parameters.csv standard_parameters.csv validation.csv validation_torques.csv \
         summary.json report.md; do
  [[ -s "$work/turntable/$f" ]] || fail "turntable run did not write $f"
done
head -1 "$work/turntable/parameters.csv" |
  grep -q "^parameter,estimate,std,rel_std_percent,physically_consistent," ||
  fail "parameters.csv header: $(head -1 "$work/turntable/parameters.csv")"
value() { awk -F, -v name="$2" '$1 == name { print $2 }' "$1"; }
check "turntable zz+ia" "a > 0.34 && a < 0.36" "$(value "$work/turntable/parameters.csv" zz1r)"
check "turntable fv" "a > 0.78 && a < 0.82" "$(value "$work/turntable/parameters.csv" fv1)"
check "turntable fc" "a > 0.38 && a < 0.42" "$(value "$work/turntable/parameters.csv" fc1)"
check "turntable validation error" "a < 0.01" \
  "$(json "$work/turntable/summary.json" "d['validation_relative_error']['ls']")"

# --essential: the four turntable parameters are all essential.
"$binary" --robot="$work/turntable.yaml" --data="$work/turntable.csv" --essential \
  --out_dir="$work/turntable_essential" --figures=false > "$work/log" 2>&1 ||
  fail "turntable --essential run exited non-zero: $(cat "$work/log")"
check "essential parameters" "a == 4" \
  "$(json "$work/turntable_essential/summary.json" "len(d['essential_parameters'])")"

# IDIM-IV with the reference column (here the trajectory itself): the closed loop of the LS
# estimate supplies the instruments, and the estimate is the truth.
awk -F, 'NR == 1 { print $0 ",qref_spin"; next } { print $0 "," $2 }' "$work/turntable.csv" \
  > "$work/turntable_ref.csv"
"$binary" --robot="$work/turntable.yaml" --data="$work/turntable_ref.csv" --method=iv \
  --out_dir="$work/turntable_iv" --figures=false > "$work/log" 2>&1 ||
  fail "turntable IV run exited non-zero: $(cat "$work/log")"
check "IV zz+ia" "a > 0.345 && a < 0.355" "$(value "$work/turntable_iv/parameters.csv" zz1r)"
check "IV fc" "a > 0.39 && a < 0.41" "$(value "$work/turntable_iv/parameters.csv" fc1)"
check "IV converged" "a == 1" \
  "$(json "$work/turntable_iv/summary.json" "int('message' not in d['methods']['iv'])")"

# Without a reference column, --iv_reference=measured uses the smoothed positions instead, and
# the report says so.
"$binary" --robot="$work/turntable.yaml" --data="$work/turntable.csv" --method=iv \
  --iv_reference=measured --out_dir="$work/turntable_iv_sub" --figures=false > "$work/log" 2>&1 ||
  fail "turntable IV (measured reference) run exited non-zero: $(cat "$work/log")"
check "IV (substitute) fc" "a > 0.39 && a < 0.41" \
  "$(value "$work/turntable_iv_sub/parameters.csv" fc1)"
grep -q "SUBSTITUTE, the smoothed measured positions" "$work/turntable_iv_sub/report.md" ||
  fail "the report does not state the substitute reference"

# 2. The TIAGo recording, run from another folder with absolute paths: the shipped coverage
# (measured from the repository's top folder with relative paths) is quoted, since its settings
# compare the files by content.
shipped="$(cd "$here/../../../experiments/identify" && pwd)/tiago_coverage.csv"
tiago_flags=(--chain=base_footprint:arm_7_link
  --effort_joints=arm_1_joint,arm_2_joint,arm_3_joint,arm_4_joint --figures=false)
(cd "$work" && "$binary" --robot="$tiago/tiago_48_schunk.urdf" "${tiago_flags[@]}" \
  --drives="$tiago/tiago_drives.yaml" --data="$tiago/tiago_arm_log.csv" \
  --coverage_csv="$shipped" --out_dir="$work/tiago") > "$work/tiago.log" 2>&1 ||
  fail "TIAGo run exited non-zero: $(cat "$work/tiago.log")"
grep -q "^  ls      0 of 57 calibrated, median coverage 0.50; lowest: " "$work/tiago.log" ||
  fail "TIAGo from another folder, absolute paths: shipped coverage not quoted: $(cat "$work/tiago.log")"
grep -q "^  ls_hac  48 of 57 calibrated, median coverage 0.90, 1 cover in every run (4.4 expected); lowest: " "$work/tiago.log" ||
  fail "TIAGo: the shipped coverage is not the default HAC bandwidth rule and critical value's: $(cat "$work/tiago.log")"
# The physically consistent fit's HAC intervals (the default method's) cover where its
# delta-method ones do not: most of them calibrated.
# Many of them cover in every run, far more than honest intervals would (the undetermined
# parameters'), and the line says so.
check "TIAGo: pc_hac calibrated on most parameters, pc on few" "a >= 45 && b <= 25" \
  "$(grep "^  pc_hac  " "$work/tiago.log" | awk '{ print $2 }')" \
  "$(grep "^  pc      " "$work/tiago.log" | awk '{ print $2 }')"
check "TIAGo: pc_hac intervals that cover in every run counted against chance" "a >= 20 && b < 5" \
  "$(grep "^  pc_hac  " "$work/tiago.log" | sed 's/.*, \([0-9]*\) cover in every run.*/\1/')" \
  "$(grep "^  pc_hac  " "$work/tiago.log" | sed 's/.*cover in every run (\([0-9.]*\) expected).*/\1/')"
# The report gives the chosen method's HAC σ beside its σ, each interval with its label.
grep -q "^| fv2 | fv2 | [0-9.]* | [0-9.]* | [0-9.]* | NOT calibrated (coverage 0.38) | [0-9.]* | calibrated (coverage 0.86) |$" \
  "$work/tiago/report.md" || fail "report.md: fv2 without its HAC σ and labels: $(grep "^| fv2 " "$work/tiago/report.md")"
# The console summarises: one line per estimator naming three intervals, not 57.
check "TIAGo coverage lines name at most 3 parameters each" "a == 6 && b <= 3" \
  "$(grep -c "^  [a-z_]* *[0-9]* of 57 calibrated" "$work/tiago.log")" \
  "$(grep "^  ls  " "$work/tiago.log" | tr ',' '\n' | grep -c " 0\.[0-9][0-9]")"
grep -qF "every interval's label: $work/tiago/parameters.csv" "$work/tiago.log" ||
  fail "the console does not say where every label is"
check "summary.json keeps every TIAGo label" "a == 6 * 57 && b == 57" \
  "$(json "$work/tiago/summary.json" \
     "sum(len(v) for v in d['coverage']['estimators'].values())")" \
  "$(json "$work/tiago/summary.json" \
     "len(d['coverage']['per_estimator']['ls']['not_calibrated_lowest_first'])")"
# Relative paths from another folder quote it too; a changed record does not.
(cd "$tiago/.." && "$binary" --robot=tiago/tiago_48_schunk.urdf "${tiago_flags[@]}" \
  --drives=tiago/tiago_drives.yaml --data=./tiago/tiago_arm_log.csv --coverage_csv="$shipped" \
  --out_dir="$work/tiago_relative") > "$work/tiago_relative.log" 2>&1 ||
  fail "TIAGo run with relative paths exited non-zero: $(cat "$work/tiago_relative.log")"
grep -q "^  ls      0 of 57 calibrated" "$work/tiago_relative.log" ||
  fail "TIAGo from another folder, relative paths: shipped coverage not quoted"
# (one current sample of arm_2 changed in its last digit)
awk -F, -v OFS=, '/^#/ { print; next }
  !col { for (c = 1; c <= NF; c++) if ($c == "i_arm_2_joint") col = c; print; n = 0; next }
  ++n == 100 { $col = $col "1" } { print }' "$tiago/tiago_arm_log.csv" > "$work/tiago_changed.csv"
cmp -s "$tiago/tiago_arm_log.csv" "$work/tiago_changed.csv" && fail "the record was not changed"
(cd "$tiago/.." && "$binary" --robot=tiago/tiago_48_schunk.urdf "${tiago_flags[@]}" \
  --drives=tiago/tiago_drives.yaml --data="$work/tiago_changed.csv" --coverage_csv="$shipped" \
  --out_dir="$work/tiago_changed") > "$work/tiago_changed.log" 2>&1 ||
  fail "TIAGo run of a changed record exited non-zero: $(cat "$work/tiago_changed.log")"
grep -q "not measured for this setting" "$work/tiago_changed.log" ||
  fail "the coverage of the shipped record was quoted for a changed record"
# The shipped file with its settings line as written when ar1 was the default (no rule recorded).
sed '1s/ --hac_bandwidth=acf//' "$shipped" > "$work/tiago_unrecorded.csv"
cmp -s "$shipped" "$work/tiago_unrecorded.csv" && fail "the shipped settings do not record the rule"
(cd "$tiago/.." && "$binary" --robot=tiago/tiago_48_schunk.urdf "${tiago_flags[@]}"   --drives=tiago/tiago_drives.yaml --data=tiago/tiago_arm_log.csv   --coverage_csv="$work/tiago_unrecorded.csv" --out_dir="$work/tiago_unrecorded")   > "$work/tiago_unrecorded.log" 2>&1 ||
  fail "TIAGo run with an unrecorded rule exited non-zero: $(cat "$work/tiago_unrecorded.log")"
grep -q "not measured for this setting (.* without a recorded --hac_bandwidth, this run at .*--hac_bandwidth=acf" \
  "$work/tiago_unrecorded.log" ||
  fail "a coverage file without the HAC bandwidth rule was quoted: $(cat "$work/tiago_unrecorded.log")"
summary="$work/tiago/summary.json"
e() { json "$summary" "d['methods']['$1']['validation_relative_error']['$2']"; }
check "LS arm_1" "a <= 0.40" "$(e ls arm_1_joint)"
check "LS arm_2" "a <= 0.18" "$(e ls arm_2_joint)"
check "LS arm_3" "a <= 0.27" "$(e ls arm_3_joint)"
check "LS arm_4" "a <= 0.30" "$(e ls arm_4_joint)"
pooled() { json "$summary" "d['validation_relative_error']['$1']"; }
check "LS pooled" "a <= 0.20" "$(pooled ls)"
check "PC pooled no worse than LS + 10 %" "a <= 1.1 * b" "$(pooled pc)" "$(pooled ls)"
for joint in arm_1_joint arm_2_joint arm_3_joint arm_4_joint; do
  check "PC $joint no worse than LS + 10 %" "a <= 1.1 * b" "$(e pc $joint)" "$(e ls $joint)"
done
check "prior worse than LS" "a > b" "$(pooled prior)" "$(pooled ls)"
grep -q "not identifiable from this recording" "$work/tiago/report.md" ||
  fail "the report does not say that the inertial parameters are not identifiable"
grep -q "not uniform" "$work/tiago.log" || fail "the jittered time steps were not reported"
check "standard_parameters.csv rows" "a == 9" "$(wc -l < "$work/tiago/standard_parameters.csv")"

# 3. Bad input: exit 2, a message, nothing written.
good=(--robot="$work/turntable.yaml" --figures=false)
expect_exit 2 "--data" "${good[@]}"
expect_exit 2 "--robot" --data="$work/turntable.csv"
expect_exit 2 "--method: expected" "${good[@]}" --data="$work/turntable.csv" --method=best
expect_exit 2 "--chain=ROOT:TIP is needed" --robot="$tiago/tiago_48_schunk.urdf" \
  --data="$work/turntable.csv"
expect_exit 2 "arm_9_link" --robot="$tiago/tiago_48_schunk.urdf" \
  --chain=base_footprint:arm_9_link --data="$work/turntable.csv"
expect_exit 2 "--validation_fraction" "${good[@]}" --data="$work/turntable.csv" \
  --validation_fraction=2
sed '1s/tau_spin/torque_spin/' "$work/turntable.csv" > "$work/bad_column.csv"
expect_exit 2 "bad_column.csv:1:3: unknown column 'torque_spin'" "${good[@]}" \
  --data="$work/bad_column.csv"
sed '1s/q_spin/q_spun/' "$work/turntable.csv" > "$work/bad_joint.csv"
expect_exit 2 "bad_joint.csv:1:2: column 'q_spun' names no joint" "${good[@]}" \
  --data="$work/bad_joint.csv"
cut -d, -f1,3 "$work/turntable.csv" > "$work/no_q.csv"
expect_exit 2 "missing column 'q_spin'" "${good[@]}" --data="$work/no_q.csv"
sed '40s/^\([^,]*\),[^,]*,/\1,abc,/' "$work/turntable.csv" > "$work/bad_cell.csv"
expect_exit 2 "bad_cell.csv:40:2" "${good[@]}" --data="$work/bad_cell.csv"
sed '41s/^[^,]*,/0.1,/' "$work/turntable.csv" > "$work/bad_time.csv"
expect_exit 2 "bad_time.csv:41" "${good[@]}" --data="$work/bad_time.csv"
expect_exit 2 "--effort_joints: 'elbow'" "${good[@]}" --data="$work/turntable.csv" \
  --effort_joints=elbow
printf 'name: x\nconvention: modified\njoints:\n  - {name: a, type: revolute, alpha: 0, d: 0, theta: 0, r: 0, colour: red}\n' \
  > "$work/bad.yaml"
expect_exit 2 "bad.yaml:4" --robot="$work/bad.yaml" --data="$work/turntable.csv"
expect_exit 2 "no_such.csv" "${good[@]}" --data="$work/no_such.csv"
expect_exit 1 "IDIM-IV estimate not available: no reference trajectory" "${good[@]}" \
  --data="$work/turntable.csv" --method=iv
expect_exit 2 "--kp" "${good[@]}" --data="$work/turntable_ref.csv" --kp=1,2
expect_exit 2 "--iv_reference: expected" "${good[@]}" --data="$work/turntable.csv" \
  --iv_reference=cad
expect_exit 2 "--hac_bandwidth: expected ar1 or acf, got 'long'" "${good[@]}" \
  --data="$work/turntable.csv" --hac_bandwidth=long
expect_exit 2 "--hac_critical: expected fixed_b or normal, got 'wide'" "${good[@]}" \
  --data="$work/turntable.csv" --hac_critical=wide

# 4. The Monte Carlo. Torques of the turntable plus noise from a Park–Miller generator (the same
# numbers with every awk): white, or AR(1) with coefficient 0.98 (same marginal σ, 0.05 N m).
noisy_turntable() {  # noisy_turntable PHI SEED
  awk -v phi="$1" -v seed="$2" '
    function u() { seed = (16807 * seed) % 2147483647; return seed / 2147483647 }
    function gauss() { return sqrt(-2 * log(u())) * cos(6.283185307179586 * u()) }
    BEGIN {
      print "t,q_spin,tau_spin"
      zz = 0.35; fv = 0.8; fc = 0.4; off = 0.05; e = 0
      for (k = 0; k < 3000; k++) {
        t = k * 0.005
        q = 0.8 * sin(1.3 * t) + 0.3 * sin(3.1 * t + 0.4)
        qd = 0.8 * 1.3 * cos(1.3 * t) + 0.3 * 3.1 * cos(3.1 * t + 0.4)
        qdd = -0.8 * 1.69 * sin(1.3 * t) - 0.3 * 9.61 * sin(3.1 * t + 0.4)
        s = (qd > 0) - (qd < 0)
        e = phi * e + sqrt(1 - phi * phi) * 0.05 * gauss()
        printf "%.4f,%.12g,%.12g\n", t, q, zz * qdd + fv * qd + fc * s + off + e
      }
    }'
}
noisy_turntable 0 12345 > "$work/white.csv"
noisy_turntable 0.98 12345 > "$work/coloured.csv"
mc() {  # mc NAME DATA ARGS...: a Monte Carlo into $work/NAME
  local name="$1" data="$2"; shift 2
  "$binary" --robot="$work/turntable.yaml" --data="$work/$data" --figures=false \
    --out_dir="$work/$name" "$@" > "$work/$name.log" 2>&1 ||
    fail "Monte Carlo $name exited non-zero: $(cat "$work/$name.log")"
}
# coverage ESTIMATOR PARAMETER FILE: coverage_95 of the row.
coverage() {
  awk -F, -v e="$1" -v p="$2" 'NR > 1 && $1 == e && $2 == p { print $7 }' "$3"
}
mc white white.csv --monte_carlo=20 --monte_carlo_threads=2
mc coloured coloured.csv --monte_carlo=20 --monte_carlo_threads=2
mc coloured_iid coloured.csv --monte_carlo=20 --monte_carlo_threads=2 --monte_carlo_block=1
for f in coverage.csv monte_carlo_runs.csv summary.json; do
  [[ -s "$work/white/$f" ]] || fail "the Monte Carlo did not write $f"
done
grep -q "^# settings: identify --monte_carlo=20 --seed=1 " "$work/white/coverage.csv" ||
  fail "coverage.csv settings: $(head -1 "$work/white/coverage.csv")"
# 6 estimators (ls, ls_hac, wls, wls_hac, pc, pc_hac) × 4 parameters, the header and the settings.
check "coverage.csv rows" "a == 26" "$(wc -l < "$work/white/coverage.csv")"
for e in ls ls_hac wls wls_hac pc pc_hac; do
  for p in zz1r fv1 fc1 off1; do
    check "$e $p has 20 runs" "a == 20" \
      "$(awk -F, -v e=$e -v p=$p '$1 == e && $2 == p { print $3 }' "$work/white/coverage.csv")"
  done
done
grep -q "Does NOT cover: model error" "$work/white.log" ||
  fail "the console does not state what the bootstrap does not cover"
for p in zz1r fv1 fc1 off1; do
  check "white noise: LS $p calibrated" "a >= 0.85" \
    "$(coverage ls $p "$work/white/coverage.csv")"
  check "coloured noise: LS $p NOT calibrated" "a < 0.85" \
    "$(coverage ls $p "$work/coloured/coverage.csv")"
  check "coloured noise: HAC $p covers better than classical" "a >= b + 0.3" \
    "$(coverage ls_hac $p "$work/coloured/coverage.csv")" \
    "$(coverage ls $p "$work/coloured/coverage.csv")"
  check "coloured noise: the physically consistent fit's HAC $p covers better than its delta method" \
    "a >= b + 0.3" "$(coverage pc_hac $p "$work/coloured/coverage.csv")" \
    "$(coverage pc $p "$work/coloured/coverage.csv")"
  check "coloured noise, i.i.d. bootstrap: LS $p looks calibrated" "a >= 0.85" \
    "$(coverage ls $p "$work/coloured_iid/coverage.csv")"
done
# The HAC bandwidth of the lag-1 plug-in (--hac_bandwidth=ar1): its HAC σ cover better than the
# classical ones too; the rule is recorded in the settings at either value (the default acf as
# well, unlike other flags at their default) and in summary.json.
mc coloured_ar1 coloured.csv --monte_carlo=20 --monte_carlo_threads=2 --hac_bandwidth=ar1
grep -q "^# settings: .* --hac_bandwidth=ar1" "$work/coloured_ar1/coverage.csv" ||
  fail "coverage.csv settings without --hac_bandwidth=ar1: $(head -1 "$work/coloured_ar1/coverage.csv")"
grep -q "^# settings: .* --hac_bandwidth=acf" "$work/coloured/coverage.csv" ||
  fail "the default HAC bandwidth rule not in the settings: $(head -1 "$work/coloured/coverage.csv")"
# The HAC intervals use Kiefer & Vogelsang's fixed-b critical value by default (recorded in the
# settings and summary.json): wider than ± 1.96 σ, the classical ones exactly ± 1.96 σ.
grep -q "^# settings: .* --hac_critical=fixed_b" "$work/coloured/coverage.csv" ||
  fail "the default HAC critical value not in the settings: $(head -1 "$work/coloured/coverage.csv")"
check "summary.json records the HAC critical value" "a == 1" \
  "$(json "$work/coloured/summary.json" "int(d['monte_carlo']['hac_critical'] == 'fixed_b')")"
half_widths() {  # half_widths ESTIMATOR: smallest and largest (upper − estimate) / σ of the runs
  awk -F, -v e="$1" '$3 == e { c = ($9 - $6) / $7; if (n++ == 0 || c < lo) lo = c; if (c > hi) hi = c }
    END { print lo, hi }' "$work/coloured/monte_carlo_runs.csv"
}
read -r lo hi <<< "$(half_widths ls_hac)"
check "fixed-b HAC intervals wider than 1.96 sigma" "a > 2.0 && b < 4.9" "$lo" "$hi"
read -r lo hi <<< "$(half_widths ls)"
check "classical intervals at 1.96 sigma" "a > 1.9599 && b < 1.9601" "$lo" "$hi"
check "summary.json records the HAC bandwidth rule" "a == 1 && b == 1" \
  "$(json "$work/coloured_ar1/summary.json" "int(d['monte_carlo']['hac_bandwidth'] == 'ar1')")" \
  "$(json "$work/coloured/summary.json" "int(d['monte_carlo']['hac_bandwidth'] == 'acf')")"
for p in zz1r fv1 fc1 off1; do
  check "coloured noise, ar1 bandwidth: HAC $p covers better than classical" "a >= b + 0.3" \
    "$(coverage ls_hac $p "$work/coloured_ar1/coverage.csv")" \
    "$(coverage ls $p "$work/coloured_ar1/coverage.csv")"
done
check "automatic block length follows the colour" "a > 20 && b <= 3" \
  "$(json "$work/coloured/summary.json" "d['monte_carlo']['block_length_samples']")" \
  "$(json "$work/white/summary.json" "d['monte_carlo']['block_length_samples']")"
# Independent of the thread count; resumed = fresh.
mc six_t1 coloured.csv --monte_carlo=6 --monte_carlo_threads=1
mc six_t2 coloured.csv --monte_carlo=6 --monte_carlo_threads=2
mc resumed coloured.csv --monte_carlo=3 --monte_carlo_threads=1
mc resumed coloured.csv --monte_carlo=6 --monte_carlo_threads=2 --monte_carlo_resume
grep -q "3 runs resumed from the journal" "$work/resumed.log" || fail "no runs were resumed"
for f in coverage.csv monte_carlo_runs.csv; do
  cmp -s "$work/six_t1/$f" "$work/six_t2/$f" || fail "$f differs between 1 and 2 threads"
  cmp -s "$work/six_t1/$f" "$work/resumed/$f" || fail "$f of the resumed Monte Carlo differs"
done
# A single run quotes the coverage measured at its flags ...
"$binary" --robot="$work/turntable.yaml" --data="$work/coloured.csv" --method=ls --figures=false \
  --coverage_csv="$work/coloured/coverage.csv" --out_dir="$work/quoted" > "$work/quoted.log" 2>&1 ||
  fail "run with --coverage_csv exited non-zero: $(cat "$work/quoted.log")"
label=$(awk -F, '$1 == "zz1r" { print $17 }' "$work/quoted/parameters.csv")
[[ "$label" == "NOT calibrated (coverage $(printf %.2f "$(coverage ls zz1r "$work/coloured/coverage.csv")"))" ]] ||
  fail "parameters.csv coverage_label of zz1r: '$label'"
head -1 "$work/quoted/parameters.csv" | grep -q ",ls_to_pc_z,coverage_95,coverage_label," ||
  fail "parameters.csv columns: $(head -1 "$work/quoted/parameters.csv")"
head -1 "$work/quoted/parameters.csv" | grep -q ",pc_hac_std,pc_hac_coverage_95,pc_hac_coverage_label$" ||
  fail "parameters.csv columns: $(head -1 "$work/quoted/parameters.csv")"
label=$(awk -F, '$1 == "zz1r" { print $24 }' "$work/quoted/parameters.csv")
[[ "$label" == *"calibrated (coverage $(printf %.2f "$(coverage pc_hac zz1r "$work/coloured/coverage.csv")"))" ]] ||
  fail "parameters.csv pc_hac_coverage_label of zz1r: '$label'"
check "parameters.csv pc_hac_std of zz1r is a positive number" "a > 0" \
  "$(awk -F, '$1 == "zz1r" { print $22 }' "$work/quoted/parameters.csv")"
# The console line: calibrated count, median coverage, the three lowest coverages (lowest first),
# how many more are NOT calibrated.
expected_line=$(python3 - "$work/coloured/coverage.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
        if r["estimator"] == "ls"]
cov = [float(r["coverage_95"]) for r in rows]
bad = sorted([(float(r["coverage_95"]), i, r["parameter"]) for i, r in enumerate(rows)
              if r["calibrated"] == "0"])
line = "  ls      %d of %d calibrated, median coverage %.2f" % (
    len(rows) - len(bad), len(rows), statistics.median(cov))
every = [r for r in rows if r["covered"] == r["with_interval"]]
if every:
    line += ", %d cover in every run (%.1f expected)" % (
        len(every), sum(0.95 ** int(r["with_interval"]) for r in rows))
if bad:
    line += "; lowest: " + ", ".join("%s %.2f" % (p, c) for c, _, p in bad[:3])
    if len(bad) > 3:
        line += " (+%d more NOT calibrated)" % (len(bad) - 3)
print(line)
PY
)
grep -qxF -- "$expected_line" "$work/quoted.log" ||
  fail "console coverage line, expected '$expected_line': $(cat "$work/quoted.log")"
check "summary.json per_estimator" "a == 4 && b == 4" \
  "$(json "$work/quoted/summary.json" "d['coverage']['per_estimator']['ls']['parameters_with_interval']")" \
  "$(json "$work/quoted/summary.json" \
     "len(d['coverage']['per_estimator']['ls']['not_calibrated_lowest_first'])")"
# The settings record the files by content: quoted from another folder with relative paths and
# for a copy of the record elsewhere, not for a changed record at the same path.
grep -q "^# settings: .* --data=$work/coloured.csv#bytes=[0-9]*,fnv1a64=[0-9a-f]\{16\} " \
  "$work/coloured/coverage.csv" || fail "settings without the record's content: $(head -1 "$work/coloured/coverage.csv")"
mkdir -p "$work/elsewhere/deeper" && cp "$work/coloured.csv" "$work/elsewhere/copy.csv"
quote() {  # quote NAME FOLDER ARGS...: a single run with the coloured coverage from FOLDER
  local name="$1" folder="$2"; shift 2
  (cd "$folder" && "$binary" --method=ls --figures=false "$@" \
    --coverage_csv="$work/coloured/coverage.csv" --out_dir="$work/$name") > "$work/$name.log" 2>&1 ||
    fail "single run $name exited non-zero: $(cat "$work/$name.log")"
}
quote relative "$work/elsewhere/deeper" --robot=../../turntable.yaml --data=../../coloured.csv
grep -q "^  ls      0 of 4 calibrated" "$work/relative.log" || fail "not quoted with relative paths"
quote copied "$work/elsewhere" --robot="$work/turntable.yaml" --data=copy.csv
grep -q "^  ls      0 of 4 calibrated" "$work/copied.log" || fail "not quoted for a copy"
sed -i '100s/,\([-0-9.]*\)$/,\11/' "$work/elsewhere/copy.csv"
cmp -s "$work/coloured.csv" "$work/elsewhere/copy.csv" && fail "the copy was not changed"
quote changed "$work/elsewhere" --robot="$work/turntable.yaml" --data=copy.csv
grep -q "not measured for this setting" "$work/changed.log" || fail "quoted for a changed record"
# A settings line of an older file (paths without their content) compares the paths as given.
sed '1s/#bytes=[0-9]*,fnv1a64=[0-9a-f]*//g' "$work/coloured/coverage.csv" > "$work/older.csv"
grep -q "#bytes=" "$work/older.csv" && fail "older settings line still has contents"
(cd "$work" && "$binary" --robot="$work/turntable.yaml" --data="$work/coloured.csv" --method=ls \
  --figures=false --coverage_csv="$work/older.csv" --out_dir="$work/older") > "$work/older.log" 2>&1
grep -q "^  ls      0 of 4 calibrated" "$work/older.log" || fail "older settings line not quoted"
(cd "$work/elsewhere" && "$binary" --robot="$work/turntable.yaml" --data=../coloured.csv \
  --method=ls --figures=false --coverage_csv="$work/older.csv" --out_dir="$work/older2") \
  > "$work/older2.log" 2>&1
grep -q "not measured for this setting" "$work/older2.log" ||
  fail "older settings line quoted for another path string"
check "summary.json label" "a == 1" "$(json "$work/quoted/summary.json" \
  "int(d['coverage']['estimators']['ls']['fv1']['label'].startswith('NOT calibrated (coverage'))")"
# ... and not one measured at other flags.
"$binary" --robot="$work/turntable.yaml" --data="$work/coloured.csv" --figures=false \
  --rest_velocity=0.01 --coverage_csv="$work/coloured/coverage.csv" --out_dir="$work/other" \
  > "$work/other.log" 2>&1 || fail "run with other flags exited non-zero"
grep -q "not measured for this setting" "$work/other.log" || fail "coverage of other flags quoted"
[[ "$(awk -F, '$1 == "zz1r" { print $17 }' "$work/other/parameters.csv")" == \
   "coverage not measured" ]] || fail "coverage of other flags in parameters.csv"
# ... nor one measured with the other HAC bandwidth rule, in either direction; a single run
# records its rule and lags.
single() {  # single NAME COVERAGE ARGS...: a single run of the coloured record
  local name="$1" coverage_file="$2"; shift 2
  "$binary" --robot="$work/turntable.yaml" --data="$work/coloured.csv" --figures=false "$@" \
    --coverage_csv="$coverage_file" --out_dir="$work/$name" > "$work/$name.log" 2>&1 ||
    fail "single run $name exited non-zero: $(cat "$work/$name.log")"
}
single ar1_single "$work/coloured/coverage.csv" --hac_bandwidth=ar1
grep -q "not measured for this setting" "$work/ar1_single.log" ||
  fail "coverage of the acf HAC bandwidth quoted at --hac_bandwidth=ar1"
single ar1_default "$work/coloured_ar1/coverage.csv"
grep -q "not measured for this setting" "$work/ar1_default.log" ||
  fail "coverage of the ar1 HAC bandwidth quoted at the default acf"
single ar1_quoted "$work/coloured_ar1/coverage.csv" --hac_bandwidth=ar1
grep -q "^  ls_hac  .* of 4 calibrated" "$work/ar1_quoted.log" ||
  fail "coverage of the ar1 HAC bandwidth not quoted at --hac_bandwidth=ar1"
check "single run: summary.json HAC rule and lags" "a == 1 && b == 1 && c < d" \
  "$(json "$work/ar1_single/summary.json" "int(d['hac']['bandwidth'] == 'ar1')")" \
  "$(json "$work/quoted/summary.json" "int(d['hac']['bandwidth'] == 'acf')")" \
  "$(json "$work/ar1_single/summary.json" "d['hac']['lags']['ls']")" \
  "$(json "$work/quoted/summary.json" "d['hac']['lags']['ls']")"
grep -q -- "--hac_bandwidth=ar1" "$work/ar1_single/report.md" &&
  grep -q -- "--hac_bandwidth=acf" "$work/quoted/report.md" ||
  fail "report.md does not name the HAC bandwidth rule"
# A file whose settings line does not record the rule (written when ar1 was the default, which
# no line recorded) is quoted at neither rule, and the console says why.
sed '1s/ --hac_bandwidth=acf//' "$work/coloured/coverage.csv" > "$work/unrecorded.csv"
grep -q "hac_bandwidth" "$work/unrecorded.csv" && fail "the rule is still in the settings"
for rule in acf ar1; do
  single "unrecorded_$rule" "$work/unrecorded.csv" --hac_bandwidth=$rule
  grep -q "not measured for this setting (.* without a recorded --hac_bandwidth, this run at .*--hac_bandwidth=$rule" \
    "$work/unrecorded_$rule.log" ||
    fail "a file without the HAC bandwidth rule quoted at $rule: $(cat "$work/unrecorded_$rule.log")"
done
# Bad Monte Carlo flags.
mcgood=("${good[@]}" --data="$work/coloured.csv")
expect_exit 2 "--monte_carlo must be >= 0" "${mcgood[@]}" --monte_carlo=-1
expect_exit 2 "--monte_carlo_threads must be >= 0" "${mcgood[@]}" --monte_carlo=2 \
  --monte_carlo_threads=-1
expect_exit 2 "--monte_carlo_block must be >= 0" "${mcgood[@]}" --monte_carlo=2 \
  --monte_carlo_block=-3
expect_exit 2 "--monte_carlo_encoder_step must be >= 0" "${mcgood[@]}" --monte_carlo=2 \
  --monte_carlo_encoder_step=-1
expect_exit 2 "--monte_carlo_block applies to --monte_carlo=N only" "${mcgood[@]}" \
  --monte_carlo_block=5
expect_exit 2 "--seed applies to --monte_carlo=N only" "${mcgood[@]}" --seed=4
expect_exit 2 "--monte_carlo_resume needs --monte_carlo=N" "${mcgood[@]}" --monte_carlo_resume
expect_exit 2 "--coverage_csv is quoted by a single run" "${mcgood[@]}" --monte_carlo=2 \
  --coverage_csv="$work/coloured/coverage.csv"
expect_exit 2 "--coverage_csv: " "${mcgood[@]}" --coverage_csv="$work/no_such_coverage.csv"
# Resuming onto a journal of other settings.
rm -rf "$work/bad" && cp -r "$work/resumed" "$work/bad_resume"
"$binary" --robot="$work/turntable.yaml" --data="$work/white.csv" --figures=false \
  --out_dir="$work/bad_resume" --monte_carlo=6 --monte_carlo_resume > "$work/log" 2>&1
[[ $? -eq 2 ]] || fail "resume onto other settings: exit $?"
grep -qF -- "--monte_carlo_resume" "$work/log" || fail "resume message: $(cat "$work/log")"
cmp -s "$work/resumed/coverage.csv" "$work/bad_resume/coverage.csv" ||
  fail "a refused resume changed the outputs"
finish identify
