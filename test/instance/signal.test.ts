/**
 * When the rendered user data tells CloudFormation how a bootstrap ended: only the first-boot run may signal. The
 * installed copy of a cache node's user data also runs as `--warm` (efs-cache-warm.service, before nfsd, on every
 * boot and once during the first boot); a signal from that run would report the node before it serves, and its
 * once-only marker would silence the first-boot run's own result. The scripts run on this host in a sandbox
 * (test/util/run-script.ts) with the metadata service and the aws CLI stubbed; that the first-boot SUCCESS comes
 * only after nfsd serves is the lab's to prove on a real kernel.
 */
import { renderedCode } from '../../lib/instance/user-data';
import { labUserData } from '../heavy/lab/scenarios/stacks';
import { runScript, signals } from '../util/run-script';
import { parameters } from '../util/user-data';

describe('CloudFormation signals of the rendered user data', () => {
  const ud = labUserData();

  const tags = ud.nodeTags[0];

  test('the lab user data signals: stack and region are set, the resource comes from the node\'s tags', () => {
    const p = parameters(ud.cacheNode);
    expect(p.EFSC_SIGNAL_STACK).toBe('Lab');
    expect(p.EFSC_SIGNAL_REGION).toBe('us-east-1');
    expect(p.EFSC_NODE_IDENTITY).toBe('tags');
    expect(tags['cdk-efs-cache:signal-resource']).toMatch(/^FleetNode1GroupASG/);
  });

  test('a cache node run with --warm (the boot unit) never signals', () => {
    const run = runScript(ud.cacheNode, ['--warm'], { tags });
    // Here the origin is not mounted, so warming fails: the status says the mode really ran.
    expect(run.stderr).toMatch(/efs-cache: FATAL: the origin is not mounted at \/efs/);
    expect(run.status).toBe(1);
    expect(signals(run)).toEqual([]);
    expect(run.calls.filter((c) => c.startsWith('curl '))).toEqual([]);
  });

  test('a first-boot run signals exactly once, FAILURE, when its parameters are bad', () => {
    const bad = ud.cacheNode.replace(/^EFSC_NFSD_THREADS='16'$/m, "EFSC_NFSD_THREADS='many'");
    expect(bad).not.toBe(ud.cacheNode);
    const run = runScript(bad, [], { tags });
    expect(run.stderr).toMatch(/FATAL: EFSC_NFSD_THREADS='many' is invalid/);
    expect(signals(run)).toEqual(['FAILURE']);
    expect(run.calls.find((c) => c.startsWith('aws cloudformation'))).toContain(
      `--stack-name Lab --logical-resource-id ${tags['cdk-efs-cache:signal-resource']} --unique-id i-0123456789abcdef0 --status FAILURE`,
    );
  });

  test('a metadata service that times out twice is asked again: the node still finds its resource', () => {
    const bad = ud.cacheNode.replace(/^EFSC_NFSD_THREADS='16'$/m, "EFSC_NFSD_THREADS='many'");
    const run = runScript(bad, [], { tags, imdsTimeouts: 2 });
    expect(run.stderr).toMatch(/retry 2\/3: imds_once meta-data\/tags\/instance/);
    expect(run.stderr).not.toMatch(/cannot read the instance tags/);
    expect(run.calls.find((c) => c.startsWith('aws cloudformation'))).toContain(
      `--logical-resource-id ${tags['cdk-efs-cache:signal-resource']} --unique-id i-0123456789abcdef0 --status FAILURE`,
    );
  });

  test.each([
    ['Amazon Linux 2', 'NAME="Amazon Linux"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n', /FATAL: unsupported OS: Amazon Linux 2 \(need/],
    ['Amazon Linux 1', 'NAME="Amazon Linux AMI"\nID="amzn"\nID_LIKE="rhel fedora"\nVERSION_ID="2018.03"\n', /FATAL: unsupported OS: Amazon Linux 2018\.03 /],
    ['an OS of another family', 'NAME="openSUSE Leap"\nID="opensuse-leap"\nID_LIKE="suse opensuse"\nVERSION_ID="15.6"\n', /FATAL: unsupported OS: opensuse-leap suse opensuse \(need/],
  ])('a first boot on %s ends with one FATAL line that names it, and signals FAILURE', (_os, osRelease, fatal) => {
    const run = runScript(ud.cacheNode, [], { tags, osRelease });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(fatal);
    expect(run.stderr.match(/FATAL:/g)).toHaveLength(1);
    expect(signals(run)).toEqual(['FAILURE']);
  });

  test('a node that cannot read its tags fails, and has nothing to signal to', () => {
    const run = runScript(ud.cacheNode);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: cannot read the instance tags/);
    expect(run.stderr).toMatch(/WARN: no resource to signal FAILURE to/);
    expect(signals(run)).toEqual([]);
  });
});

test('without the aws CLI and no way to install it, a signal is a warning, never a second FATAL line', () => {
  // The sandbox's package managers fail: the subshell's install gives up. Run the seeder-like path: a node with bad
  // parameters on an image without aws (the stub removed by shadowing it with a failing command), whose code an
  // earlier boot kept (without it, the loader could not fetch the code: the next test).
  const ud = labUserData();
  const bad = ud.cacheNode.replace(/^EFSC_NFSD_THREADS='16'$/m, "EFSC_NFSD_THREADS='many'")
    .replace('#!/bin/bash\n', '#!/bin/bash\naws() { return 127; }\ncommand() { [ "$2" = aws ] && return 1; builtin command "$@"; }\n');
  const run = runScript(bad, [], { tags: ud.nodeTags[0], keptCode: renderedCode(ud.cacheNode) });
  expect(run.stderr.match(/FATAL/g)).toHaveLength(1);
  expect(run.stderr).toMatch(/FATAL: EFSC_NFSD_THREADS='many' is invalid/);
  expect(run.stderr).toMatch(/WARN: no curl or aws CLI, cannot signal FAILURE/);
});

test('without the aws CLI, no way to install it and no kept code, the loader stops with one FATAL line, runs none of the code, and tries to signal FAILURE itself', () => {
  const ud = labUserData();
  const noAws = ud.cacheNode.replace('#!/bin/bash\n', '#!/bin/bash\naws() { return 127; }\ncommand() { [ "$2" = aws ] && return 1; builtin command "$@"; }\n');
  const run = runScript(noAws, [], { tags: ud.nodeTags[0] });
  expect(run.status).toBe(1);
  expect(run.stderr.split('\n')[0]).toBe('efs-cache: FATAL: cannot install awscli-2 to fetch the bootstrap code');
  expect(run.stderr.match(/FATAL/g)).toHaveLength(1);
  expect(run.calls.filter((c) => /^dnf /.test(c))).toEqual(Array(3).fill('dnf -qy install awscli-2'));
  // Only the loader's own signal (its instance id first), three tries of the signed call, which fail here: this sandbox
  // serves no role session (the signal itself is proved against the emulator: test/heavy/emulator/aws-boundary.emu.ts).
  expect(run.calls.filter((c) => /^python3 /.test(c))).toEqual([
    'python3 - imds meta-data/instance-id us-east-1',
    'python3 - imds meta-data/tags/instance/cdk-efs-cache:signal-resource us-east-1',
    ...Array(3).fill(`python3 - call cloudformation Action=SignalResource&Version=2010-05-15&StackName=Lab&LogicalResourceId=${ud.nodeTags[0]['cdk-efs-cache:signal-resource']}` +
      '&UniqueId=i-0123456789abcdef0&Status=FAILURE us-east-1'),
  ]);
  expect(run.stderr).toMatch(/WARN: cloudformation refused or did not answer: Action=SignalResource/);
  expect(run.calls.filter((c) => !/^(dnf|logger|curl|python3|sleep) /.test(c))).toEqual([]);
});

test('without the aws CLI, each try of its install runs under a deadline: all of them within 10 minutes', () => {
  // `timeout` recorded, then ending its command as at the deadline (exit 124): a package manager whose repository does
  // not answer cannot hold the boot past the signal timeout. The sandbox's time does not pass (sleep is stubbed), so
  // each of the three tries gets what is left of the budget: the whole of it, less the seconds a loaded test machine
  // takes to run the script itself.
  const ud = labUserData();
  const noAws = ud.cacheNode.replace('#!/bin/bash\n', '#!/bin/bash\naws() { return 127; }\ncommand() { [ "$2" = aws ] && return 1; builtin command "$@"; }\n');
  const run = runScript(noAws, [], { tags: ud.nodeTags[0], stubs: { timeout: 'exit 124' } });
  expect(run.status).toBe(1);
  expect(run.stderr.split('\n')[0]).toBe('efs-cache: FATAL: cannot install awscli-2 to fetch the bootstrap code');
  const tries = run.calls.filter((c) => /^(timeout|dnf) /.test(c));
  expect(tries.map((c) => c.replace(/^timeout -k 10 \d+ /, 'timeout -k 10 <left> '))).toEqual(Array(3).fill('timeout -k 10 <left> dnf -qy install awscli-2'));
  const left = tries.map((c) => Number(/^timeout -k 10 (\d+) /.exec(c)![1]));
  expect(left[0]).toBeLessThanOrEqual(600);
  expect(left[2]).toBeGreaterThan(540);
  expect([...left].sort((a, b) => b - a)).toEqual(left);
});
