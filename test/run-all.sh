#!/bin/bash
# The whole test suite, as the README's second command runs it (`npm test`): the linter, type check, unit tests, the packed
# library in fresh apps, and every further gate added to STEPS below. Prints one closing line that counts tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
passed=0
failed=0

step() {
  local name="$1"
  shift
  local started=$SECONDS
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok ($((SECONDS - started)) s)"
  else
    echo "=== $name: FAILED ($((SECONDS - started)) s)"
    failed=$((failed + 1))
  fi
}

# Adds the counts of a closing line `NAME: N passed, M failed` in a step's log to the totals.
count_line() {
  local line
  line="$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)" || return 0
  passed=$((passed + $(sed -E 's/^[a-z0-9-]+: ([0-9]+) passed.*/\1/' <<<"$line")))
  failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
}

# Adds a jest run's counts to the totals.
count_jest() {
  local file="$1"
  [ -f "$file" ] || return 0
  passed=$((passed + $(node -p "require('$file').numPassedTests")))
  failed=$((failed + $(node -p "require('$file').numFailedTests")))
}

# Whether this run boots the lab (below): LAB=skip leaves it out of a quick local run; CI always runs it.
lab_runs() { [ "${LAB:-run}" != skip ] || [ "${CI:-}" = true ]; }

# The lab's guest image (about 2 minutes on a clean clone) is built in the background while the steps before the lab
# run. Its host packages are installed first and in the foreground, so that no other step's apt-get meets apt's lock;
# the lab's own call of build.sh then waits for this build (its lock) or, had it failed, builds the image itself.
image_pid=
if lab_runs && [ "$(id -u)" -eq 0 ]; then
  bash test/heavy/lab/image/build.sh --host-deps 2>"$results/image.log" || true
  bash test/heavy/lab/image/build.sh >>"$results/image.log" 2>&1 &
  image_pid=$!
fi

# The two Python venvs (pip from PyPI, mostly downloads: about 1 minute for the gates' and 1.5 minutes for the jsii
# step's on a clean clone) are installed in the background from the start, beside the linter, the type check and the
# unit tests, which need neither. Each is waited for before the first step that uses it; that step's own setup call
# then finds it up to date (or, had this failed, installs it itself).
bash test/heavy/gates/setup.sh >"$results/venv-gates.log" 2>&1 &
venv_gates_pid=$!
bash test/heavy/jsii/setup.sh >"$results/venvs.log" 2>&1 &
venvs_pid=$!
# nodeadm (test/heavy/emulator/nodeadm.sh: Go modules from the proxy, then a build; about 1 minute on a clean machine) is
# built in the background too, for the emulator step's EKS node test; that step's own call then finds it cached.
bash test/heavy/emulator/nodeadm.sh >"$results/nodeadm.log" 2>&1 &
nodeadm_pid=$!

# Steps that run beside the foreground ones: each writes its output to a log, printed by `finish` once the foreground
# is done with it, under the step's own heading, as if it had run then.
declare -A bg_pid=()
background() {
  local name="$1"
  shift
  local started=$SECONDS
  (
    status=0
    "$@" >"$results/$name.log" 2>&1 || status=$?
    echo "$((SECONDS - started))" >"$results/$name.seconds"
    exit "$status"
  ) &
  bg_pid[$name]=$!
}
# finish NAME TITLE [follow]: waits for a background step and prints its log and its line (ok or FAILED, with its time);
# with `follow`, prints the log as it grows until the step ends (the lab's progress, live, once nothing else prints).
finish() {
  local name="$1" title="$2" follow="${3:-}" status=0
  echo "=== $title"
  if [ "$follow" = follow ]; then
    tail -n +1 -f --pid="${bg_pid[$name]}" "$results/$name.log" || true
    wait "${bg_pid[$name]}" || status=$?
  else
    wait "${bg_pid[$name]}" || status=$?
    cat "$results/$name.log"
  fi
  if [ "$status" -eq 0 ]; then
    echo "=== $title: ok ($(cat "$results/$name.seconds") s, in the background)"
  else
    echo "=== $title: FAILED (exit $status, $(cat "$results/$name.seconds" 2>/dev/null || echo '?') s, in the background)"
    failed=$((failed + 1))
  fi
}

