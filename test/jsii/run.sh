#!/bin/bash
# The library as Construct Hub publishes it, in TypeScript and Python:
#   - jsii-pacmak packs the npm package (its prepack runs the jsii build: the same dist/lib TypeScript users get, and
#     .jsii) and generates the Python package from it (dist/packages/python);
#   - API.md, generated from .jsii by jsii-docgen, must equal the checked-in one (`npm run docgen` updates it);
#   - the README's TypeScript examples compile (jsii-rosetta --strict, with the fixtures in rosetta/), and rosetta's
#     Python translations of them, with the README's own Python examples, run and synthesize (readme_snippets.py);
#   - the wheel is installed into .venv-python/ (test/jsii/setup.sh: aws-cdk-lib, constructs and the jsii runtime
#     from PyPI, pinned in requirements-python.txt), test/jsii/app.py (the sample stack in Python) synthesizes, and
#     compare.ts holds its template against the TypeScript sample's: the same resources by type, the same logical ids.
# Prints each phase's time and ends with `jsii: N passed, M failed`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# jsii's tools warn on every start that they no longer support Node 20, which the project still runs on.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

passed=0
failed=0
now() { echo $(($(date +%s%N) / 1000000)); }
phase() { echo "--- $1: $(($(now) - $2)) ms"; }
check() {
  local name="$1"
  shift
  if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

t="$(now)"; bash test/jsii/setup.sh; phase "venv" "$t"

t="$(now)"
check "jsii build and Python package (jsii-pacmak)" bash -c "npx jsii-pacmak --targets python >'$work/pacmak.log' 2>&1 || { cat '$work/pacmak.log'; exit 1; }"
phase "jsii build and jsii-pacmak" "$t"

t="$(now)"
# shellcheck disable=SC2016 # JavaScript and awk, not shell
readme_typescript() {
  # No cached translations (rosetta's implicit tablet beside .jsii): every example is compiled anew.
  rm -f .jsii.tabl.json
  npx jsii-rosetta extract --strict --fail --compile --output "$work/tablet.json" .jsii >"$work/rosetta.log" 2>&1 &&
    node -e '
      const fs = require("fs");
      const [tablet, dir] = process.argv.slice(1);
      fs.mkdirSync(dir);
      for (const s of Object.values(JSON.parse(fs.readFileSync(tablet, "utf8")).snippets)) {
        fs.writeFileSync(`${dir}/${String(s.location.field.line).padStart(4, "0")}.py`, `${s.translations.python.source}\n`);
      }' "$work/tablet.json" "$work/readme" &&
    # The README's own Python examples join them, named by their line too.
    awk -v dir="$work/readme" '
      /^```python$/ { file = sprintf("%s/%04d-python.py", dir, NR); inside = 1; next }
      /^```$/ && inside { inside = 0; close(file); next }
      inside { print > file }' README.md && return 0
  cat "$work/rosetta.log"
  return 1
}
check "the README's TypeScript examples compile (jsii-rosetta --strict)" readme_typescript
phase "jsii-rosetta" "$t"

t="$(now)"
api_drift() {
  npx jsii-docgen -o "$work/API.md" >/dev/null && diff -u API.md "$work/API.md" >"$work/api.diff" && return 0
  head -n 60 "$work/api.diff"
  echo "API.md is not what jsii-docgen makes of the code: run npm run docgen and commit API.md"
  return 1
}
check "API.md has no drift from the code (jsii-docgen)" api_drift
phase "jsii-docgen" "$t"

wheel="$(ls dist/packages/python/cdk_efs_cache-*.whl)"
t="$(now)"
.venv-python/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel"
phase "install $(basename "$wheel")" "$t"
t="$(now)"
check "the Python sample app synthesizes" .venv-python/bin/python test/jsii/app.py "$work/cdk.out"
phase "Python sample app synth" "$t"

# Adds the closing line `NAME: N passed, M failed` of a sub-run's log to the counts (a missing line is a failure).
count() {
  local line
  line="$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" || echo "$1: 0 passed, 1 failed")"
  passed=$((passed + $(sed -E 's/^[a-z]+: ([0-9]+) passed.*/\1/' <<<"$line")))
  failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
}
npx ts-node --transpile-only test/jsii/compare.ts "$work/cdk.out" | tee "$work/compare.log" || true
count compare "$work/compare.log"

t="$(now)"
touch "$work/readme.log"
if [ -d "$work/readme" ]; then
  .venv-python/bin/python test/jsii/readme_snippets.py "$work/readme" | tee "$work/readme.log" || true
fi
count readme "$work/readme.log"
phase "the README's examples in Python" "$t"

echo "jsii: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
