#!/bin/bash
# lib/ without import cycles: madge (a devDependency) over every module of lib/, type-only imports included, fails on
# any cycle. First a canary: two modules that import each other (one of them `import type`, the kind of cycle that
# compiles and still ties two modules together) must be found as one cycle, so a madge that sees nothing (a wrong
# path, a parser that skips TypeScript) fails here instead of passing. Prints `cycles: N passed, M failed` last.
# MADGE overrides the command (default: the project's own madge, never a download).
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
echo "cycles: $passed passed, $failed failed"
[ "$failed" = 0 ]
