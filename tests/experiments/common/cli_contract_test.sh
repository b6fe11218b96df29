#!/usr/bin/env bash
# The command-line contract shared by every program (README.md, "Command-line contract"):
# --help exits 0 and lists the program's own flags before any gflags/glog flag; an unknown flag,
# a malformed value or a stray argument exits 2; an --out_dir that is a file exits 2 and creates
# nothing; SIGTERM leaves no staging folder; a rerun removes the outputs of the previous run that
# it does not write; flag values that reach library checks exit 2 without an abort. Every
# program only sees --help, --helpfull and arguments rejected at parsing, so the benchmarks
# (bench_*) take part without a timed run.
# Usage: cli_contract_test.sh PATH/TO/PROGRAM...
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
binary=/bin/false
source "$(dirname "$0")/../cli_test_lib.sh"

# expect_code CODE EXPECTED_SUBSTRING PROGRAM ARGS...: exit code, message, no abort.
expect_code() {
  local code_expected="$1" expected="$2" program="$3"; shift 3
  "$program" "$@" > "$work/log" 2>&1
  local code=$?
  [[ $code -eq $code_expected ]] ||
    fail "$(basename "$program") $*: exit $code (expected $code_expected): $(head -3 "$work/log")"
  grep -qF -- "$expected" "$work/log" ||
    fail "$(basename "$program") $*: message lacks '$expected': $(head -3 "$work/log")"
  if grep -qE "Check failed|\*\*\* Check failure|stack trace|Aborted" "$work/log"; then
    fail "$(basename "$program") $*: aborted: $(head -3 "$work/log")"
  fi
}

declare -A programs
for program in "$@"; do
  name=$(basename "$program")
  programs[$name]="$program"
  "$program" --help > "$work/help" 2>&1
  code=$?
  [[ $code -eq 0 ]] || fail "$name --help: exit $code"
  first_flag=$(grep -m1 -E '^  --' "$work/help")
  [[ -n "$first_flag" ]] || fail "$name --help lists no flag"
  if grep -qE '^  --(logtostderr|flagfile|v) ' "$work/help"; then
    fail "$name --help lists gflags/glog flags (they belong to --helpfull)"
  fi
  "$program" --helpfull > "$work/helpfull" 2>&1 || fail "$name --helpfull: exit $?"
  grep -qE '^  --logtostderr ' "$work/helpfull" || fail "$name --helpfull lacks glog's flags"
  [[ "$(grep -m1 -E '^  --' "$work/helpfull")" == "$first_flag" ]] ||
    fail "$name --helpfull does not start with the program's own flags"
  expect_code 2 "unknown flag --no_such_flag" "$program" --no_such_flag=1
  expect_code 2 "unexpected argument 'stray'" "$program" stray
  if grep -qE '^  --out_dir ' "$work/help"; then
    : > "$work/a_file"
    expect_code 2 "--out_dir" "$program" --out_dir="$work/a_file"
    expect_code 2 "--out_dir" "$program" --out_dir="$work/a_file/sub"
    [[ -s "$work/a_file" ]] && fail "$name wrote into the file given as --out_dir"
    [[ -e "$work/a_file/sub" ]] && fail "$name created something under a file"
  fi
  if grep -qE '^  --threads ' "$work/help"; then
    expect_code 2 "flag --threads: 'x' is not a valid int32 value" "$program" --threads=x
  fi
done

# Flag values that used to reach CHECKs in the library.
if [[ -n "${programs[make_example_data]:-}" ]]; then
  expect_code 2 "--duration_s must be in" "${programs[make_example_data]}" --duration_s=-1 \
    --out_dir="$work/example"
  [[ -e "$work/example" ]] && fail "make_example_data --duration_s=-1 created its out_dir"
fi
if [[ -n "${programs[tx40_bias]:-}" ]]; then
  expect_code 2 "--knowledge: unknown prior-knowledge level 'great'" "${programs[tx40_bias]}" \
    --knowledge=great
  expect_code 2 "--methods: unknown method 'idim_xx'" "${programs[tx40_bias]}" --methods=idim_xx
  expect_code 2 "--duration_s must be in" "${programs[tx40_bias]}" --duration_s=0
fi

