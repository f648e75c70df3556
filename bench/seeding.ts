/**
 * Part 4: seeding, measured by the seeding lab (test/heavy/lab/seeding.lab.ts), which writes its figures to
 * $EFSC_RESULTS_DIR/seeding.json: `{ "link": {...}, "results": { "<method>": seconds, ... }, "cpu": {...} }`. This part
 * runs it (with its generated tree and WordPress's, or with `tree` 'app' the web application's tree alone) and takes
 * those figures as they are; without the file, the row is reported as not measured.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { machine, SeedingResults } from './results';

const REPO = path.resolve(__dirname, '..');

export async function runSeeding(log: (m: string) => void, tree: 'generated' | 'app' = 'generated'): Promise<SeedingResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-bench-seeding-'));
  const exitCode = await new Promise<number>((resolve, reject) => {
    const child = spawn('bash', [path.join(REPO, 'test', 'heavy', 'lab', 'run.sh'), 'seeding'], {
      cwd: REPO,
      env: { ...process.env, EFSC_RESULTS_DIR: dir, EFSC_SEEDING_TREE: tree },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The lab's own output goes to stderr, so that stdout stays the benchmark's.
    child.stdout.pipe(process.stderr);
    child.stderr.pipe(process.stderr);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const base = { date, durationSeconds: (Date.now() - started) / 1000, machine: machine(true), exitCode };
  const file = path.join(dir, 'seeding.json');
  try {
    if (!fs.existsSync(file)) {
      log(`seeding: ${file} was not written (seeding lab exit ${exitCode}): not measured`);
      return { ...base, measured: false, settings: {}, note: `the seeding lab (exit ${exitCode}) wrote no seeding.json` };
    }
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      link?: unknown; results?: Record<string, unknown>; cpu?: Record<string, { loader: number; origin: number }>;
    };
    const results: Record<string, number> = {};
    for (const [k, v] of Object.entries(json.results ?? {})) if (typeof v === 'number' && Number.isFinite(v)) results[k] = v;
    log(`seeding: ${Object.keys(results).length} figures from the seeding lab (exit ${exitCode})`);
    return {
      ...base,
      measured: Object.keys(results).length > 0,
      settings: { 'origin link': JSON.stringify(json.link ?? {}), 'measured by': 'test/heavy/lab/seeding.lab.ts' },
      link: json.link,
      results,
      ...(json.cpu ? { cpu: json.cpu } : {}),
      ...(exitCode !== 0 ? { note: `the seeding lab's tests did not all pass (exit ${exitCode}); its figures are kept here, not published` } : {}),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
