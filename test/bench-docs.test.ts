/**
 * Every figure the README and docs/benchmarks.md publish is generated from the recorded results: the docs and the
 * generated parts (the README's benchmark section, the decision table of docs/mirrors.md) are rendered again here from
 * bench/figures.json and must match what is checked in, word for word. A figure typed in by hand, or
 * a results file changed without rendering, fails this test.
 */
import * as fs from 'fs';
import * as path from 'path';
import { mergeCmsResults, parseWarmLine } from '../bench/cms';
import {
  cmsRatio, cmsRows, cmsSummary, cmsTables, markdown, metadataTables, mirrorDecisionSection, MIRROR_DECISION_END, MIRROR_DECISION_START, quantile,
  README_PARTS, readmePartRange, rows, seedingBound,
} from '../bench/render';
import { runsRatio } from '../bench/render/cms';
import { CmsCell, CmsMode, CmsResults, CmsWarming, readResults } from '../bench/results';
import { parseWrk } from '../bench/wrk';

const REPO = path.resolve(__dirname, '..');
const results = readResults(path.join(REPO, 'bench', 'figures.json'));

test('docs/benchmarks.md is what bench/figures.json renders to', () => {
  const docs = fs.readFileSync(path.join(REPO, 'docs', 'benchmarks.md'), 'utf8');
  expect(docs).toBe(markdown(results, { chart: 'benchmarks.png' }));
});

test.each(README_PARTS.map((p) => [p.name, p] as const))('the %s is what bench/figures.json renders to', (_, part) => {
  const readme = fs.readFileSync(path.join(REPO, part.file), 'utf8');
  const range = readmePartRange(readme, part);
  expect(range).toBeDefined();
  expect(readme.slice(...range!)).toBe(part.render(results));
});

