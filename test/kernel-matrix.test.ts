/**
 * The kernel matrix of docs/images-and-kernels.md is what the lab recorded (test/heavy/lab/results/kernels.json, written by the
 * kernels and metrics labs with EFSC_RECORD=1): rendered again here, it must match the page word for word.
 */
import * as fs from 'fs';
import * as path from 'path';
import { byVersion, kernelTableRange, KernelFigures, KERNEL_TABLE_FILE, readKernelFigures, renderKernelTable } from './heavy/lab/results/kernels';

const README = fs.readFileSync(KERNEL_TABLE_FILE, 'utf8');
const figures = readKernelFigures();

test('the kernel table of docs/images-and-kernels.md is what test/heavy/lab/results/kernels.json renders to', () => {
  const range = kernelTableRange(README);
  expect(range).toBeDefined();
  expect(README.slice(...range!)).toBe(renderKernelTable(figures));
});

test('the recorded figures cover bookworm\'s 6.1 and each extra kernel of the lab image, every row measured', () => {
  const tags = fs.readFileSync(path.join(__dirname, 'heavy', 'lab', 'image', 'kernels'), 'utf8').split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#')).map((l) => l.split(/\s+/)[0]);
  expect(tags.length).toBeGreaterThan(0);
  expect(Object.keys(figures).sort(byVersion)).toEqual(['6.1', ...tags].sort(byVersion));
  for (const k of tags) {
    const f: KernelFigures = figures[k];
    for (const field of ['selfTest', 'clientReRead', 'nodeEvicted', 'notServing', 'mirror', 'reexport', 'metrics', 'culling'] as const) {
      expect([k, field, f[field] !== undefined]).toEqual([k, field, true]);
    }
  }
  expect(figures['6.1'].notServing).toBeDefined();
});

test('a kernel without a figure shows "not measured", never an old figure', () => {
  const last = Object.keys(figures).sort(byVersion).pop()!;
  const table = renderKernelTable({ ...figures, [last]: { version: figures[last].version } });
  const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| behaviour') && !l.startsWith('| the kernel booted'));
  for (const r of rows) expect(r).toMatch(/\| (not measured|not run) \|$/);
});
