#!/bin/bash
# The linter (eslint.config.mjs) over lib/, bin/, bench/ and test/: first proved on a canary it must reject (an
# unused name, trailing spaces, a run of empty lines), then run on the tree. Prints `lint: N passed, M failed` last.
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
echo "lint: $passed passed, $failed failed"
[ "$failed" = 0 ]
