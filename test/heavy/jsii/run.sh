#!/bin/bash
# The library as Construct Hub publishes it, in TypeScript, Python, Go, Java and .NET:
#   - jsii-pacmak generates the Go, Java and .NET packages' sources (--code-only, into a temporary folder: a jsii
#     error in any of them fails here, without Maven or a .NET SDK), then packs the npm package and builds the Python
#     package (dist/packages/python). Each run packs the npm package anew (its prepack runs the jsii build, the same
#     dist/lib TypeScript users get, and .jsii, and empties dist/), and --code-only holds for every target of a run,
#     so it takes two runs; the first costs about 10 s (7 s of them the jsii build);
#   - API.md, generated from .jsii by jsii-docgen, must equal the checked-in one (`npm run docgen` updates it);
#   - the README's TypeScript examples compile (jsii-rosetta --strict, with the fixtures in rosetta/), and rosetta's
#     Python translations of them, with the README's own Python examples, run and synthesize (readme_snippets.py);
#   - the wheel is installed into .venv-python/ (test/heavy/jsii/setup.sh: aws-cdk-lib, constructs and the jsii runtime
#     from PyPI, pinned in requirements-python.txt), test/heavy/jsii/app.py (the sample stack in Python) synthesizes, and
#     compare.ts holds its template against the TypeScript sample's (both of the default size, trial): the same
#     resources by type, the same logical ids, the same instance types;
#   - Go: test/heavy/jsii/go (go.mod and go.sum pin aws-cdk-go from the Go module proxy; its replace directive is pointed at
#     the generated module) is built with `go build`, which compiles only the awscdk packages the sample, the library
#     and the README's Go examples import; the sample app (main.go) synthesizes and compare.ts holds its template to
#     the TypeScript sample's as for Python; the pages' own Go examples run and synthesize (go/readme);
#   - every TypeScript example of the README and docs/ runs in TypeScript too, has its Go translation on
#     docs/go-examples.md, and synthesizes the same resources (logical ids and types) in Python and in Go as in
#     TypeScript (examples.ts). rosetta's Go
#     translations of the TypeScript examples are compiled too and reported, not counted: rosetta 5.9 writes Go that
#     does not compile (the README says how);
#   - Java: whether Maven Central serves an aws-cdk-lib at or above the floor of peerDependencies (one read of its
#     maven-metadata.xml). It has not so far (2.263.0), so the Java sample is not built; a line says so, and no check
#     fails. .NET is generated only: no .NET SDK installs from the registries this project uses.
# Prints each phase's time and ends with `jsii: N passed, M failed`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# jsii's tools warn on every start that they no longer support Node 20, which the project still runs on.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
# aws-cdk-lib's built-in template validation off for the sample apps and examples synthesized here (in TypeScript, and
# in Python and Go through the jsii kernel): without cdk.json's validateAgainstDefaultRules, which only the CLI reads,
# its findings are warnings in a report nothing here reads (test/util/synth-setup.ts says where it does assert).
export CDK_VALIDATION=false

passed=0
failed=0
now() { echo $(($(date +%s%N) / 1000000)); }
phase() { echo "--- $1: $(($(now) - $2)) ms"; }
check() {
  local name="$1"
  shift
  if "$@"; then echo "ok   $name"; passed=$((passed + 1)); else echo "FAIL $name"; failed=$((failed + 1)); fi
}

t="$(now)"; bash test/heavy/jsii/setup.sh; phase "venv" "$t"

t="$(now)"
check "jsii build and the Go, Java and .NET sources (jsii-pacmak --code-only)" \
  bash -c "npx jsii-pacmak --code-only --targets go java dotnet -o '$work/packages' >'$work/pacmak-code.log' 2>&1 || { cat '$work/pacmak-code.log'; exit 1; }"
phase "jsii-pacmak: Go, Java and .NET sources" "$t"
t="$(now)"
check "jsii build and Python package (jsii-pacmak)" bash -c "npx jsii-pacmak --targets python >'$work/pacmak.log' 2>&1 || { cat '$work/pacmak.log'; exit 1; }"
phase "jsii build and jsii-pacmak: Python" "$t"

