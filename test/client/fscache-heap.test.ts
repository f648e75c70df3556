import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * assets/lib/fscache.sh's judgement of where cachefilesd's heap lies (cachefilesd_heap_clear), which the cachefilesd
 * unit's ExecStartPost (`--cachefilesd-heap`) applies to the heap's start at every start: cachefilesd 0.10.10 aborts
 * at its first entry to cull when bits 28-31 of its object pointers are 0110, so a start whose heap, or the 64 MiB
 * above it, has them is stopped and made again. Every lab VM with a disk cache runs cachefilesd under that unit.
 */
const ASSETS = path.join(__dirname, '..', '..', 'assets', 'lib');

function bash(script: string, ...args: string[]) {
  return spawnSync('bash', ['-c', `source "$1/common.sh"; source "$1/fscache.sh"; shift; ${script}`, 'heap', ASSETS, ...args],
    { encoding: 'utf8' });
}
function clear(start: bigint): boolean {
  const r = bash('cachefilesd_heap_clear "$1"', start.toString());
  if (r.status !== 0 && r.status !== 1) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return r.status === 0;
}

describe('cachefilesd_heap_clear: where cachefilesd 0.10.10 would abort', () => {
  test.each([
    ['a heap whose pointers have bits 28-31 0110 (low 32 bits 0x6a...)', 0x55d36a000000n, false],
    ['the same on arm64 addresses', 0xaaab6ef00000n, false],
    ['a heap clear of them (0x5a...)', 0x55d35a000000n, true],
    ['a heap 16 MiB below them: it may grow there (the 64 MiB margin)', 0x55d35f000000n, false],
    ['a heap just above them (0x70...)', 0x55d370000000n, true],
    ['0110 in other bits only (24-27 and 44-47)', 0x6d0306000000n, true],
  ])('%s', (_what, start, expected) => {
    expect(clear(start)).toBe(expected);
  });
});

describe('cachefilesd_heap_check: the unit\'s ExecStartPost', () => {
  test('refuses an argument that is not a process id, with a FATAL line', () => {
    const r = bash('cachefilesd_heap_check "$1"', '1; reboot');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("FATAL: --cachefilesd-heap needs cachefilesd's process id, not '1; reboot'");
  });
  test('passes a process that is not cachefilesd (nothing to judge by), after waiting for it to become one', () => {
    const r = bash('cachefilesd_heap_check "$$"');
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
  test('judges a real cachefilesd process by its heap\'s start (start_brk, /proc/PID/stat field 47), as read here', async () => {
    // sleep under the name cachefilesd: its heap's start is as random as cachefilesd's, so the check refuses about one
    // in 13; each verdict must match this test's own reading of the field.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-'));
    const exe = path.join(dir, 'cachefilesd');
    fs.copyFileSync(spawnSync('bash', ['-c', 'command -v sleep'], { encoding: 'utf8' }).stdout.trim(), exe);
    fs.chmodSync(exe, 0o755);
    try {
      for (let i = 0; i < 12; i++) {
        const child = spawn(exe, ['30'], { stdio: 'ignore' });
        try {
          // Read once it runs the program (before its exec, the fields are node's).
          for (let t = 0; t < 100 && fs.readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim() !== 'cachefilesd'; t++) {
            await new Promise((done) => setTimeout(done, 20));
          }
          const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
          const startBrk = BigInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[44]);
          expect(startBrk).toBeGreaterThan(0n);
          const r = bash('cachefilesd_heap_check "$1"', String(child.pid));
          expect({ status: r.status, warned: r.stderr.includes('lies where cachefilesd 0.10.10 aborts') })
            .toEqual({ status: clear(startBrk) ? 0 : 1, warned: !clear(startBrk) });
        } finally {
          child.kill();
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
