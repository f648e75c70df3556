/**
 * `npm run bench`: measures what the README claims and writes docs/benchmarks.md, docs/benchmarks.png and the README's
 * generated parts (its benchmark section and the Mirrors decision table).
 *
 *   npm run bench [-- --only synth,lab,seeding,seeding-app,metadata,mirror-sync,fan-in,protocol,cms|render] [--smoke] [--out DIR] [--delay-ms N] [--rate-mbit N]
 *     [--cms-cases steady,cold,publish]
 *
 * Parts: synth (item 5, in this process), lab (items 1-3, VMs: root), seeding (item 4, the seeding lab: root),
 * seeding-app (item 4 with a tree shaped like a web application's, 11,000 files: the seeding lab, about 80 minutes),
 * metadata (item 6, metadata-heavy work cold, warm and steady through every mode; VMs: root), mirror-sync (item 7, the
 * mirrors' sync with 1 and 8 jobs and a tree of 20,000 files; VMs: root), fan-in (item 8, three clients reading one
 * warm file through one node at once; VMs: root), protocol (item 9), cms (item 10, WordPress through every mode: steady,
 * a cold web server, a publish; VMs: root; --cms-cases measures some of the three and keeps the others' recorded cells,
 * naming the run they came from).
 * The figures of each part are kept in bench/figures.json with the date, machine and settings of the run that
 * measured them; the table and chart are rendered from that file. --smoke measures synthesis with one node only and
 * renders into a temporary folder (or --out), leaving figures.json, docs and README alone.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CMS_CASES, CmsCase, DEFAULT_CMS_SETTINGS, mergeCmsResults, runCms } from './cms';
import { DEFAULT_FAN_IN_SETTINGS, runFanIn } from './fan-in';
import { DEFAULT_LAB_SETTINGS, runLab } from './lab';
import { DEFAULT_METADATA_SETTINGS, runMetadata } from './metadata';
import { DEFAULT_MIRROR_SYNC_SETTINGS, runMirrorSync } from './mirror-sync';
import { DEFAULT_PROTOCOL_SETTINGS, runProtocol } from './protocol';
import { chartSpec, mainTable, markdown, README_PARTS, renderReadme, synthTable } from './render';
import { readResults, Results, syncBaselineOf, writeResults } from './results';
import { runSeeding } from './seeding';
import { runSynth } from './synth';

const REPO = path.resolve(__dirname, '..');
// Not results.json: require('./results') would find it before results.ts.
const RESULTS = path.join(__dirname, 'figures.json');
const DOCS = path.join(REPO, 'docs');
const PARTS = ['synth', 'lab', 'seeding', 'seeding-app', 'metadata', 'mirror-sync', 'fan-in', 'protocol', 'cms'] as const;
type Part = (typeof PARTS)[number];

interface Options {
  parts: Part[];
  smoke: boolean;
  out?: string;
  delayMs: number;
  rateMbit: number;
  /** The CMS part's cases (--cms-cases); the cells of the others are kept from the recorded run. */
  cmsCases: CmsCase[];
}

