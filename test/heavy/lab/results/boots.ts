/**
 * What `npm test` costs, per step and per lab file (boots and the QEMU CPU-seconds they took), read from the log of a
 * whole run, recorded in test/heavy/lab/results/boots.json and rendered into test/heavy/lab/README.md's table.
 * `npm run docs:boots -- LOG LABEL` records the run whose output is in LOG (`CI=true bash .ci/run > LOG 2>&1` on a
 * clean clone) under LABEL and renders the table again; test/lab-boots.test.ts holds the README to the file.
 */
import * as fs from 'fs';
import * as path from 'path';

/** One lab file in one run. */
export interface LabFileFigures {
  readonly file: string;
  /** VMs whose first boot was a restore of a template (harness/template.ts). */
  readonly restored: number;
  /** Power ons from the image: first boots that were not restores, and every start after a stop. */
  readonly powerOns: number;
  readonly reboots: number;
  /** Template boots this file built (a template is built once per run by whichever file needs it first). */
  readonly templates: number;
  /** QEMU CPU-seconds of every VM and template boot of the file, from the harness's lines. */
  readonly cpuSeconds: number;
  /** From the file's first line to its last. */
  readonly wallSeconds: number;
}

/** One whole run of `npm test`. */
export interface RunFigures {
  readonly label: string;
  /** Seconds per step, as run-all.sh printed them (`=== NAME: ok (N s)`). */
  readonly steps: Record<string, number>;
  /** The run's own wall time: run-all.sh's closing `run: N s`, or as given to recordRun for an older log. */
  readonly totalSeconds?: number;
  readonly tests: { readonly passed: number; readonly failed: number };
  readonly lab: LabFileFigures[];
}

const DIR = __dirname;
export const BOOTS_FILE = path.join(DIR, 'boots.json');
export const LAB_README = path.resolve(DIR, '..', 'README.md');
const BEGIN = '<!-- boots: rendered from test/heavy/lab/results/boots.json by `npm run docs:boots`; do not edit -->';
const END = '<!-- boots: end -->';

