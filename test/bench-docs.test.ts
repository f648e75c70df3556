/**
 * Every figure the README and docs/benchmarks.md publish is generated from the recorded results: the docs and the
 * generated parts (the README's benchmark section, the decision table of docs/mirrors.md) are rendered again here from
 * bench/figures.json and must match what is checked in, word for word. A figure typed in by hand, or
 * a results file changed without rendering, fails this test.
 */
import * as fs from 'fs';
import * as path from 'path';
import { markdown, metadataTables, mirrorDecisionSection, MIRROR_DECISION_END, MIRROR_DECISION_START, README_PARTS, readmePartRange, rows } from '../bench/render';
import { readResults } from '../bench/results';

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