t="$(now)"
# The docs/ pages' examples: rosetta compiles an assembly's README only, so for one run the pages are the README of
# the assembly (docs_readme.js), with the same fixtures and flags; the assembly is restored before the README's run.
docs_pages=(docs/*.md)
docs_typescript() {
  rm -f .jsii.tabl.json
  cp .jsii "$work/assembly.jsii"
  node test/heavy/jsii/docs_readme.js set .jsii "$work/docs-lines.json" "${docs_pages[@]}" >/dev/null
  local rc=0
  npx jsii-rosetta extract --strict --fail --compile --output "$work/tablet-docs.json" .jsii >"$work/rosetta-docs.log" 2>&1 || rc=$?
  cp "$work/assembly.jsii" .jsii
  rm -f .jsii.tabl.json
  [ "$rc" -eq 0 ] && node test/heavy/jsii/docs_readme.js python "$work/tablet-docs.json" "$work/docs-lines.json" "$work/readme" && return 0
  cat "$work/rosetta-docs.log"
  return 1
}
# shellcheck disable=SC2016 # JavaScript and awk, not shell
readme_typescript() {
  # No cached translations (rosetta's implicit tablet beside .jsii): every example is compiled anew.
  rm -f .jsii.tabl.json
  npx jsii-rosetta extract --strict --fail --compile --output "$work/tablet.json" .jsii >"$work/rosetta.log" 2>&1 &&
    node -e '
      const fs = require("fs");
      const [tablet, dir] = process.argv.slice(1);
      fs.mkdirSync(dir, { recursive: true });
      const snippets = Object.values(JSON.parse(fs.readFileSync(tablet, "utf8")).snippets);
      for (const s of snippets) {
        fs.writeFileSync(`${dir}/${String(s.location.field.line).padStart(4, "0")}.py`, `${s.translations.python.source}\n`);
      }
      console.log(`README.md: ${snippets.length} TypeScript examples compiled (jsii-rosetta --strict)`);' "$work/tablet.json" "$work/readme" &&
    # The README's and the pages' own Python examples join them, named by their page and line too.
    for page in README.md "${docs_pages[@]}"; do
      awk -v dir="$work/readme" -v name="$([ "$page" = README.md ] || basename "$page" .md | sed 's/^/docs-/;s/$/-/')" '
        /^```python$/ { file = sprintf("%s/%s%04d-python.py", dir, name, NR); inside = 1; next }
        /^```$/ && inside { inside = 0; close(file); next }
        inside { print > file }' "$page" || return 1
    done && echo "README.md and docs/: $(find "$work/readme" -name '*-python.py' | wc -l) Python examples of their own" && return 0
  cat "$work/rosetta.log"
  return 1
}
check "the docs pages' TypeScript examples compile (jsii-rosetta --strict, the README's fixtures)" docs_typescript
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
check "the Python sample app synthesizes" .venv-python/bin/python test/heavy/jsii/app.py "$work/cdk.out"
phase "Python sample app synth" "$t"

# Adds the closing line `NAME: N passed, M failed` of a sub-run's log to the counts (a missing line is a failure).
count() {
  local line
  line="$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" || echo "$1: 0 passed, 1 failed")"
  passed=$((passed + $(sed -E 's/^[a-z-]+: ([0-9]+) passed.*/\1/' <<<"$line")))
  failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
}
npx ts-node --transpile-only test/heavy/jsii/compare.ts "$work/cdk.out" | tee "$work/compare.log" || true
count compare "$work/compare.log"

t="$(now)"
touch "$work/readme.log"
if [ -d "$work/readme" ]; then
  .venv-python/bin/python test/heavy/jsii/readme_snippets.py "$work/readme" | tee "$work/readme.log" || true
fi
count readme "$work/readme.log"
phase "the README's examples in Python" "$t"
t="$(now)"
npx ts-node --transpile-only test/heavy/jsii/examples.ts run "$work/readme-ts.out" | tee "$work/readme-ts.log" || true
count readme-ts "$work/readme-ts.log"
phase "the README's and docs' examples in TypeScript" "$t"

