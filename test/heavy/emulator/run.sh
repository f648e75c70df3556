#!/bin/bash
# The AWS boundary of the instance scripts against an AWS API emulator (test/heavy/emulator/*.emu.ts): the venv with moto
# and the aws CLI (test/heavy/gates/setup.sh, requirements-dev.txt), nodeadm (nodeadm.sh), then the tests. Root: each
# run enters the emulator's network namespace and a mount namespace of its own. Extra arguments go to jest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
bash test/heavy/gates/setup.sh
# nodeadm for eks-node.emu.ts, built once into a cache (about 1 minute on a clean machine; run-all.sh starts it early).
bash test/heavy/emulator/nodeadm.sh >/dev/null
exec npx jest -c test/heavy/emulator/jest.config.js --ci "$@"