if [[ -n "${programs[irw_smooth]:-}" ]]; then
  irw="${programs[irw_smooth]}"
  {
    echo "t,a"
    for k in $(seq 0 199); do echo "$k,$(( (k * k) % 17 ))"; done
  } > "$work/signal.csv"
  # A numerically meaningless NVR is a bad value, not a NaN result.
  expect_code 2 "--nvr=1e300 is out of range" "$irw" --input_csv="$work/signal.csv" --dt=0.01 \
    --time_column= --nvr=1e300 --out_dir="$work/nvr" --figures=false
  [[ -e "$work/nvr" ]] && fail "irw_smooth --nvr=1e300 created its out_dir"

  # A UTF-8 byte-order mark before the header is accepted; a ';' or tab separator is named.
  printf '\xef\xbb\xbf' > "$work/bom.csv"
  cat "$work/signal.csv" >> "$work/bom.csv"
  "$irw" --input_csv="$work/bom.csv" --out_dir="$work/bom" --figures=false > "$work/log" 2>&1 ||
    fail "irw_smooth rejected a CSV with a UTF-8 byte-order mark: $(head -3 "$work/log")"
  tr ',' ';' < "$work/signal.csv" > "$work/semicolon.csv"
  expect_code 2 "uses ';' as separator" "$irw" --input_csv="$work/semicolon.csv" \
    --out_dir="$work/semicolon" --figures=false
  [[ -e "$work/semicolon" ]] && fail "irw_smooth with a ';' CSV created its out_dir"
  tr ',' '\t' < "$work/signal.csv" > "$work/tab.csv"
  expect_code 2 "as separator" "$irw" --input_csv="$work/tab.csv" --out_dir="$work/tab" \
    --figures=false

  # A rerun replaces the previous run's results as a set; files dynid did not write stay.
  "$irw" --input_csv="$work/signal.csv" --out_dir="$work/set" --figures=false > /dev/null 2>&1 ||
    fail "irw_smooth good run failed"
  echo "stale" > "$work/set/smoothed.png"
  echo "smoothed.png" >> "$work/set/.dynid_outputs"
  echo "mine" > "$work/set/notes.txt"
  "$irw" --input_csv="$work/signal.csv" --out_dir="$work/set" --figures=false > /dev/null 2>&1 ||
    fail "irw_smooth rerun failed"
  [[ -e "$work/set/smoothed.png" ]] && fail "stale smoothed.png of an earlier run was kept"
  [[ -s "$work/set/notes.txt" ]] || fail "a file dynid did not write was removed"
  [[ -s "$work/set/smoothed.csv" ]] || fail "rerun lacks smoothed.csv"

  # Every program but an MPI rank starts itself again with glibc.malloc.hugetlb=1 added to
  # GLIBC_TUNABLES, unless that names the tunable already (experiments/common/cli.h); the
  # figure renderer inherits the environment the program ran with.
  printf '#!/bin/sh\necho "$GLIBC_TUNABLES" > "%s/tunables"\nexit 1\n' "$work" > "$work/python"
  chmod +x "$work/python"
  for given in - glibc.malloc.check=0 glibc.malloc.hugetlb=0; do
    case $given in
      -) expected=glibc.malloc.hugetlb=1 ;;
      glibc.malloc.check=0) expected=glibc.malloc.check=0:glibc.malloc.hugetlb=1 ;;
      *) expected=$given ;;
    esac
    rm -f "$work/tunables"
    if [[ $given == - ]]; then
      env -u GLIBC_TUNABLES DYNID_PYTHON="$work/python" "$irw" --input_csv="$work/signal.csv" \
        --out_dir="$work/pages" > /dev/null 2>&1
    else
      GLIBC_TUNABLES=$given DYNID_PYTHON="$work/python" "$irw" --input_csv="$work/signal.csv" \
        --out_dir="$work/pages" > /dev/null 2>&1
    fi
    [[ "$(cat "$work/tunables" 2> /dev/null)" == "$expected" ]] ||
      fail "GLIBC_TUNABLES '$given': the program ran with '$(cat "$work/tunables" 2> /dev/null)' (expected '$expected')"
  done

  # SIGTERM, and SIGINT to the whole process group (Ctrl-C), while a figure renders: the run
  # ends by the signal and leaves no staging folder (rendering keeps the staging folder open
  # for about a second, long enough to hit it).
  for signal in TERM INT; do
    rm -rf "$work/sig"
    setsid "$irw" --input_csv="$work/signal.csv" --out_dir="$work/sig" --figures=true \
      > "$work/sig.log" 2>&1 &
    pid=$!
    seen=0
    for _ in $(seq 1 500); do
      if compgen -G "$work/sig/.staging-*/*.figure.json" > /dev/null; then seen=1; break; fi
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.01
    done
    kill -"$signal" -- -"$pid" 2> /dev/null
    wait "$pid"
    code=$?
    if (( seen )); then
      expected=$([[ $signal == TERM ]] && echo 143 || echo 130)
      [[ $code -eq $expected ]] || fail "irw_smooth after SIG$signal: exit $code (expected $expected)"
      [[ -e "$work/sig/smoothed.csv" ]] && fail "SIG$signal during rendering committed results"
    fi
    sleep 0.2  # an orphaned renderer may still be finishing
    compgen -G "$work/sig/.staging-*" > /dev/null && fail "SIG$signal left a staging folder"
  done
fi

finish "contract"