# Go: a copy of test/heavy/jsii/go whose replace directive points at the generated module, with the README's Go examples
# (and rosetta's translations, apart) written into it. -mod=mod lets go add go.sum lines after a bump of aws-cdk-lib
# changes what the generated go.mod requires (from the Go module proxy, as any go build would).
go_dir="$work/go"
cp -r test/heavy/jsii/go "$go_dir"
mkdir -p "$go_dir/rosetta"
cp test/heavy/jsii/go/readme/fixture.go "$go_dir/rosetta/"
(cd "$go_dir" && go mod edit -replace "github.com/cdk-efs-cache/cdk-efs-cache-go/cdkefscache=$work/packages/go/cdkefscache")
t="$(now)"
go_build() {
  for page in README.md "${docs_pages[@]}"; do node test/heavy/jsii/go_examples.js readme "$page" "$go_dir/readme" || return 1; done &&
    (cd "$go_dir" && go build -mod=mod -o "$work/bin/" . ./readme)
}
check "the Go package, the Go sample app and the Go examples of the README and docs/ compile (go build)" go_build
phase "go build" "$t"
t="$(now)"
check "the Go sample app synthesizes" "$work/bin/cdkefscachesample" "$work/cdk.out.go"
phase "Go sample app synth" "$t"
t="$(now)"
npx ts-node --transpile-only test/heavy/jsii/compare.ts "$work/cdk.out.go" Go | tee "$work/compare-go.log" || true
count compare "$work/compare-go.log"
phase "Go template compared" "$t"
t="$(now)"
touch "$work/readme-go.log"
if [ -x "$work/bin/readme" ]; then
  "$work/bin/readme" "$work/readme-go.out" | tee "$work/readme-go.log" || true
fi
count readme-go "$work/readme-go.log"
phase "the README's examples in Go" "$t"

# Every TypeScript example has its Go translation on docs/go-examples.md, and synthesizes, in Python and in Go, the
# resources it synthesizes in TypeScript (test/heavy/jsii/examples.ts).
t="$(now)"
npx ts-node --transpile-only test/heavy/jsii/examples.ts go docs/go-examples.md "$work/go-pairs.json" | tee "$work/go-pairs.log" || true
count go-translations "$work/go-pairs.log"
touch "$work/examples.log"
if [ -f "$work/go-pairs.json" ]; then
  npx ts-node --transpile-only test/heavy/jsii/examples.ts compare "$work/readme-ts.out" "$work/readme" "$work/readme-go.out" \
    "$work/go-pairs.json" | tee "$work/examples.log" || true
fi
count examples "$work/examples.log"
phase "the examples compared across TypeScript, Python and Go" "$t"

# rosetta's Go translations of the README's TypeScript examples: compiled with the same fixture, reported, not counted.
t="$(now)"
if [ -f "$work/tablet.json" ]; then
  node test/heavy/jsii/go_examples.js rosetta "$work/tablet.json" "$go_dir/rosetta" >/dev/null
  written="$(find "$go_dir/rosetta" -name 'example_*.go' | wc -l)"
  if (cd "$go_dir" && go build -mod=mod -gcflags=-e -o /dev/null ./rosetta) >"$work/rosetta-go.log" 2>&1; then
    broken=0
  else
    broken="$(grep -oE '^rosetta/example_[0-9]+\.go' "$work/rosetta-go.log" | sort -u | wc -l)"
    # A failure that names no example (a module not downloaded, say) is not rosetta's.
    [ "$broken" -gt 0 ] || { tail -n 20 "$work/rosetta-go.log"; broken="$written"; }
  fi
  echo "note: $((written - broken)) of $written of jsii-rosetta's Go translations of the README's examples compile (not counted; README, Go)"
fi
phase "rosetta's Go translations compiled" "$t"

# Java: the Java sample needs an aws-cdk-lib at or above the floor from Maven Central (Maven's default repository:
# no mirror is configured); one read of the artifact's maven-metadata.xml tells.
t="$(now)"
floor="$(node -p 'require("./package.json").peerDependencies["aws-cdk-lib"].replace(/^[^0-9]*/, "")')"
central="https://repo.maven.apache.org/maven2"
newest="$(curl -fsS --max-time 30 "$central/software/amazon/awscdk/aws-cdk-lib/maven-metadata.xml" 2>/dev/null |
  sed -nE 's|.*<version>([0-9]+\.[0-9]+\.[0-9]+)</version>.*|\1|p' | sort -V | tail -n 1 || true)"
if [ -z "$newest" ]; then
  echo "note: Maven Central's list of aws-cdk-lib versions could not be read: the Java sample is not built"
elif [ "$(printf '%s\n%s\n' "$floor" "$newest" | sort -V | head -n 1)" = "$floor" ]; then
  echo "note: Maven Central serves aws-cdk-lib $newest, at or above the floor $floor: the Java sample can be built now (it is not yet: README, Java)"
else
  echo "note: Maven Central serves aws-cdk-lib $newest at most, below the floor $floor: the Java sample is not built (Java and .NET are generated only)"
fi
phase "Maven Central's aws-cdk-lib versions" "$t"

echo "jsii: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
