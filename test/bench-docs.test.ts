/**
 * Every figure the README and docs/benchmarks.md publish is generated from the recorded results: both are rendered
 * again here from bench/figures.json and must match what is checked in, word for word. A figure typed in by hand, or
 * a results file changed without rendering, fails this test.
 */
import * as fs from 'fs';
import * as path from 'path';
import { markdown, metadataTables, README_END, README_START, readmeSection } from '../bench/render';
import { readResults } from '../bench/results';

const REPO = path.resolve(__dirname, '..');
const results = readResults(path.join(REPO, 'bench', 'figures.json'));

test('docs/benchmarks.md is what bench/figures.json renders to', () => {
  const docs = fs.readFileSync(path.join(REPO, 'docs', 'benchmarks.md'), 'utf8');
  expect(docs).toBe(markdown(results, { chart: 'benchmarks.png' }));
});

test('the README\'s benchmark section is what bench/figures.json renders to', () => {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  expect(readme.slice(start, end)).toBe(readmeSection(results));
});

test('a failed measurement is not published as a result', () => {
  const m = results.metadata;
  expect(m).toBeDefined();
  // Drop one cell, as a failed call leaves it out: its row says so instead of showing a figure.
  const cut = { ...m!, cells: m!.cells.filter((c) => !(c.mode === 'mirror' && c.workload === 'storm' && c.state === 'steady')) };
  const row = metadataTables(cut).split('\n').find((l) => l.startsWith('| include/stat storm, steady'));
  expect(row).toMatch(/not measured \(failed\) \|$/);
});

test('outside the generated section, the README\'s prose about measurements quotes no figure', () => {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const bench = readme.slice(readme.indexOf('\n## Benchmarks'), readme.indexOf('\n## Development'));
  const prose = bench.slice(0, bench.indexOf(README_START)) + bench.slice(bench.indexOf(README_END));
  const mirrors = readme.slice(readme.indexOf('\n### Mirrors'), readme.indexOf('\n### `FsCacheClientOptions`'));
  // A speed-up, a share, or a measured time or rate: only the rendered tables may carry them.
  const figure = /\b\d+(\.\d+)?x\b|\b\d+(\.\d+)? ?%|\b\d+(\.\d+)? (s|ms|MB\/s)\b/g;
  expect(prose.match(figure)).toBeNull();
  expect(mirrors.match(figure)).toBeNull();
});
