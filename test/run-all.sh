#!/bin/bash
# The whole test suite, as the README's second command runs it (`npm test`): type check, unit tests, the packed
# library in a fresh app, and every further gate added to STEPS below. Prints one closing line that counts tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
passed=0
failed=0

step() {
  local name="$1"
  shift
  local started=$SECONDS
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok ($((SECONDS - started)) s)"
  else
    echo "=== $name: FAILED ($((SECONDS - started)) s)"
    failed=$((failed + 1))
  fi
}

# Adds a jest run's counts to the totals.
count_jest() {
  local file="$1"
  [ -f "$file" ] || return 0
  passed=$((passed + $(node -p "require('$file').numPassedTests")))
  failed=$((failed + $(node -p "require('$file').numFailedTests")))
}

step "type check" npx tsc --noEmit -p .
step "unit tests" npx jest --ci --json --outputFile="$results/unit.json"
count_jest "$results/unit.json"
step "packed library in a fresh app" bash test/package/pack-and-synth.sh

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
