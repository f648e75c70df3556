#!/bin/bash
# The package as published. Packs the library with `npm pack` from a tree without dist/ (its prepack script must
# build what main and types point at), checks what the tarball holds (no sources or tests; the entry points, LICENSE,
# every file README.md links to), then installs it into two new, separate CDK apps in a temporary folder: one with
# the lowest aws-cdk-lib and constructs of the peer ranges in package.json, one with the newest 2.x and 10.x in the
# registry. In each, test/heavy/package/consumer-app.ts (every construct the package exports) is type-checked with
# --strict against the installed .d.ts (the package's and aws-cdk-lib's, no skipLibCheck), compiled, and run: it
# synthesizes and asserts on the templates. In the newest app, the quick start without alarmTopic runs under cdk-nag's
# NIST 800-53 R5 and HIPAA packs (test/heavy/package/consumer-nag.ts). Prints the versions used, and its runtime last.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$SECONDS

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cd "$root"
rm -rf dist
npm pack --silent --pack-destination "$work" >"$work/pack.log" || { cat "$work/pack.log"; fail "npm pack"; }
tarball="$(echo "$work"/*.tgz)"
[ -f "$tarball" ] || fail "npm pack wrote no tarball"
tar -tzf "$tarball" | sed 's#^package/##' | sort >"$work/files.txt"
echo "packed: $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KiB, $(wc -l <"$work/files.txt") files)"
if grep -E '^(test|bin|lib|bench)/' "$work/files.txt" >&2; then
  fail "the package ships sources or tests (above)"
fi
for file in "$(node -p "require('./package.json').main")" "$(node -p "require('./package.json').types")" \
  .jsii API.md assets/lib/common.sh README.md LICENSE; do
  grep -qxF "$file" "$work/files.txt" || fail "the package lacks $file"
done
# README.md and every docs/ page the package ships: each relative link names a file the package ships (but
# docs/benchmarks.md, written by `npm run bench`, whose link to bench/ tells how to run it from the repository).
# shellcheck disable=SC2046 # one word per packed page
npx ts-node --transpile-only test/heavy/package/readme-links.ts "$work/files.txt" README.md $(grep -E '^docs/.*\.md$' "$work/files.txt" | grep -vxF docs/benchmarks.md)

# The floors are the peer ranges' own: `^X.Y.Z` or `>=X.Y.Z <N`.
floor() {
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const range = require("./package.json").peerDependencies[process.argv[1]];
    const m = /^(?:\^|>=\s*)(\d+\.\d+\.\d+)(?:\s+<\s*\d+)?$/.exec(range);
    if (!m) { console.error(`peerDependencies.${process.argv[1]}: "${range}" is not ^X.Y.Z or >=X.Y.Z <N`); process.exit(1); }
    console.log(m[1]);' "$1"
}
cdk_floor="$(floor aws-cdk-lib)"
constructs_floor="$(floor constructs)"

# Installs the tarball with the given aws-cdk-lib and constructs into $work/NAME, then type-checks, compiles and
# runs the consumer app there. NPM_FLAGS: how fresh the registry's metadata must be.
consumer() {
  local name="$1" cdk_lib="$2" constructs="$3" npm_flags="$4"
  local app="$work/$name"
  mkdir -p "$app"
  cd "$app"
  echo '{ "name": "consumer-app", "version": "0.0.0", "private": true }' >package.json
  # shellcheck disable=SC2086 # npm_flags is one flag
  npm install --no-audit --no-fund --loglevel=error $npm_flags \
    "$tarball" "aws-cdk-lib@$cdk_lib" "constructs@$constructs" >/dev/null
  cp "$root/test/heavy/package/consumer-app.ts" .
  "$root/node_modules/.bin/tsc" --strict --noUnusedLocals --esModuleInterop --module commonjs --target es2022 \
    --lib es2022 --types node --typeRoots "$root/node_modules/@types" --outDir build consumer-app.ts
  node build/consumer-app.js cdk.out
  # The README's complete examples (```ts fixture=imports), each as copied into a file of its own: type-checked with
  # --strict against the installed package, compiled and run.
  mkdir -p readme
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const text = require("fs").readFileSync(process.argv[1], "utf8");
    const blocks = [...text.matchAll(/^```ts fixture=imports\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    if (blocks.length < 2) { console.error(`README.md: ${blocks.length} complete example(s), expected at least 2`); process.exit(1); }
    blocks.forEach((b, i) => require("fs").writeFileSync(`readme/example-${i + 1}.ts`, b));' "$root/README.md"
  local example
  for example in readme/example-*.ts; do
    "$root/node_modules/.bin/tsc" --strict --esModuleInterop --module commonjs --target es2022 \
      --lib es2022 --types node --typeRoots "$root/node_modules/@types" --outDir build/readme "$example"
    node "build/readme/$(basename "$example" .ts).js"
  done
  echo "README.md: $(find readme -name 'example-*.ts' | wc -l) complete examples compiled as copied and run"
  # The quick start without alarmTopic under NIST 800-53 R5 and HIPAA (test/heavy/package/consumer-nag.ts), where cdk-nag
  # installs: the version the project's tests use.
  if [ "$name" = newest ]; then
    # shellcheck disable=SC2086 # npm_flags is one flag
    npm install --no-audit --no-fund --loglevel=error $npm_flags "cdk-nag@$(node -p "require('$root/node_modules/cdk-nag/package.json').version")" >/dev/null
    cp "$root/test/heavy/package/consumer-nag.ts" .
    "$root/node_modules/.bin/tsc" --strict --noUnusedLocals --esModuleInterop --module commonjs --target es2022 \
      --lib es2022 --types node --typeRoots "$root/node_modules/@types" --outDir build consumer-nag.ts
    node build/consumer-nag.js cdk.out.nag
  fi
}

# Both apps at once (their installs share npm's cache). The lowest versions are exact: metadata and tarballs
# already in the cache are used as they are. The newest must be the registry's newest now: its metadata is
# revalidated.
consumer lowest "$cdk_floor" "$constructs_floor" --prefer-offline >"$work/lowest.log" 2>&1 &
lowest=$!
consumer newest '^2' '^10' --prefer-online >"$work/newest.log" 2>&1 &
newest=$!
status=0
wait "$lowest" || status=1
wait "$newest" || status=1
echo "lowest supported (the peer ranges' floors: aws-cdk-lib $cdk_floor, constructs $constructs_floor):"
sed 's/^/  /' "$work/lowest.log"
echo "newest 2.x (aws-cdk-lib@^2, constructs@^10 from the registry):"
sed 's/^/  /' "$work/newest.log"
[ "$status" = 0 ] || fail "a consumer app failed (above)"
grep -q "aws-cdk-lib $cdk_floor, constructs $constructs_floor)" "$work/lowest.log" ||
  fail "the lowest app did not run aws-cdk-lib $cdk_floor with constructs $constructs_floor"
echo "pack-and-synth: ok ($((SECONDS - started)) s)"
