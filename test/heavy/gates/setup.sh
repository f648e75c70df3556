#!/bin/bash
# Installs the tools of the independent gates, idempotently:
#   - a project-local Python venv at .venv/ with requirements-dev.txt (cfn-lint; moto and the aws CLI for the AWS
#     boundary of test/heavy/emulator/), reinstalled only when that file changes (its hash is stamped into the venv);
#   - shellcheck from apt when it is not on PATH (CI runs as root on a fresh Debian/Ubuntu machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."

venv=.venv
requirements="requirements-dev.txt"
stamp="$venv/.requirements-dev.sha256"

want="$(sha256sum "$requirements" | cut -d' ' -f1)"
have=""
if [ -f "$stamp" ]; then
  have="$(cat "$stamp")"
fi

if [ ! -x "$venv/bin/python" ] || [ "$want" != "$have" ] || [ ! -x "$venv/bin/cfn-lint" ] || [ ! -x "$venv/bin/aws" ]; then
  echo "setup: installing $requirements into $venv"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  echo "$want" > "$stamp"
else
  echo "setup: $venv is up to date"
fi
"$venv/bin/cfn-lint" --version
"$venv/bin/aws" --version

if ! command -v shellcheck > /dev/null 2>&1; then
  echo "setup: installing shellcheck"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq shellcheck > /dev/null
fi
shellcheck --version | sed -n 2p
