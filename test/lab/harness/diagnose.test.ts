import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DIAGNOSE_SCRIPT, keepDiagnosis, keptDiagnoses, printKept, summarize } from './diagnose';

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
});