# The linter first (eslint.config.mjs; test/lint.sh proves it on a canary): layout and unused names fail fast. Each
# of it and the type check uses one core, so the type check runs beside it and prints once the linter is done.
background type-check npx tsc --noEmit -p .
lint() { bash test/lint.sh | tee "$results/lint.log"; }
step "lint (lib/, bin/, bench/, test/)" lint
count_line "$results/lint.log"
finish type-check "type check (beside the linter)"
step "unit tests" npx jest --ci --maxWorkers=2 --json --outputFile="$results/unit.json"
count_jest "$results/unit.json"
# lib/ without import cycles (madge, type-only imports included), proved first on a two-module canary.
cycles() { bash test/cycles.sh | tee "$results/cycles.log"; }
step "lib/ without import cycles" cycles
count_line "$results/cycles.log"
# Where the time goes (a clean clone on two cores, sampled every 5 s): the lab's VMs keep both cores busy, while the
# steps between the unit tests and the lab left them idle about half the time (their downloads, the emulator's waits
# for signals and one-core tools). So the lab starts here, in the background, and the packed library, the gates, the
# jsii step, the emulator and the host runs share the cores with its first minutes; its log is followed live once
# they are done. The lab needs the gates' venv (moto): had its background install failed, it is tried once more here,
# before the lab and the gates both need it. The lab needs its image too, built in the background since the start: the
# lab's own call of build.sh waits for that build's lock, so the steps below start at once instead of waiting here
# (on a clean clone that build outlasted the unit tests by about 90 s, with one core idle).
wait "$venv_gates_pid" || { echo "the gates' venv's background install failed; trying again:"; tail -n 5 "$results/venv-gates.log"; bash test/heavy/gates/setup.sh || true; }
# The lab boots VMs (root, QEMU): the instance scripts, run from the synthesized user data on a real kernel.
# Here the scenarios, the mirrors, the AWS side with the emulator on the lab network, the kernel matrix (what
# depends on the kernel, on trixie's 6.12 and trixie-backports' 7.x) and a real CMS (WordPress) served through the
# mirror and the re-export, two files at once (test/heavy/lab/jest.config.js
# says why); `npm run test:lab` runs every lab file, with the harness's own smoke test, seeding and metrics. LAB=skip
# leaves it out of a quick local run; CI always runs it.
if lab_runs; then
  background lab bash test/heavy/lab/run.sh 'scenarios\.lab|mirror\.lab|aws\.lab|kernels\.lab|cms\.lab' --json --outputFile="$results/lab.json"