function parse(argv: string[]): Options {
  const o: Options = {
    parts: [...PARTS], smoke: false, delayMs: DEFAULT_LAB_SETTINGS.delayMs, rateMbit: DEFAULT_LAB_SETTINGS.rateMbit, cmsCases: [...CMS_CASES],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const num = () => {
      const n = Number(value());
      if (!(n > 0)) throw new Error(`${a} needs a positive number`);
      return n;
    };
    if (a === '--only') {
      const names = value().split(',').map((s) => s.trim()).filter(Boolean);
      const bad = names.filter((n) => n !== 'render' && !PARTS.includes(n as Part));
      if (bad.length) throw new Error(`--only: unknown part(s) ${bad.join(', ')}; parts: ${PARTS.join(', ')}, render`);
      o.parts = names.filter((n): n is Part => n !== 'render');
    } else if (a === '--cms-cases') {
      const names = value().split(',').map((v) => v.trim()).filter(Boolean);
      const bad = names.filter((n) => !CMS_CASES.includes(n as CmsCase));
      if (bad.length || !names.length) throw new Error(`--cms-cases: unknown case(s) ${bad.join(', ')}; cases: ${CMS_CASES.join(', ')}`);
      o.cmsCases = names as CmsCase[];
    } else if (a === '--smoke') o.smoke = true;
    else if (a === '--out') o.out = path.resolve(value());
    else if (a === '--delay-ms') o.delayMs = num();
    else if (a === '--rate-mbit') o.rateMbit = num();
    else if (a === '--help' || a === '-h') {
      process.stdout.write(fs.readFileSync(__filename, 'utf8').split('*/')[0].replace(/^\/\*\*?\n?| ?\* ?/gm, '') + '\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see --help)`);
  }
  if (o.smoke) o.parts = ['synth'];
  return o;
}

const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);

/** Replaces the generated parts (between their markers): the README's benchmark section and docs/mirrors.md's decision table. */
function updateReadme(results: Results): void {
  for (const file of [...new Set(README_PARTS.map((p) => p.file))]) {
    const full = path.join(REPO, file);
    if (!fs.existsSync(full)) continue;
    const { text, missing } = renderReadme(fs.readFileSync(full, 'utf8'), results, file);
    for (const m of missing) log(`${file} has no markers for its ${m}: left alone`);
    if (missing.length === README_PARTS.filter((p) => p.file === file).length) continue;
    fs.writeFileSync(full, text);
    log(`${file}: generated parts updated`);
  }
}

function renderChart(results: Results, png: string): void {
  const spec = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-bench-chart-')), 'chart.json');
  fs.writeFileSync(spec, JSON.stringify(chartSpec(results)));
  execFileSync('bash', [path.join(__dirname, 'setup.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  execFileSync(path.join(REPO, '.venv', 'bin', 'python'), [path.join(__dirname, 'chart.py'), spec, png], { stdio: 'inherit' });
  fs.rmSync(path.dirname(spec), { recursive: true, force: true });
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  const started = Date.now();
  const out = o.out ?? (o.smoke ? fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-bench-smoke-')) : DOCS);
  const results: Results = o.smoke ? {} : readResults(RESULTS);
  const save = () => {
    if (!o.smoke) writeResults(RESULTS, results);
  };
  if (o.parts.some((p) => p !== 'synth') && process.getuid?.() !== 0) {
    throw new Error('the lab parts boot VMs in network namespaces: run as root (sudo npm run bench)');
  }
  const durations: string[] = [];
  const timedPart = async (name: Part, f: () => Promise<void> | void) => {
    if (!o.parts.includes(name)) return;
    const t = Date.now();
    log(`${name}: start`);
    await f();
    save();
    durations.push(`${name} ${((Date.now() - t) / 1000).toFixed(0)} s`);
    log(`${name}: done in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  await timedPart('synth', () => {
    results.synth = o.smoke ? runSynth([1], 1, log, [4]) : runSynth([1, 8, 32, 100, 128], 5, log, [1000]);
  });
  await timedPart('lab', async () => {
    results.lab = await runLab({ ...DEFAULT_LAB_SETTINGS, delayMs: o.delayMs, rateMbit: o.rateMbit }, log);
  });
  await timedPart('seeding', async () => {
    results.seeding = await runSeeding(log);
  });
  await timedPart('seeding-app', async () => {
    results.seedingApp = await runSeeding(log, 'app');
  });
  await timedPart('metadata', async () => {
    results.metadata = await runMetadata({ ...DEFAULT_METADATA_SETTINGS, delayMs: o.delayMs, rateMbit: o.rateMbit }, log);
  });
  await timedPart('mirror-sync', async () => {
    results.mirrorSync = await runMirrorSync({ ...DEFAULT_MIRROR_SYNC_SETTINGS, delayMs: o.delayMs, rateMbit: o.rateMbit }, log,
      syncBaselineOf(results.mirrorSync));
  });
  await timedPart('fan-in', async () => {
    results.fanIn = await runFanIn(DEFAULT_FAN_IN_SETTINGS, log);
  });
  await timedPart('protocol', async () => {
    results.protocol = await runProtocol({ ...DEFAULT_PROTOCOL_SETTINGS, delayMs: o.delayMs, rateMbit: o.rateMbit }, log);
  });
  await timedPart('cms', async () => {
    results.cms = mergeCmsResults(await runCms({ ...DEFAULT_CMS_SETTINGS, delayMs: o.delayMs, rateMbit: o.rateMbit, cases: o.cmsCases }, log),
      results.cms, o.cmsCases);
  });

  fs.mkdirSync(out, { recursive: true });
  const png = path.join(out, 'benchmarks.png');
  renderChart(results, png);
  const md = path.join(out, 'benchmarks.md');
  fs.writeFileSync(md, markdown(results, { chart: 'benchmarks.png', smoke: o.smoke }));
  if (!o.smoke && out === DOCS) updateReadme(results);
  process.stdout.write(`${mainTable(results)}\n\n${synthTable(results.synth)}\n\n`);
  log(`wrote ${md} and ${png}; ${durations.length ? `parts: ${durations.join(', ')}; ` : ''}total ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  process.stderr.write(`[bench] ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
