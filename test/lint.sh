#!/bin/bash
# The linter and formatter (eslint.config.mjs) over lib/, bin/, bench/ and test/: first proved on a canary it must
# reject (below), then run on the tree; and no line of test/ over 200 characters.
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
# The canary breaks one rule of each family: import order, member order, an unused name, and the formatter's quotes,
# semicolons, trailing spaces and empty lines. The linter must name every one.
canary() {
  local out rule
  out=$(printf '%s\n' "import { b } from './b';" "import * as fs from 'fs';" 'export class C {' '  m() { return fs; }' \
    '  x = b;' '}' 'const unused = "1"   ' '' '' '' |
    npx eslint --stdin --stdin-filename lib/lint-canary.ts 2>&1) && return 1
  for rule in import-x/order member-ordering no-unused-vars @stylistic/quotes @stylistic/semi no-trailing-spaces no-multiple-empty-lines; do
    grep -q "$rule" <<<"$out" || { echo "the linter did not report $rule"; return 1; }
  done
}
check "the linter rejects a canary (import order, member order, unused name, quotes, semicolon, spaces, empty lines)" canary
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
