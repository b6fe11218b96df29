#!/usr/bin/env bash
# The shared Monte Carlo command line (experiments/common/monte_carlo_cli.h), end to end on
# scara_study: a Monte Carlo journals its runs; --monte_carlo_resume with more seeds computes only
# the new ones and gives exactly the runs of a fresh Monte Carlo; a resume onto other settings, or
# without --monte_carlo, exits 2 naming the flag and writes nothing; without --monte_carlo_resume
# an old journal is discarded. With an MPI build: 2 ranks share the runs out, each journalling
# its own, and rank 0 writes exactly the fresh Monte Carlo's runs.
# Usage: monte_carlo_resume_test.sh PATH/TO/scara_study [PATH/TO/scara_study_mpi MPIEXEC]
set -u
binary="$1"
mpi="${2:-}"
mpiexec="${3:-mpirun}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
common=(--figures=false --duration_s=3 --seed=11 --monte_carlo_threads=2)
records() { grep -c '^R ' "$1" 2>/dev/null || echo 0; }

"$binary" "${common[@]}" --monte_carlo=4 --out_dir="$work/fresh" > "$work/log_fresh" 2>&1 ||
  fail "fresh 4-seed Monte Carlo failed: $(cat "$work/log_fresh")"
(( $(records "$work/fresh/.monte_carlo_journal/journal-0.txt") == 4 )) ||
  fail "the fresh run did not journal 4 runs"

"$binary" "${common[@]}" --monte_carlo=2 --out_dir="$work/resume" > "$work/log_2" 2>&1 ||
  fail "2-seed Monte Carlo failed: $(cat "$work/log_2")"
"$binary" "${common[@]}" --monte_carlo=4 --monte_carlo_resume --out_dir="$work/resume" \
  > "$work/log_4" 2>&1 || fail "resumed 4-seed Monte Carlo failed: $(cat "$work/log_4")"
grep -q "4 seeds (11..14), .*; 2 runs resumed from the journal" "$work/log_4" ||
  fail "the resumed run does not say it reused 2 runs: $(cat "$work/log_4")"
cmp -s "$work/fresh/monte_carlo_runs.csv" "$work/resume/monte_carlo_runs.csv" ||
  fail "resumed runs differ from the fresh Monte Carlo's"
python3 - "$work/resume/summary.json" <<'PY' || fail "summary.json does not count the resumed runs"
import json, sys
mc = json.load(open(sys.argv[1]))["monte_carlo"]
assert mc["resumed_runs"] == 2 and mc["computed_runs"] == 2 and mc["seeds"] == 4, mc
PY

# coverage.csv records how it was measured; a single run quoting it says when its own flags differ.
head -1 "$work/fresh/coverage.csv" |
  grep -q "^# settings: scara_study --monte_carlo=4 --seed=11 --duration_s=3$" ||
  fail "coverage.csv does not record its settings: $(head -1 "$work/fresh/coverage.csv")"
"$binary" --figures=false --duration_s=3 --seed_repeats=0 --coverage_csv="$work/fresh/coverage.csv"   --out_dir="$work/same" > "$work/log_same" 2>&1 || fail "single run failed: $(cat "$work/log_same")"
"$binary" --figures=false --duration_s=4 --seed_repeats=0 --coverage_csv="$work/fresh/coverage.csv"   --out_dir="$work/other" > "$work/log_other" 2>&1 || fail "single run failed: $(cat "$work/log_other")"
python3 - "$work/same/summary.json" "$work/other/summary.json" <<'PY' || fail "other settings not stated"
import json, sys
same, other = (json.load(open(p)) for p in sys.argv[1:3])
assert "std_calibration_other_settings" not in same, same.get("std_calibration_other_settings")
note = other["std_calibration_other_settings"]
assert "--duration_s=3" in note and "--duration_s=4" in note, note
PY
grep -q "not measured at this run's settings: measured by scara_study at --duration_s=3, this run at --duration_s=4" \
  "$work/log_other" || fail "the console does not state the other settings: $(cat "$work/log_other")"
grep -q "measured at other settings" "$work/other/estimates.csv" ||
  fail "estimates.csv labels do not say 'measured at other settings'"

# A resume onto a journal of other settings, or without --monte_carlo: exit 2, nothing written.
# The folder's own entries and its time stamp, not its parent's ("ls -la" would list "..", whose
# time changes when the log below is written beside it).
listing() { (ls -lA --time-style=full-iso "$1"; stat -c %y "$1") | md5sum; }
before=$(listing "$work/resume")
"$binary" "${common[@]}" --monte_carlo=4 --monte_carlo_resume --noise_scale=2 \
  --out_dir="$work/resume" > "$work/log_bad" 2>&1
code=$?
(( code == 2 )) || fail "resume onto other settings exited $code (expected 2)"
grep -q -- "--monte_carlo_resume: .*journal of other settings" "$work/log_bad" ||
  fail "no message naming the flag: $(cat "$work/log_bad")"
[[ "$(listing "$work/resume")" == "$before" ]] || fail "the refused resume changed out_dir"
"$binary" --figures=false --monte_carlo_resume --out_dir="$work/none" > "$work/log_none" 2>&1
code=$?
(( code == 2 )) || fail "--monte_carlo_resume without --monte_carlo exited $code (expected 2)"
[[ -e "$work/none" ]] && fail "--monte_carlo_resume without --monte_carlo wrote $work/none"

# Without --monte_carlo_resume the old journal is discarded: all runs computed again.
"$binary" "${common[@]}" --monte_carlo=2 --noise_scale=2 --out_dir="$work/resume" \
  > "$work/log_new" 2>&1 || fail "a fresh run over an old journal failed: $(cat "$work/log_new")"
grep -q "resumed" "$work/log_new" && fail "a run without --monte_carlo_resume resumed"
(( $(records "$work/resume/.monte_carlo_journal/journal-0.txt") == 2 )) ||
  fail "the old journal was not discarded"

if [[ -n "$mpi" ]]; then
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$mpi" "${common[@]}" --monte_carlo=4 \
    --monte_carlo_threads=1 --out_dir="$work/mpi" > "$work/log_mpi" 2>&1 ||
    fail "MPI Monte Carlo failed: $(cat "$work/log_mpi")"
  grep -q "1 thread(s) × 2 rank(s)" "$work/log_mpi" || fail "not 2 ranks: $(cat "$work/log_mpi")"
  for r in 0 1; do
    (( $(records "$work/mpi/.monte_carlo_journal/journal-$r.txt") == 2 )) ||
      fail "rank $r did not journal 2 of the 4 runs"
  done
  cmp -s "$work/fresh/monte_carlo_runs.csv" "$work/mpi/monte_carlo_runs.csv" ||
    fail "the MPI runs differ from the threaded Monte Carlo's"
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$mpi" --figures=false \
    --out_dir="$work/mpi_single" > "$work/log_mpi_single" 2>&1
  code=$?
  (( code == 2 )) || fail "an MPI job without --monte_carlo exited $code (expected 2)"
fi

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "Monte Carlo journal${mpi:+ and MPI}: all checks passed"
