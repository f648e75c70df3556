#!/bin/bash
# Runs the lab: builds the guest image if the recipe changed, then the lab jest suite (test/heavy/lab/**/*.lab.ts) two files
# at a time (jest.config.js says why; LAB_WORKERS=1 runs one at a time). Needs root (network namespaces, taps) and the
# repository's npm dependencies (npm ci).
# Arguments go to jest, e.g. `test/heavy/lab/run.sh smoke` runs only smoke.lab.ts.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../../.." && pwd)"
cd "${repo}"

[[ "$(id -u)" -eq 0 ]] || { echo "test/heavy/lab/run.sh: must run as root (ip netns, taps, QEMU)" >&2; exit 1; }
[[ -x node_modules/.bin/jest ]] || { echo "test/heavy/lab/run.sh: node_modules missing: run npm ci first" >&2; exit 1; }

started=${SECONDS}
bash "${here}/image/build.sh" > /dev/null
# aws.lab.ts runs the AWS API emulator (moto, from the venv of the gates) on the lab network.
bash "${repo}/test/heavy/gates/setup.sh" > /dev/null
echo "[lab] image ready in $((SECONDS - started)) s" >&2

# Each run keeps the diagnoses of its own failed VMs (test/heavy/lab/harness/diagnose.ts), nothing older.
rm -rf "${LAB_CACHE_DIR:-${repo}/.lab-cache}/failures"

# Whatever happens to jest, no VM, DNS server or namespace of the lab survives this script.
trap 'bash "${here}/harness/reaper.sh" sweep' EXIT

status=0
node_modules/.bin/jest -c "${here}/jest.config.js" ${LAB_WORKERS:+"--maxWorkers=${LAB_WORKERS}"} "$@" || status=$?
echo "[lab] done in $((SECONDS - started)) s (jest exit ${status}); logs in ${LAB_CACHE_DIR:-${repo}/.lab-cache}/logs/, failed VMs' journals in ${LAB_CACHE_DIR:-${repo}/.lab-cache}/failures/" >&2
exit "${status}"