fi
# The packed library's step uses about one core (its fresh apps' installs from npm, then one tsc and one synth at a
# time); the independent gates run beside it, from their own venv.
background gates bash test/heavy/gates/run.sh
step "packed library in fresh apps (lowest and newest aws-cdk-lib)" bash test/heavy/package/pack-and-synth.sh
finish gates "independent gates (cfn-lint, shellcheck, cdk-nag, user data room)"
count_line "$results/gates.log"
# The scripts' AWS calls with the real aws CLI against an AWS API emulator (moto behind TLS, CloudFormation signals
# recorded, the lab's metadata service, only the permissions the template grants each role: test/heavy/emulator/authz.py)
# in a network namespace of its own: signals, the stable interface (test/heavy/emulator/; root; about 2 minutes on two
# cores, half of it ts-jest and synthesis, the rest mostly waiting). It runs beside the jsii step and the host runs,
# which share nothing with it (the jsii step rewrites README.md and .jsii for a moment; the emulator reads neither).
wait "$nodeadm_pid" || { echo "nodeadm's background build failed; the emulator step builds it:"; tail -n 5 "$results/nodeadm.log"; }
background emulator bash test/heavy/emulator/run.sh --json --outputFile="$results/emulator.json"
wait "$venvs_pid" || { echo "the jsii venv's background install failed; the jsii step installs it:"; tail -n 5 "$results/venvs.log"; }
# The jsii build, the Python package generated from it and the Go, Java and .NET sources, API.md against the code,
# the README's examples compiled in TypeScript and run in Python and Go, the sample stack written in Python and in Go
# synthesized and compared with the TypeScript one, and whether Maven Central serves an aws-cdk-lib for the Java
# sample (test/heavy/jsii/run.sh; about 1 to 2 minutes on two shared cores with the Go caches warm; a first run adds about
# 40 s to create .venv-python/ and about 45 s to download aws-cdk-go and compile the awscdk packages it uses).
jsii() { bash test/heavy/jsii/run.sh | tee "$results/jsii.log"; }
step "jsii: Python and Go packages and sample apps, Java and .NET sources, API.md" jsii
count_line "$results/jsii.log"
# The benchmark's cheap path (`npm run bench -- --smoke`: synthesis with one node, the table and the chart into a
# temporary folder) is not a step: a benchmark measures, it proves nothing about the library, and its 85-130 s of a core
# went to the lab's VMs instead (test/bench-docs.test.ts, a unit test, still holds the rendered docs to bench/figures.json).
# The mirrors' sync (find and rsync from apt) between local directories: what the copy holds after each kind
# of change, a full copy, a missing source, and its property test over generated trees (test/host/mirror-sync/run.sh;
# root; about 30 s).
msync() { bash test/host/mirror-sync/run.sh | tee "$results/mirror-sync.log"; }
step "mirror sync: real find and rsync between local directories" msync
count_line "$results/mirror-sync.log"
# The Amazon Linux 2023 branch of the scripts' package steps, with Debian's real dnf and rpm in a chroot against
# local repositories of AL2023's package names (test/host/al2023/run.sh; root). 15-45 s here with its Debian base kept in
# /var/cache/cdk-efs-cache/al2023; the first run on a machine adds 1-2 minutes (debootstrap from Debian's archive).
al2023() { bash test/host/al2023/run.sh | tee "$results/al2023.log"; }
step "Amazon Linux 2023 branch: real dnf in a chroot" al2023
count_line "$results/al2023.log"
finish emulator "AWS boundary: real aws CLI against an emulator"
count_jest "$results/emulator.json"
if lab_runs; then
  if [ -n "$image_pid" ]; then
    wait "$image_pid" || { echo "the lab image's background build failed; the lab built it again:"; tail -n 5 "$results/image.log"; }
  fi
  finish lab "lab: user data on a real kernel (QEMU)" follow
  count_jest "$results/lab.json"
fi

# What failed, again at the very end (a long log is often read from its tail): each failed jest test, with the first
# lines of its message.
for f in "$results"/*.json; do
  [ -f "$f" ] || continue
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const r = require(process.argv[1]);
    for (const s of r.testResults || []) for (const t of s.assertionResults || []) {
      if (t.status !== "failed") continue;
      console.log(`failed: ${t.fullName}`);
      const msg = (t.failureMessages || []).join("\n").replace(/\u001b\[[0-9;]*m/g, "").split("\n").slice(0, 25);
      for (const l of msg) console.log(`  ${l}`);
    }' "$f"
done
# What each failed lab VM said of itself (cloud-init's errors, failed units, FATAL lines; test/heavy/lab/harness/diagnose.ts).
if lab_runs; then
  npx ts-node -T -P tsconfig.json -e "require('./test/heavy/lab/harness/diagnose').printKept()" || true
fi
# The run's own wall time (test/heavy/lab/results/boots.ts records it with the steps' and the lab's figures).
echo "run: $SECONDS s"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
