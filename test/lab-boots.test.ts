/**
 * The table of what `npm test` costs (test/heavy/lab/README.md) is what test/heavy/lab/results/boots.json renders to, and
 * the log reader it is recorded with counts what the harness logs.
 */
import * as fs from 'fs';
import { bootTablesInReadme, LAB_README, parseRunLog, readRuns, renderBootTables } from './heavy/lab/results/boots';

test('test/heavy/lab/README.md\'s boot tables are what test/heavy/lab/results/boots.json renders to', () => {
  const runs = readRuns();
  expect(runs.length).toBeGreaterThanOrEqual(1);
  expect(bootTablesInReadme(fs.readFileSync(LAB_README, 'utf8'))).toBe(renderBootTables(runs));
});

test('the log reader counts restores, power ons, reboots, templates, QEMU CPU-seconds and steps', () => {
  const log = [
    '=== unit tests: ok (239 s)',
    '=== lab: user data on a real kernel (QEMU): ok (3582 s, in the background)',
    '[lab    1.0s mirror] template image-x-kbase-1024m-1c-gate-1: saved at its gate after 30.0s (QEMU 25.5 CPU-s)',
    '[lab    2.0s mirror] origin: restored (10.77.0.10, 1 vCPU, 1024 MiB, qemu pid 1)',
    '[lab    3.0s mirror] node: booting (10.77.0.31, 1 vCPU, 1024 MiB, qemu pid 2)',
    '[lab   50.0s mirror] node: rebooting',
    '[lab   90.0s mirror] node: qemu exited (SIGKILL) after 88.0s, 60.4 CPU-s',
    '[lab  100.5s mirror] origin: qemu exited (SIGKILL) after 98.5s, 20.0 CPU-s',
    '[lab   10.0s cms] origin: booting (10.77.0.10, 1 vCPU, 1536 MiB, qemu pid 3)',
    '[lab   20.0s cms] origin: qemu exited (code 0) after 10.0s, 9.6 CPU-s',
    'run: 2400 s',
    'tests: 10 passed, 1 failed',
  ].join('\n');
  const run = parseRunLog(log, 'x');
  expect(run.steps).toEqual({ 'unit tests': 239, 'lab: user data on a real kernel (QEMU)': 3582 });
  expect(run.totalSeconds).toBe(2400);
  expect(run.tests).toEqual({ passed: 10, failed: 1 });
  expect(run.lab).toEqual([
    { file: 'cms', restored: 0, powerOns: 1, reboots: 0, templates: 0, cpuSeconds: 10, wallSeconds: 10 },
    { file: 'mirror', restored: 1, powerOns: 1, reboots: 1, templates: 1, cpuSeconds: 106, wallSeconds: 100 },
  ]);
});
