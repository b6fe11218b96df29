#!/usr/bin/env bash
# The shared Monte Carlo journal (experiments/common/monte_carlo_cli.h) on a study whose runs carry
# their own measures (MonteCarloEstimate::measure) or draw their truth from their seed: a Monte
# Carlo of the last 2 seeds resumed to 3 reuses the journalled runs and writes exactly the CSV
# outputs of a fresh 3-seed Monte Carlo (every *.csv byte for byte); a resume onto other settings
# exits 2 naming the flag and changes nothing. With an MPI build: 2 ranks share the runs out, each journalling its
# own, and rank 0 writes exactly the fresh Monte Carlo's CSV outputs.
# Usage: monte_carlo_resume_study_test.sh PROGRAM --SEED_FLAG=FIRST_SEED OTHER_SETTING
#          [MPI_PROGRAM MPIEXEC] -- FLAGS...
# (SEED_FLAG: the program's first seed, --seed or --first_seed; OTHER_SETTING: a flag that changes
# the runs, e.g. --noise_scale=2; FLAGS: the study's quick settings.)
set -u
binary="$1"
seed_flag="${2%%=*}"
seed="${2#*=}"
other="$3"
shift 3
mpi=""
mpiexec="mpirun"
if [[ "$1" != "--" ]]; then
  mpi="$1"
  mpiexec="$2"
  shift 2
fi
shift  # --
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
common=("$@" --figures=false "$seed_flag=$seed")
records() { grep -c '^R ' "$1" 2>/dev/null || echo 0; }
# same_csv A B: every CSV output of folder A equals B's.
same_csv() {
  local f
  for f in "$1"/*.csv; do
    cmp -s "$f" "$2/$(basename "$f")" || fail "$(basename "$f") of $2 differs from $1's"
  done
}

"$binary" "${common[@]}" --monte_carlo=3 --monte_carlo_threads=2 --out_dir="$work/fresh" \
  > "$work/log_fresh" 2>&1 || fail "fresh 3-seed Monte Carlo failed: $(cat "$work/log_fresh")"
fresh_runs=$(records "$work/fresh/.monte_carlo_journal/journal-0.txt")
(( fresh_runs >= 3 && fresh_runs % 3 == 0 )) ||
  fail "the fresh run journalled $fresh_runs runs (a multiple of 3 expected)"
[[ -s "$work/fresh/monte_carlo_runs.csv" ]] || fail "no monte_carlo_runs.csv"

# The journal starts with the last 2 seeds (at positions 0 and 1 of their Monte Carlo): a run
# that depended on its position rather than its seed would differ from the fresh one's.
"$binary" "${common[@]}" "$seed_flag=$((seed + 1))" --monte_carlo=2 --monte_carlo_threads=2 \
  --out_dir="$work/resume" > "$work/log_2" 2>&1 || fail "2-seed Monte Carlo failed: $(cat "$work/log_2")"
"$binary" "${common[@]}" --monte_carlo=3 --monte_carlo_threads=1 --monte_carlo_resume \
  --out_dir="$work/resume" > "$work/log_3" 2>&1 ||
  fail "resumed 3-seed Monte Carlo failed: $(cat "$work/log_3")"
resumed=$((fresh_runs / 3 * 2))
grep -q "3 seeds ($seed..$((seed + 2))), .*; $resumed runs resumed from the journal" \
  "$work/log_3" || fail "the resumed run does not say it reused $resumed runs: $(cat "$work/log_3")"
same_csv "$work/fresh" "$work/resume"
python3 - "$work/resume/summary.json" "$resumed" "$fresh_runs" <<'PY' ||
import json, sys
mc = json.load(open(sys.argv[1]))["monte_carlo"]
resumed, total = int(sys.argv[2]), int(sys.argv[3])
assert mc["resumed_runs"] == resumed and mc["computed_runs"] == total - resumed, mc
PY
  fail "summary.json does not count the resumed runs"

# A resume onto a journal of other settings: exit 2 naming the flag, nothing changed.
# The folder's own entries and its time stamp, not its parent's ("ls -la" would list "..", whose
# time changes when the log below is written beside it).
listing() { (ls -lA --time-style=full-iso "$1"; stat -c %y "$1") | md5sum; }
before=$(listing "$work/resume")
"$binary" "${common[@]}" "$other" --monte_carlo=3 --monte_carlo_resume --out_dir="$work/resume" \
  > "$work/log_bad" 2>&1
code=$?
(( code == 2 )) || fail "resume onto other settings exited $code (expected 2)"
grep -q -- "--monte_carlo_resume: .*journal of other settings" "$work/log_bad" ||
  fail "no message naming the flag: $(cat "$work/log_bad")"
[[ "$(listing "$work/resume")" == "$before" ]] || fail "the refused resume changed out_dir"

if [[ -n "$mpi" ]]; then
  "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$mpi" "${common[@]}" --monte_carlo=3 \
    --monte_carlo_threads=1 --out_dir="$work/mpi" > "$work/log_mpi" 2>&1 ||
    fail "MPI Monte Carlo failed: $(cat "$work/log_mpi")"
  grep -q "1 thread(s) × 2 rank(s)" "$work/log_mpi" || fail "not 2 ranks: $(cat "$work/log_mpi")"
  total=0
  for r in 0 1; do
    n=$(records "$work/mpi/.monte_carlo_journal/journal-$r.txt")
    (( n > 0 )) || fail "rank $r journalled no run"
    total=$((total + n))
  done
  (( total == fresh_runs )) || fail "the ranks journalled $total runs, not $fresh_runs"
  same_csv "$work/fresh" "$work/mpi"
fi

if (( failures )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "$(basename "$binary") Monte Carlo journal${mpi:+ and MPI}: all checks passed"
