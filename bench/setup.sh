#!/bin/bash
# Installs the benchmark's chart tools into the project-local venv .venv (the one test/heavy/gates/setup.sh makes), from the
# pinned requirements-bench.txt; reinstalled only when that file changes (its hash is stamped into the venv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.venv
requirements=requirements-bench.txt
stamp="$venv/.requirements-bench.sha256"

want="$(sha256sum "$requirements" | cut -d' ' -f1)"
have="$(cat "$stamp" 2> /dev/null || true)"
if [ ! -x "$venv/bin/python" ] || [ "$want" != "$have" ]; then
  echo "bench setup: installing $requirements into $venv" >&2
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  echo "$want" > "$stamp"
fi
"$venv/bin/python" -c 'import matplotlib; print("matplotlib", matplotlib.__version__)' >&2
