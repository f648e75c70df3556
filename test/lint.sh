#!/bin/bash
# The linter (eslint.config.mjs) over lib/, bin/, bench/ and test/: first proved on a canary it must reject (an
# unused name, trailing spaces, a run of empty lines), then run on the tree; and no line of test/ over 200 characters.
# Prints `lint: N passed, M failed` last.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
passed=0
failed=0
check() {
  local name="$1"
  shift
  if "$@"; then
    echo "ok - $name"
    passed=$((passed + 1))
  else
    echo "not ok - $name"
    failed=$((failed + 1))
  fi
}
canary() {
  local out
  out=$(printf 'const unused = 1;   \n\n\n\nexport const x = 2;\n' |
    npx eslint --stdin --stdin-filename lib/lint-canary.ts 2>&1) && return 1
  grep -q 'no-unused-vars' <<<"$out" && grep -q 'no-trailing-spaces' <<<"$out" && grep -q 'no-multiple-empty-lines' <<<"$out"
}
check "the linter rejects a canary (unused name, trailing spaces, empty lines)" canary
check "lib/, bin/, bench/ and test/ pass the linter" npx eslint --max-warnings 0 lib bin bench test
# Every file of test/ (scripts and pages too, which eslint does not read), whatever it holds: no line over 200
# characters. Snapshots and recorded JSON are written by tools.
long_test_lines() {
  local long
  long=$(git ls-files -z test | grep -zv -e '__snapshots__/' -e '\.json$' | xargs -0 awk 'length > 200 { print FILENAME ":" FNR ": " length " characters" }')
  [ -z "$long" ] || { echo "$long"; return 1; }
}
check "no line of test/ is over 200 characters" long_test_lines
echo "lint: $passed passed, $failed failed"
[ "$failed" = 0 ]
