/** The fan-in table (item 8): several clients reading one warm file through one node, against one client alone. */
import { FanInResults } from '../results';
import { median } from '../stats';
import { NOT_MEASURED, ratio, table, timeRange } from './format';

/** Item 8: one client alone against every client at once, reading one warm file through one node. */
export function fanInTable(f: FanInResults | undefined): string {
  if (!f) return `Several clients reading one warm file through one node (item 8): ${NOT_MEASURED}.`;
  const n = Math.min(f.single.length, f.all.length);
  if (n === 0) return `Several clients reading one warm file through one node (item 8): ${NOT_MEASURED} (failed).`;
  const mbs = (t: number, readers: number) => ((f.fileMiB * 2 ** 20 * readers) / t / 1e6).toFixed(1);
  // Aggregate speed of all clients over one client's: clients x t(one) / t(all), every pass paired with itself.
  const gains = Array.from({ length: n }, (_, i) => (f.clients * f.single[i]) / f.all[i]);
  const gain = { median: (f.clients * median(f.single)) / median(f.all), low: Math.min(...gains), high: Math.max(...gains) };
  const busy = (v: number[]) => `${(median(v) * 100).toFixed(0)} % (${(Math.min(...v) * 100).toFixed(0)}-${(Math.max(...v) * 100).toFixed(0)} %)`;
  const out = [
    `${f.clients} clients reading one warm file of ${f.fileMiB} MiB through one node, against one client alone (median of ${n} passes, range):`,
    '',
    table(['Readers', 'Wall time per pass', 'Aggregate MB/s', 'Node vCPU busy'], [
      ['one client', timeRange(f.single), mbs(median(f.single), 1), busy(f.nodeBusySingle)],
      [`${f.clients} clients at once`, timeRange(f.all), mbs(median(f.all), f.clients), busy(f.nodeBusyAll)],
    ]),
    '',
    `Aggregate of ${f.clients} clients over one: ${ratio(gain, n)} (the range pairs each pass of one client with the pass of all that followed it). ` +
      `The node reading the file from its own page cache: ${f.nodeLocal}.`,
    '',
  ];
  if (f.failures.length) out.push('What failed in this run (left out of the table):', '', ...f.failures.map((x) => `- ${x}`), '');
  return out.join('\n');
}
