/**
 * The metadata tables (item 6, bench/metadata.ts): each workload and state through each mode. Ratios are of medians;
 * their range pairs the extremes (slowest baseline pass over fastest cached pass, and the reverse), so it holds every
 * pair of passes measured.
 */
import { MetaCell, MetaMode, MetaResults, MetaState, MetaWorkload } from '../results';
import { median } from '../stats';
import { avoidedPct, int, NOT_MEASURED, opsPerPass, ratio, secs, table } from './format';

/** The workloads, in the order they ran, with their labels. */
export const META_WORKLOADS: Array<[MetaWorkload, string]> = [['storm', 'include/stat storm'], ['tree', 'package tree, walked and read'], ['ls', '`ls -lR` of the tree']];
/** The states of a workload, with their labels. */
export const META_STATES: Array<[MetaState, string]> = [['cold', 'cold'], ['warm', 'warm (client caches dropped)'], ['steady', 'steady (nothing dropped)']];
/** The modes measured against the origin directly, in the order of the tables' columns. */
export const META_CACHED: MetaMode[] = ['fscache', 'node', 'mirror'];
export const META_MODE_LABELS: Record<MetaMode, string> = {
  direct: 'origin, directly', fscache: 'FS-Cache client', node: 'through the node', mirror: 'node\'s mirror',
};

/** The cell measured for a mode, workload and state, or undefined when its measurement failed. */
export function metaCell(m: MetaResults, mode: MetaMode, wl: MetaWorkload, state: MetaState): MetaCell | undefined {
  return m.cells.find((c) => c.mode === mode && c.workload === wl && c.state === state);
}

/** Speed-up of `cached` over `base`: ratio of medians, and the range over every pair of passes. */
export function metaSpeedup(base: MetaCell, cached: MetaCell): { median: number; low: number; high: number } {
  return {
    median: median(base.seconds) / median(cached.seconds),
    low: Math.min(...base.seconds) / Math.max(...cached.seconds),
    high: Math.max(...base.seconds) / Math.min(...cached.seconds),
  };
}

/** Fraction of the baseline's origin operations a mode did not cause (per pass). */
export function metaAvoided(base: MetaCell, cached: MetaCell): number {
  return base.originOps.total > 0 ? 1 - cached.originOps.total / base.originOps.total : 0;
}

/** The speed table and the origin operations table of item 6, with the prose between them. */
export function metadataTables(m: MetaResults | undefined): string {
  if (!m) return `Metadata-heavy work (item 6): ${NOT_MEASURED}.`;
  const speed: string[][] = [];
  const ops: string[][] = [];
  for (const [wl, wlLabel] of META_WORKLOADS) {
    for (const [state, stLabel] of META_STATES) {
      const base = metaCell(m, 'direct', wl, state);
      const what = `${wlLabel}, ${stLabel}`;
      if (!base) {
        speed.push([what, `${NOT_MEASURED} (failed)`, '', '', '']);
        ops.push([what, `${NOT_MEASURED} (failed)`, '', '', '']);
        continue;
      }
      const n = base.seconds.length;
      const time = n > 1 ? `${secs(median(base.seconds))} (${secs(Math.min(...base.seconds))}-${secs(Math.max(...base.seconds))})` : secs(base.seconds[0]);
      speed.push([what, time, ...META_CACHED.map((mode) => {
        const c = metaCell(m, mode, wl, state);
        return c ? `${secs(median(c.seconds))}: ${ratio(metaSpeedup(base, c), Math.min(n, c.seconds.length))}` : `${NOT_MEASURED} (failed)`;
      })]);
      ops.push([what, opsPerPass(base.originOps.total), ...META_CACHED.map((mode) => {
        const c = metaCell(m, mode, wl, state);
        return c ? `${opsPerPass(c.originOps.total)} (${avoidedPct(metaAvoided(base, c))})` : `${NOT_MEASURED} (failed)`;
      })]);
    }
  }
  const head = (first: string) => ['Work, state', first, ...META_CACHED.map((mo) => META_MODE_LABELS[mo])];
  return [
    'Time per pass (median, range over the passes) and speed-up over the origin directly (ratio of medians; the range',
    'pairs the slowest and fastest passes of each side):',
    '',
    table(head('Origin, directly'), speed),
    '',
    'The workloads ran in the order of the rows, each mode in turn: "cold" is a workload\'s first pass on its client, whose',
    'caches were empty; a node may already hold what an earlier workload read through it (the `ls -lR` rows list the',
    'tree the package-tree rows read), and a mirror is full before its node serves.',
    '',
    'NFSv4 operations the origin served per pass (its own nfsd counters), and the share of the direct baseline\'s',
    'operations avoided (or how many more were caused):',
    '',
    table(head('Origin, directly'), ops),
  ].join('\n');
}

/** The steady storm in detail: latencies per system call and the origin's operations by kind. */
export function metadataDetail(m: MetaResults): string {
  const out: string[] = [];
  const kinds = ['stat', 'open', 'read'];
  const rowsLat: string[][] = [];
  const rowsOps: string[][] = [];
  const opKinds = ['OPEN', 'CLOSE', 'ACCESS', 'GETATTR', 'LOOKUP', 'READ', 'READDIR'];
  for (const mode of ['direct', ...META_CACHED] as MetaMode[]) {
    const c = metaCell(m, mode, 'storm', 'steady');
    if (!c) continue;
    const files = (c.latency.open?.n ?? 0) / c.seconds.length;
    rowsLat.push([META_MODE_LABELS[mode], `${int(Math.round(files / median(c.seconds)))}`,
      ...kinds.map((k) => (c.latency[k] ? `${c.latency[k].p50.toFixed(0)} / ${c.latency[k].p99.toFixed(0)}` : ''))]);
    rowsOps.push([META_MODE_LABELS[mode], ...opKinds.map((k) => (c.originOps[k] ?? 0).toFixed(1)), (c.originOps.total ?? 0).toFixed(1),
      c.nodeOps ? c.nodeOps.OPEN.toFixed(1) : '']);
  }
  out.push('### The steady include/stat storm in detail', '');
  out.push('Latency of each system call, p50 / p99 in microseconds, over every pass:', '');
  out.push(table(['Mode', 'Files per second', ...kinds.map((k) => `${k} p50 / p99`)], rowsLat), '');
  out.push('The origin\'s NFSv4 operations by kind, per pass (and the OPENs the cache node answered, where it served):', '');
  out.push(table(['Mode', ...opKinds, 'All', 'OPEN at the node'], rowsOps), '');
  if (m.failures.length) {
    out.push('What failed in this run (left out of the tables):', '', ...m.failures.map((f) => `- ${f}`), '');
  }
  return out.join('\n');
}
