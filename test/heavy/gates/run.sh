#!/bin/bash
# The independent gates: install their tools (test/heavy/gates/setup.sh), then hold every synthesized template and
# script of the configuration matrix to cfn-lint and shellcheck (test/heavy/gates/run.ts).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
bash test/heavy/gates/setup.sh
npx ts-node --transpile-only test/heavy/gates/run.ts
