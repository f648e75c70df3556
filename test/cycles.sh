#!/bin/bash
# lib/ without import cycles: madge (a devDependency) over every module of lib/, type-only imports included, fails on
# any cycle. First a canary: two modules that import each other (one of them `import type`, the kind of cycle that
# compiles and still ties two modules together) must be found as one cycle, so a madge that sees nothing (a wrong
# path, a parser that skips TypeScript) fails here instead of passing. Prints `cycles: N passed, M failed` last.
# Then the folders (test/folder-layers.js): the graph of imports between lib/'s top-level folders (lib/*.ts being the
# folder "root"), type-only imports included, must have no cycle, and every import must go down the layers of lib/
# (private, then nfs and instance, fscache, origin and seeding, cache-fleet, client, containers, monitoring, root);
# each proved first on a canary tree. MADGE overrides the command (default: the project's own madge, never a download).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
read -r -a madge <<<"${MADGE:-npx --no-install madge}"
passed=0
failed=0

# Cycles madge finds under $1, as JSON (an array of cycles, each an array of modules); empty on a madge error.
cycles() {
  "${madge[@]}" --circular --json --no-spinner --extensions ts --ts-config tsconfig.json "$1" 2>/dev/null
}
count() { node -e 'const c = JSON.parse(require("fs").readFileSync(0, "utf8")); if (!Array.isArray(c)) process.exit(2); console.log(c.length)' 2>/dev/null; }

canary="$(mktemp -d)"
trap 'rm -rf "$canary"' EXIT
printf "import type { B } from './b';\nexport interface A { readonly b?: B }\nexport const a = 1;\n" >"$canary/a.ts"
printf "import { a } from './a';\nexport interface B { readonly a: number }\nexport const b = a + 1;\n" >"$canary/b.ts"
if [ "$(cycles "$canary" | count)" = 1 ]; then
  echo "  ok   the check finds a cycle of two modules, one import type"
  passed=$((passed + 1))
else
  echo "  FAIL the check does not find the canary's cycle (is madge installed? npm ci)"
  failed=$((failed + 1))
fi

out="$(cycles lib)"
n="$(count <<<"$out")" || n=""
if [ "$n" = 0 ]; then
  echo "  ok   lib/ has no import cycle"
  passed=$((passed + 1))
else
  echo "  FAIL lib/ has import cycles (or madge failed): ${out:-no output}"
  failed=$((failed + 1))
fi

# Runs the folder check `$1` (cycles or layers) over $2: prints its findings and returns its status.
folders() { node test/folder-layers.js "$1" "$2" 2>&1; }
mkdir -p "$canary/tree/a" "$canary/tree/b" "$canary/layers/private" "$canary/layers/nfs"
printf "import type { B } from '../b/b';\nexport interface A { readonly b?: B }\n" >"$canary/tree/a/a.ts"
printf "import { C } from './c';\nexport interface B { readonly c: C }\n" >"$canary/tree/b/b.ts"
printf "import { A } from '../a/a';\nexport interface C { readonly a: A }\n" >"$canary/tree/b/c.ts"
printf "import { PORT } from '../nfs/ports';\nexport const P = PORT;\n" >"$canary/layers/private/p.ts"
printf "export const PORT = 2049;\n" >"$canary/layers/nfs/ports.ts"
if out="$(folders cycles "$canary/tree")"; then
  echo "  FAIL the folder check does not find the canary's cycle of folders a and b (one import type): ${out:-no output}"
  failed=$((failed + 1))
elif grep -q '^cycle: a -> b -> a' <<<"$out"; then
  echo "  ok   the folder check finds a cycle of two folders, one import type"
  passed=$((passed + 1))
else
  echo "  FAIL the folder check failed on the canary without naming its cycle: ${out:-no output}"
  failed=$((failed + 1))
fi
if out="$(folders layers "$canary/layers")"; then
  echo "  FAIL the layer check lets private/ import nfs/ (the canary)"
  failed=$((failed + 1))
elif grep -q "private/p.ts imports '../nfs/ports'" <<<"$out"; then
  echo "  ok   the layer check names an import that goes up a layer"
  passed=$((passed + 1))
else
  echo "  FAIL the layer check failed on the canary without naming its import: ${out:-no output}"
  failed=$((failed + 1))
fi
if out="$(folders cycles lib)"; then
  echo "  ok   lib/'s folders import each other in no cycle"
  passed=$((passed + 1))
else
  echo "  FAIL lib/'s folders import each other in a cycle:"
  echo "$out" | sed 's/^/         /'
  failed=$((failed + 1))
fi
if out="$(folders layers lib)"; then
  echo "  ok   every import between lib/'s folders goes down the layers"
  passed=$((passed + 1))
else
  echo "  FAIL imports between lib/'s folders that do not go down the layers:"
  echo "$out" | sed 's/^/         /'
  failed=$((failed + 1))
fi
echo "cycles: $passed passed, $failed failed"
[ "$failed" = 0 ]
