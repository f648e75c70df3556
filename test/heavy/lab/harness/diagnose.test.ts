import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DIAGNOSE_SCRIPT, hostSideScript, keepDiagnosis, keptDiagnoses, printKept, summarize } from './diagnose';
import { bridgeMac } from './lab';

const DIAGNOSIS = [
  '## cloud-init result',
  '{ "v1": { "errors": [ "(\'scripts_user\', RuntimeError(\'Runparts: 1 failures (part-001) in 1 attempted commands\'))" ] } }',
  '## failed units',
  'efs-cache-warm.service loaded failed failed efs-cache warm',
  '## efs-cache FATAL and WARN lines (last 12)',
  'WARN: no metrics agent',
  'FATAL: cannot read the instance tags',
  '## efs-cache\'s last lines (journal)',
  '[   40.1] node efs-cache[812]: mounting the origin',
  '## network',
  'lo UNKNOWN 127.0.0.1/8',
  'Timed out waiting for device /sys/subsystem/net/devices/eth0.',
].join('\n');

describe('lab diagnoses', () => {
  test('the summary keeps the lines that say why: cloud-init\'s errors, failed units, FATAL and WARN, device time-outs', () => {
    const lines = summarize(`mirror/node: boot error\n${DIAGNOSIS}`);
    expect(lines[0]).toBe('mirror/node: boot error');
    expect(lines.join('\n')).toMatch(/cloud-init result: .*Runparts: 1 failures/);
    expect(lines).toContain('  failed units: efs-cache-warm.service loaded failed failed efs-cache warm');
    expect(lines).toContain('  efs-cache FATAL and WARN lines (last 12): FATAL: cannot read the instance tags');
    expect(lines).toContain('  network: Timed out waiting for device /sys/subsystem/net/devices/eth0.');
    expect(lines.join('\n')).not.toMatch(/mounting the origin|127\.0\.0\.1/);
    expect(summarize(`x/y: boot error\n${DIAGNOSIS}`, 3)).toHaveLength(3);
  });

  test('kept per lab and VM, replacing an earlier diagnosis of the same VM, and printed again with where they are', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-diag-'));
    try {
      keepDiagnosis('mirror', 'node', 'test failed', 'old', {}, root);
      const kept = keepDiagnosis('mirror', 'node', 'boot error', DIAGNOSIS, { 'journal.txt': 'the journal' }, root);
      keepDiagnosis('aws', 'node-x', 'expected boot error', DIAGNOSIS, {}, root);
      expect(kept.dir).toBe(path.join(root, 'mirror', 'node'));
      expect(fs.readFileSync(path.join(kept.dir, 'journal.txt'), 'utf8')).toBe('the journal');
      expect(fs.readFileSync(kept.diagnosis, 'utf8').split('\n')[0]).toBe('mirror/node: boot error');
      expect(keptDiagnoses(root).map((k) => k.name)).toEqual(['aws/node-x', 'mirror/node']);
      const printed: string[] = [];
      const log = jest.spyOn(console, 'log').mockImplementation((m: string) => void printed.push(m));
      try {
        printKept(root);
      } finally {
        log.mockRestore();
      }
      expect(printed[0]).toContain(root);
      expect(printed).toContain('  mirror/node: boot error');
      expect(printed).toContain('    efs-cache FATAL and WARN lines (last 12): FATAL: cannot read the instance tags');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  test('the guest\'s command is valid bash that prints every part and exits 0 whatever it cannot read', () => {
    const r = spawnSync('bash', ['-c', DIAGNOSE_SCRIPT], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    for (const part of ['cloud-init result', 'failed units', 'efs-cache FATAL and WARN lines (last 12)', 'network']) {
      expect(r.stdout).toContain(`## ${part}\n`);
    }
  });

  test('the lab\'s side: one summary line from the bridge, the tap, the neighbour and forwarding tables and the drop counters', () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'hostside-'));
    try {
      // `ip`, `bridge` and `nstat` as the lab's namespace would answer them for a VM the namespace cannot reach.
      fs.writeFileSync(path.join(bin, 'ip'), [
        '#!/bin/bash',
        'case "$*" in',
        '  "netns exec "*) shift 3; exec "$@" ;;',
        '  *"-br link show br0") echo "br0 UP 02:0a:4d:00:00:01 <BROADCAST,UP>" ;;',
        '  *"-br link show tap1") echo "tap1 UP <BROADCAST,UP>" ;;',
        '  *"neigh show 10.77.0.51") echo "10.77.0.51 dev br0 lladdr 52:54:0a:4d:00:33 FAILED" ;;',
        '  *) echo "ip $*" ;;',
        'esac',
      ].join('\n'), { mode: 0o755 });
      fs.writeFileSync(path.join(bin, 'bridge'), '#!/bin/bash\necho "52:54:0a:4d:00:33 dev tap1 master br0"\n', { mode: 0o755 });
      fs.writeFileSync(path.join(bin, 'nstat'), '#!/bin/bash\nprintf "#kernel\\nTcpExtListenDrops 3 0.0\\nIpInReceives 50 0.0\\nTcpExtListenOverflows 0 0.0\\n"\n', { mode: 0o755 });
      fs.writeFileSync(path.join(bin, 'ss'), '#!/bin/bash\necho LISTEN\n', { mode: 0o755 });
      const r = spawnSync('bash', ['-c', hostSideScript('efsclab-1-aws', 'tap1', '10.77.0.51', '52:54:0a:4d:00:33')], {
        encoding: 'utf8', timeout: 30_000, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      expect(r.status).toBe(0);
      const first = r.stdout.split('\n')[0];
      expect(first).toBe('lab side: bridge 02:0a:4d:00:00:01; tap1 UP; neighbour 10.77.0.51 FAILED; forwarding entry on tap1; '
        + 'drops since the lab began: TcpExtListenDrops=3 ');
      expect(summarize(`aws/elastic-1: boot error\n## the lab's side of the network (host)\n${r.stdout}`)).toContain(
        `  the lab's side of the network (host): ${first}`);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  test('the lab bridge\'s fixed address: locally administered unicast, from the subnet; a subnet that is not a /24 prefix is refused', () => {
    expect(bridgeMac('10.77.0')).toBe('02:0a:4d:00:00:01');
    expect(bridgeMac('192.168.200')).toBe('02:c0:a8:c8:00:01');
    expect(() => bridgeMac('10.77')).toThrow(/not a \/24 prefix/);
    expect(() => bridgeMac('10.77.300')).toThrow(/not a \/24 prefix/);
  });
});