/** Reads a run's figures from its log. */
export function parseRunLog(text: string, label: string): RunFigures {
  const steps: Record<string, number> = {};
  for (const m of text.matchAll(/^=== (.+?): (?:ok|FAILED) \((\d+) s(?:, in the background)?\)$/gm)) steps[m[1]] = Number(m[2]);
  const tests = /^tests: (\d+) passed, (\d+) failed$/m.exec(text);
  const total = /^run: (\d+) s$/m.exec(text);
  type Counts = { first: number; last: number; restored: number; powerOns: number; reboots: number; templates: number; cpu: number };
  const files = new Map<string, Counts>();
  for (const m of text.matchAll(/^\[lab +([0-9.]+)s (\S+)\] (.*)$/gm)) {
    const t = Number(m[1]);
    const f = files.get(m[2]) ?? { first: t, last: t, restored: 0, powerOns: 0, reboots: 0, templates: 0, cpu: 0 };
    f.last = t;
    const line = m[3];
    if (/^\S+: restored \(/.test(line)) f.restored++;
    if (/^\S+: booting \(/.test(line)) f.powerOns++;
    if (/^\S+: rebooting$/.test(line)) f.reboots++;
    const exited = /^\S+: qemu exited .*, ([0-9.]+) CPU-s$/.exec(line);
    if (exited) f.cpu += Number(exited[1]);
    const template = /^template \S+: saved at its gate .*\(QEMU ([0-9.]+) CPU-s\)$/.exec(line);
    if (template) {
      f.templates++;
      f.cpu += Number(template[1]);
    }
    files.set(m[2], f);
  }
  const lab = [...files.entries()]
    .filter(([, f]) => f.restored + f.powerOns > 0)
    .map(([file, f]) => ({
      file, restored: f.restored, powerOns: f.powerOns, reboots: f.reboots, templates: f.templates,
      cpuSeconds: Math.round(f.cpu), wallSeconds: Math.round(f.last - f.first),
    }))
    .sort((a, b) => a.file.localeCompare(b.file));
  return {
    label, steps, lab,
    ...(total ? { totalSeconds: Number(total[1]) } : {}),
    tests: { passed: tests ? Number(tests[1]) : 0, failed: tests ? Number(tests[2]) : 0 },
  };
}

export function readRuns(): RunFigures[] {
  return fs.existsSync(BOOTS_FILE) ? (JSON.parse(fs.readFileSync(BOOTS_FILE, 'utf8')) as RunFigures[]) : [];
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const minutes = (s: number | undefined) => (s === undefined ? '-' : `${(s / 60).toFixed(1)} min`);

/** The README's tables: per run, its steps and its lab files. */
export function renderBootTables(runs: readonly RunFigures[]): string {
  const out: string[] = [BEGIN, ''];
  const labels = runs.map((r) => r.label);
  out.push(`| | ${labels.join(' | ')} |`, `|---|${labels.map(() => '---:').join('|')}|`);
  out.push(`| \`npm test\`, whole run | ${runs.map((r) => minutes(r.totalSeconds)).join(' | ')} |`);
  out.push(`| tests passed | ${runs.map((r) => r.tests.passed.toLocaleString('en-US')).join(' | ')} |`);
  const stepNames = [...new Set(runs.flatMap((r) => Object.keys(r.steps)))];
  for (const s of stepNames) out.push(`| step: ${s} | ${runs.map((r) => (r.steps[s] === undefined ? '-' : `${r.steps[s]} s`)).join(' | ')} |`);
  out.push('');
  const files = [...new Set(runs.flatMap((r) => r.lab.map((f) => f.file)))].sort();
  out.push(`| lab file: restored first boots + power ons + reboots (templates built), QEMU CPU-s, wall | ${labels.join(' | ')} |`);
  out.push(`|---|${labels.map(() => '---:').join('|')}|`);
  const cell = (f: LabFileFigures | undefined) => (f
    ? `${f.restored} + ${f.powerOns} + ${f.reboots}${f.templates ? ` (${f.templates})` : ''}, ${f.cpuSeconds.toLocaleString('en-US')} CPU-s, ${f.wallSeconds} s`
    : '-');
  for (const file of files) out.push(`| ${file} | ${runs.map((r) => cell(r.lab.find((f) => f.file === file))).join(' | ')} |`);
  out.push(`| all lab files | ${runs.map((r) => `${sum(r.lab.map((f) => f.restored))} + ${sum(r.lab.map((f) => f.powerOns))} + ` +
    `${sum(r.lab.map((f) => f.reboots))} (${sum(r.lab.map((f) => f.templates))}), ${sum(r.lab.map((f) => f.cpuSeconds)).toLocaleString('en-US')} CPU-s`).join(' | ')} |`);
  out.push('', END);
  return out.join('\n');
}

/** The README's rendered part, as it stands. */
export function bootTablesInReadme(readme: string): string | undefined {
  const a = readme.indexOf(BEGIN);
  const b = readme.indexOf(END);
  return a < 0 || b < a ? undefined : readme.slice(a, b + END.length);
}

/** Records the run whose log is `logFile` under `label` (replacing a run of that label) and renders the README again. */
export function recordRun(logFile: string, label: string, totalSeconds?: number): RunFigures {
  const parsed = parseRunLog(fs.readFileSync(logFile, 'utf8'), label);
  const run = totalSeconds === undefined ? parsed : { ...parsed, totalSeconds };
  const runs = readRuns().filter((r) => r.label !== label).concat(run);
  fs.writeFileSync(BOOTS_FILE, JSON.stringify(runs, null, 1) + '\n');
  const readme = fs.readFileSync(LAB_README, 'utf8');
  const current = bootTablesInReadme(readme);
  if (!current) throw new Error(`${LAB_README} has no rendered boot tables (${BEGIN} ... ${END})`);
  fs.writeFileSync(LAB_README, readme.replace(current, renderBootTables(runs)));
  return run;
}

if (require.main === module) {
  const [logFile, label, total] = process.argv.slice(2);
  if (!logFile || !label) throw new Error('usage: boots.ts LOG LABEL [SECONDS, for a log older than run-all.sh\'s closing `run: N s`]');
  const run = recordRun(logFile, label, total === undefined ? undefined : Number(total));
  process.stdout.write(`${label}: ${run.lab.length} lab files, ${Object.keys(run.steps).length} steps recorded\n`);
}