test('the mirrors\' decision table is in the Mirrors page and quotes items 6 and 7', () => {
  const mirrors = fs.readFileSync(path.join(REPO, 'docs', 'mirrors.md'), 'utf8');
  expect(mirrors.startsWith('# Mirrors')).toBe(true);
  expect(mirrors).toContain(MIRROR_DECISION_START);
  expect(mirrors).toContain(MIRROR_DECISION_END);
  const table = mirrorDecisionSection(results);
  expect(table).toMatch(/\| mirror \|.*steady include\/stat storm: mirror \d+(\.\d)?x, re-export \d+(\.\d)?x, FS-Cache \d+(\.\d)?x/);
  expect(results.mirrorSync).toBeDefined();
  expect(table).toMatch(/\| each sync walks the whole tree, one READDIR per reply-full of entries, and copies what changed \| the mirrors' sync with \d+ jobs, per 100,000 files: nothing changed /);
  // Without items 6 and 7 every row says so instead of showing a figure.
  const none = mirrorDecisionSection({ ...results, metadata: undefined, mirrorSync: undefined }).split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| data |') && !l.startsWith('| ---'));
  expect(none).toHaveLength(6);
  for (const l of none) expect(l).toMatch(/\| not measured \|$/);
});

test('a failed measurement is not published as a result', () => {
  const m = results.metadata;
  expect(m).toBeDefined();
  // Drop one cell, as a failed call leaves it out: its row says so instead of showing a figure.
  const cut = { ...m!, cells: m!.cells.filter((c) => !(c.mode === 'mirror' && c.workload === 'storm' && c.state === 'steady')) };
  const row = metadataTables(cut).split('\n').find((l) => l.startsWith('| include/stat storm, steady'));
  expect(row).toMatch(/not measured \(failed\) \|$/);
});

test('outside the generated parts, the prose about measurements quotes no figure', () => {
  // A file with every generated part it holds cut out (each part's markers kept).
  const cut = (file: string) => README_PARTS.filter((p) => p.file === file).reduce((text, part) => {
    const range = readmePartRange(text, part);
    expect(range).toBeDefined();
    return text.slice(0, range![0]) + part.start + text.slice(range![1]);
  }, fs.readFileSync(path.join(REPO, file), 'utf8'));
  const section = (text: string, heading: string) => {
    const start = text.indexOf(`\n${heading}`);
    expect(start).toBeGreaterThanOrEqual(0);
    const end = text.indexOf('\n## ', start + 1);
    return text.slice(start, end < 0 ? undefined : end);
  };
  const readme = section(cut('README.md'), '## Benchmarks');
  const verification = section(cut('docs/verification.md'), '## Benchmarks');
  // The mirrors' page, and what is proved of the mirrors, which moved from it to docs/verification.md.
  const mirrors = [cut('docs/mirrors.md'), section(cut('docs/verification.md'), '## Mirrors: what is proved'),
    section(cut('docs/verification.md'), '## S3 mirrors: what is proved')].join('\n');
  // A speed-up, a share, or a measured time or rate: only the rendered tables may carry them.
  const figure = /\b\d+(\.\d+)?x\b|\b\d+(\.\d+)? ?%|\b\d+(\.\d+)? (s|ms|MB\/s)\b/g;
  expect(readme.match(figure)).toBeNull();
  expect(verification.match(figure)).toBeNull();
  expect(mirrors.match(figure)).toBeNull();
});

test('a seeding run whose tests failed is not published: its row says so, and no figure of it appears', () => {
  const run = { date: '2026-01-01T00:00:00Z', durationSeconds: 1, machine: { cpu: 'x', cores: 2, memoryGiB: 1, kernel: 'k' }, settings: {} };
  const figures = { 'cp -R': 123.4, 'rsync -a': 234.5, 'parallel loader': 45.6 };
  const failed = { ...run, measured: true, exitCode: 1, results: figures };
  const row = rows({ seeding: failed }).find((r) => r.item === '4')!;
  expect(row.baseline).toBe('not measured (the seeding lab\'s tests did not all pass (exit 1))');
  const md = markdown({ seeding: failed }, { chart: 'x.png' });
  for (const v of ['123.4', '234.5', '45.6']) expect(md).not.toContain(v);
  // The same figures from a run that passed are published.
  expect(markdown({ seeding: { ...failed, exitCode: 0 } }, { chart: 'x.png' })).toContain('45.6');
});

test("the web application's tree (seeding-app): its rows, how busy the CPUs were, and where the lab bounds the ratio", () => {
  const run = { date: '2026-01-01T00:00:00Z', durationSeconds: 1, machine: { cpu: 'x', cores: 2, memoryGiB: 1, kernel: 'k' }, settings: {} };
  const app = {
    ...run, measured: true, exitCode: 0, link: { files: 11000, fileBytes: 8900, workers: 50 },
    results: {
      'seeding script (whole run)': 300, '  of which the copy (its log, whole s)': 120, 'cp -R': 700, 'rsync -a': 1800, 'tar x': 1200,
      'ceiling: cp -R on the loader\'s own disk': 5, 'seeding script, again after 4 changes': 200,
    },
    cpu: { 'seeding script (whole run)': { loader: 97, origin: 60 }, 'cp -R': { loader: 30, origin: 10 } },
  };
  const appRows = rows({ seedingApp: app }).filter((r) => r.what.startsWith("Seeding a web application's tree (11,000 files, 98 MB)"));
  expect(appRows.map((r) => [r.what.split(': ')[1], r.speedup])).toEqual([
    ['parallel loader vs `cp -R`', 700 / 300], ['parallel loader vs `rsync -a`', 1800 / 300], ['parallel loader vs `tar x`', 1200 / 300],
  ]);
  const md = markdown({ seedingApp: app }, { chart: 'x.png' });
  expect(md).toContain("## Seeding a web application's tree (11,000 files, 98 MB): every figure (item 4)");
  expect(md).toContain('| cp -R | 700.0 | 30 % | 10 % |');
  expect(md).toContain('| rsync -a | 1800.0 |  |  |');
  // 700 s for cp -R against the copy's 120 s: about 5.8 files at once of 50 workers; 700 / 50 = 14 s if link-bound.
  expect(seedingBound(app)).toContain('By `cp -R`\'s pace (64 ms a file), the copy kept about 5.8 files going at once with its 50 workers');
  expect(seedingBound(app)).toContain('would have taken about 14 s. The lab bounds this ratio, not the link');
  expect(seedingBound(app)).toContain('the loader\'s vCPUs were 97 % busy during the loader\'s run (the origin\'s 60 %) and 30 % during `cp -R` (10 %)');
  const linkBound = { ...app, cpu: undefined, results: { ...app.results, '  of which the copy (its log, whole s)': 15 } };
  expect(seedingBound(linkBound)).toContain('The link bounds this ratio, not the lab.');
  expect(seedingBound(linkBound)).not.toContain('own accounting');
  // Without the copy's time nothing is said of the bound, and without the part there is no row.
  expect(seedingBound({ ...app, results: { 'cp -R': 700 } })).toBeUndefined();
  expect(rows({}).some((r) => r.what.includes("web application's tree"))).toBe(false);
});

describe('the CMS benchmark (item 10): wrk read as reported, tables and rows computed from the cells', () => {
  const report = [
    'Running 10s test @ http://10.77.0.41:8086/',
    '  1 threads and 2 connections',
    '  Latency Distribution',
    '     50%  790.00ms',
    '     75%  850.00ms',
    '     90%  950.00ms',
    '     99%    1.20s ',
    '  24 requests in 10.01s, 1.20MB read',
    '  Non-2xx or 3xx responses: 2',
    '  Socket errors: connect 0, read 1, write 0, timeout 3',
    'Requests/sec:      2.40',
  ].join('\n');

  test('parseWrk: requests per second, requests, p50 and p99 in seconds, and every error', () => {
    expect(parseWrk(report)).toEqual({ rps: 2.4, requests: 24, p50: 0.79, p99: 1.2, errors: 6 });
    expect(parseWrk('Requests/sec: 1.00\n  10 requests in 10.00s\n  50% 1.50s\n  99% 2m').p99).toBe(120);
  });

  const run = { date: '2026-01-01T00:00:00Z', durationSeconds: 1, machine: { cpu: 'x', cores: 2, memoryGiB: 1, kernel: 'k' }, settings: {} };
  const wrk = (rps: number[]) => rps.map((r) => ({ rps: r, requests: r * 10, p50: 1 / r, p99: 2 / r, errors: 0 }));
  const steady = (mode: CmsMode, rps: number[], ops: number) =>
    ({ kind: 'steady' as const, mode, page: 'front', profile: 'debian', runs: wrk(rps), originOpsPerRequest: rps.map(() => ops) });
  const cold = (mode: CmsMode, seconds: number[]) => ({ kind: 'cold' as const, mode, page: 'mix', profile: 'debian', seconds, originOpsPerRequest: [1] });
  const cms: CmsResults = {
    ...run,
    cells: [
      steady('direct', [1, 1.2, 0.8], 120), steady('mirror', [2, 2.4, 1.6], 0), steady('local', [2.5, 2.5, 2.5], 0),
      cold('direct', [9, ...Array(99).fill(3)]), cold('mirror', [4, ...Array(99).fill(1)]), cold('local', [2, ...Array(99).fill(0.5)]),
    ],
    failures: ['publish v3: not served within 420 s'],
  };

  test('the results rows: the mirror\'s requests per second over the origin\'s, of the local disk\'s, and a cold server\'s p99', () => {
    const r = cmsRows(cms);
    const front = r.find((x) => /front page.*mirror/.test(x.what))!;
    expect(front.speedup).toBeCloseTo(2 / 1);
    expect(front.ofCeiling).toBeCloseTo(2 / 2.5);
    expect(r.find((x) => /FS-Cache/.test(x.what))).toBeUndefined();
    const c = r.find((x) => /cold web server/.test(x.what))!;
    expect(c.speedup).toBeCloseTo(3 / 1);
    expect(c.ofCeiling).toBeCloseTo(0.5 / 1);
    expect(cmsRatio(cms.cells[1], cms.cells[0])).toEqual({ median: 2, low: 1.6 / 1.2, high: 2.4 / 0.8 });
    expect(quantile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(quantile(Array.from({ length: 100 }, (_, i) => i + 1), 0.99)).toBe(99);
  });

  test('a mode that was not measured says so, and a failure is listed, not published', () => {
    const md = cmsTables(cms);
    expect(md).toMatch(/\| front page, Debian's PHP settings \| 1\.00 \(0\.80-1\.20\): 40 % \| not measured \|/);
    expect(md).toContain('- publish v3: not served within 420 s');
    expect(md).toMatch(/\| node's mirror \| 1 \| 4\.00 s \| 1\.00 s \| 1\.00 s \| 2\.0x \|/);
    expect(md).not.toContain('warmed by the client');
    const summary = cmsSummary(cms);
    expect(summary).toMatch(/ran at 80 % of the requests per second .* and 2\.0x those of the origin directly, /);
    expect(summary).toMatch(/costing the origin 0 operations per request \(directly: 120\); .* first 100 requests through the mirror with a p99 2\.0x the local disk's/);
    expect(cmsSummary({ ...cms, cells: cms.cells.filter((c) => c.kind !== 'cold') })).toBeUndefined();
    expect(cmsTables(undefined)).toMatch(/^not measured/);
    expect(cmsRows(undefined)[0].baseline).toMatch(/^not measured/);
  });

  /** Cold runs: `p99` of each run's 100 requests (99 of them at that latency), and the warmed mirror's runs. */
  const coldRun = (mode: CmsMode, run: number, p99: number, warming?: CmsWarming): CmsCell =>
    ({ kind: 'cold', mode, page: 'mix', profile: 'debian', seconds: [p99 * 2, ...Array(99).fill(p99)], originOpsPerRequest: [run + 1], run, ...(warming ? { warming } : {}) });
  const warming = (seconds: number, originOps: number): CmsWarming => ({ seconds, files: 2591, mib: 61, originOps, mirrorOps: 9000 });
  const runs: CmsResults = {
    ...cms,
    settings: { 'warming at boot': 'warmed /mnt/mirror/cms/wp: 2591 files, 61 MiB in 40s' },
    cells: [
      ...cms.cells.filter((c) => c.kind === 'steady'),
      coldRun('local', 0, 1), coldRun('local', 1, 2), coldRun('mirror', 0, 4), coldRun('mirror', 1, 6),
      coldRun('direct', 0, 8), coldRun('direct', 1, 8),
      coldRun('mirror', 0, 1.2, warming(30, 0)), coldRun('mirror', 1, 1.6, warming(50, 4)),
    ],
    failures: [],
  };

  test('the cold case in runs: each figure the median of the runs with their range, the warmed mirror a row of its own with its warming\'s cost', () => {
    const md = cmsTables(runs);
    // p99 of the mirror: runs of 4 and 6 s, median 5; over the local disk's (1 and 2 s, median 1.5): 3.3x, range 4/2 to 6/1.
    expect(md).toMatch(/\| node's mirror \| 2 \| 10\.00 s \(8\.00 s-12\.00 s\) \| 5\.00 s \(4\.00 s-6\.00 s\) \| 5\.00 s \(4\.00 s-6\.00 s\) \| 3\.3x \(2\.0x-6\.0x\) \|/);
    expect(md).toMatch(/\| node's mirror, warmed by the client first \| 2 \| .* \| 1\.40 s \(1\.20 s-1\.60 s\) \| 0\.9x \(0\.6x-1\.6x\) \| .* \| 1\.5 \(1\.0-2\.0\) \|/);
    // The ceiling's row has no ratio to itself.
    expect(md).toMatch(/\| local disk \| 2 \| 3\.00 s \(2\.00 s-4\.00 s\) \| 1\.50 s \(1\.00 s-2\.00 s\) \| 1\.50 s \(1\.00 s-2\.00 s\) \| {2}\|/);
    expect(md).toContain('2,591 files, 61 MiB read in 40.0 s (30.0 s-50.0 s), costing the origin 2 (0-4) operations (the node\'s mirror served 9,000).');
    expect(md).toContain('At the web server\'s first boot its user data\'s warming logged: warmed /mnt/mirror/cms/wp: 2591 files, 61 MiB in 40s.');
    const warmedRow = cmsRows(runs).find((r) => /warmed by the client/.test(r.what))!;
    expect(warmedRow.ofCeiling).toBeCloseTo(1.5 / 1.4);
    expect(warmedRow.speedup).toBeCloseTo(8 / 1.4);
    expect(runsRatio([4, 6], [1, 2])).toEqual({ median: 5 / 1.5, low: 2, high: 6 });
    expect(cmsSummary(runs)).toMatch(/with a p99 3\.3x the local disk's \(0\.9x when the client's warming had read the tree first, in 40\.0 s, costing the origin 2 operations\)\. /);
  });

  test('a run narrowed to some cases keeps the other cases\' cells from the recorded run, and names that run', () => {
    const next: CmsResults = { ...runs, date: '2026-02-02T00:00:00Z', cells: runs.cells.filter((c) => c.kind === 'cold'), failures: ['cold v3 (run 1): x'] };
    const prev: CmsResults = { ...cms, failures: ['steady debian v41 front: y', 'cold direct: z'] };
    const merged = mergeCmsResults(next, prev, ['cold', 'publish']);
    expect(merged.cells.filter((c) => c.kind === 'steady')).toEqual(cms.cells.filter((c) => c.kind === 'steady'));
    expect(merged.cells.filter((c) => c.kind === 'cold')).toEqual(next.cells);
    expect(merged.settings['kept from an earlier run']).toBe('steady: measured on 2026-01-01T00:00:00Z, not in this run');
    expect(merged.failures).toEqual(['steady debian v41 front: y', 'cold v3 (run 1): x']);
    expect(mergeCmsResults(next, prev, ['steady', 'cold', 'publish'])).toBe(next);
    expect(parseWarmLine('efs-cache: warmed /mnt/mirror/cms/wp: 2591 files, 61 MiB in 42s\n')).toEqual({ files: 2591, mib: 61, seconds: 42 });
    expect(parseWarmLine('efs-cache: WARN: warming stopped at its bound of 300s')).toBeUndefined();
  });
});
