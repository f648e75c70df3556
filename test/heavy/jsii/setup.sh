#!/bin/bash
# A project-local Python venv at .venv-python/ with requirements-python.txt (aws-cdk-lib, constructs and the jsii
# runtime for the Python sample app), reinstalled only when that file changes (its hash is stamped into the venv).
# The generated cdk-efs-cache wheel is installed by test/heavy/jsii/run.sh, fresh on every run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."

venv=.venv-python
requirements="requirements-python.txt"
stamp="$venv/.requirements-python.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ ! -x "$venv/bin/python" ] || [ "$want" != "$have" ]; then
  echo "setup: installing $requirements into $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  echo "$want" >"$stamp"
else
  echo "setup: $venv is up to date"
fi
