# Helpers shared by the *_cli_test.sh scripts. Source it after setting `binary` (the program)
# and `work` (a scratch folder): it defines fail, check, expect_exit and finish.

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check DESCRIPTION AWK_CONDITION VALUES...: the condition on a, b, c, d (the values, "nan" when
# missing) must hold.
check() {
  local what="$1" condition="$2"; shift 2
  awk -v a="${1:-nan}" -v b="${2:-nan}" -v c="${3:-nan}" -v d="${4:-nan}" \
    "BEGIN { exit !($condition) }" || fail "$what ($*)"
}

# expect_exit CODE EXPECTED_SUBSTRING ARGS...: the binary run with --out_dir="$work/bad" and ARGS
# exits with CODE, prints EXPECTED_SUBSTRING, and leaves no outputs behind.
expect_exit() {
  local code_expected="$1" expected="$2"; shift 2
  rm -rf "$work/bad"
  "$binary" --out_dir="$work/bad" "$@" > "$work/log" 2>&1
  local code=$?
  [[ $code -eq $code_expected ]] || fail "exit code $code (expected $code_expected) for: $*"
  grep -qF -- "$expected" "$work/log" || fail "message for '$*' lacks '$expected': $(cat "$work/log")"
  if [[ -d "$work/bad" ]] && [[ -n "$(ls -A "$work/bad")" ]]; then
    fail "outputs left behind for: $*"
  fi
}

# finish NAME: the summary line and the exit status.
finish() {
  if (( failures )); then
    echo "$failures failure(s)"
    exit 1
  fi
  echo "$1 CLI: all checks passed"
}
