/** The mirrors' sync tables (item 7): a sync's time and origin requests, its memory, staleness and projection. */
import { MirrorSyncResults, SyncSample } from '../results';
import { median } from '../stats';
import { countRange, int, mib, NOT_MEASURED, ratio, secs, table, timeRange } from './format';

/** Item 7's results in the current shape, or undefined (none recorded, or only figures in an older shape). */
export function syncResults(ms: MirrorSyncResults | undefined): MirrorSyncResults | undefined {
  return ms && 'smallFiles' in ms ? ms : undefined;
}

/** The samples of item 7 of one kind and tree size. */
export function syncSamples(ms: MirrorSyncResults, kind: SyncSample['kind'], files: number): SyncSample[] {
  return ms.samples.filter((x) => x.kind === kind && x.files === files);
}

/** NFSv4 operations of a sync that show where its requests went. */
const SYNC_OPS = ['READDIR', 'GETATTR', 'LOOKUP', 'ACCESS', 'OPEN', 'READ'];
const syncOps = (xs: SyncSample[]) => SYNC_OPS.map((k) => `${k} ${int(Math.round(median(xs.map((x) => x.originOps[k] ?? 0))))}`).join(', ');

/** The projection of a sync of the large tree to 1,000,000 files: linear in the files, from the medians measured. */
export function syncProjection(ms: MirrorSyncResults): {
  files: number; unchangedSeconds: number; unchangedRpcs: number; changedSeconds?: number; memory?: number;
} | undefined {
  const same = syncSamples(ms, 'unchanged', ms.largeFiles);
  if (!same.length) return undefined;
  const k = 1_000_000 / ms.largeFiles;
  const changed = syncSamples(ms, 'changed', ms.largeFiles);
  const m = ms.memoryBefore && ms.memoryAfter;
  return {
    files: 1_000_000,
    unchangedSeconds: median(same.map((x) => x.seconds)) * k,
    unchangedRpcs: median(same.map((x) => x.originRpcs)) * k,
    ...(changed.length ? { changedSeconds: median(changed.map((x) => x.seconds)) * k } : {}),
    ...(m ? {
      memory: (ms.memoryAfter!.tmpfsUsed - ms.memoryBefore!.tmpfsUsed + ms.memoryAfter!.slab - ms.memoryBefore!.slab
        + (ms.memoryAfter!.walkRecord ?? 0)) * k,
    } : {}),
  };
}

/**
 * What `mirroring.syncTimeout` allows, from item 7's large tree: each try of a sync walks the whole tree (an unchanged
 * sync is that walk), then copies what the copy lacks (a first sync's rate, its walk taken out). A first sync longer
 * than the timeout continues in further tries; a walk longer than it never completes.
 */
function syncTimeoutRates(ms: MirrorSyncResults): string | undefined {
  const same = syncSamples(ms, 'unchanged', ms.largeFiles);
  const first = syncSamples(ms, 'first', ms.largeFiles);
  if (!same.length || !first.length) return undefined;
  const walk = median(same.map((x) => x.seconds));
  const copy = median(first.map((x) => x.seconds)) - walk;
  if (!(walk > 0) || !(copy > 0)) return undefined;
  const walkRate = ms.largeFiles / walk;
  const copyRate = ms.largeFiles / copy;
  const tenMinutes = 600;
  return `\`mirroring.syncTimeout\` and the tree's size, from these syncs: each try walks the whole tree (the unchanged sync: ` +
    `about ${int(Math.round(walkRate))} entries per second) and then copies what the copy lacks (the first sync, its walk taken out: ` +
    `about ${int(Math.round(copyRate))} files per second). At these rates the default of 10 minutes walks about ` +
    `${int(Math.round((walkRate * tenMinutes) / 1000) * 1000)} entries, and a first sync of about ` +
    `${int(Math.round((tenMinutes / (1 / walkRate + 1 / copyRate)) / 1000) * 1000)} files fits in one try. A larger first sync ` +
    'continues in further tries, each walking again and copying what is left, and the node serves once the copy is whole; ' +
    'a tree whose walk alone takes longer than the timeout is never served. Rates are per node, at this lab\'s origin ' +
    '(2 ms away, emulated VMs): measure your own walk with an unchanged sync (its journal line gives the time).';
}

/** Item 7: the mirrors' sync on the small tree (beside the baseline sync's figures), on the large tree, and its staleness. */
export function mirrorSyncTables(recorded: MirrorSyncResults | undefined): string {
  const ms = syncResults(recorded);
  if (!ms) return `The mirrors' sync (item 7): ${NOT_MEASURED}.`;
  const out: string[] = [];
  const b = ms.baseline;
  const small = syncSamples(ms, 'unchanged', ms.smallFiles);
  const copy = syncSamples(ms, 'copy', ms.smallFiles);
  const body: string[][] = [];
  const w = ms.samples[0]?.workers;
  if (small.length) {
    const t = small.map((x) => x.seconds);
    const r = b && b.files === ms.smallFiles
      ? ratio({
        median: median(b.unchangedSeconds) / median(t), low: Math.min(...b.unchangedSeconds) / Math.max(...t),
        high: Math.max(...b.unchangedSeconds) / Math.min(...t),
      }, Math.min(t.length, b.unchangedSeconds.length))
      : '';
    if (b) body.push([`${int(b.files)} files, nothing changed: the sync before issue 29 (${b.date.slice(0, 10)})`, timeRange(b.unchangedSeconds), countRange(b.unchangedRpcs), (median(b.unchangedRpcs) / b.files).toFixed(1), '']);
    body.push([`${int(ms.smallFiles)} files, nothing changed: one walk, compared with the last`, timeRange(t), countRange(small.map((x) => x.originRpcs)), (median(small.map((x) => x.originRpcs)) / ms.smallFiles).toFixed(3), r]);
  } else {
    body.push([`${int(ms.smallFiles)} files, nothing changed`, `${NOT_MEASURED} (failed)`, '', '', '']);
  }
  if (b) body.push([`${int(b.copyFiles)} new files copied: the sync before issue 29`, timeRange(b.copySeconds), countRange(b.copyRpcs), (median(b.copyRpcs) / b.copyFiles).toFixed(1), '']);
  if (copy.length) body.push([`${int(ms.smallFiles)} new files copied: one walk, compared with the last`, timeRange(copy.map((x) => x.seconds)), countRange(copy.map((x) => x.originRpcs)), (median(copy.map((x) => x.originRpcs)) / ms.smallFiles).toFixed(1), '']);
  out.push(`One sync of a mirror of ${int(ms.smallFiles)} files by a node with ${w} jobs (median, range over the syncs):`, '');
  out.push(table(['Sync', 'Wall time', 'Origin requests', 'Requests per file', 'Speed-up over the sync before'], body), '');
  if (small.length) out.push(`Where the unchanged syncs' requests went (median per sync): ${syncOps(small)}.`, '');

  const kinds: Array<[SyncSample['kind'], string]> = [['first', 'first sync (no copy, no record, as at boot)'], ['unchanged', 'nothing changed'],
    ['changed', `${(ms.changedShare * 100).toFixed(0)} % of the files changed`]];
  const large: string[][] = [];
  for (const [kind, what] of kinds) {
    const xs = syncSamples(ms, kind, ms.largeFiles);
    large.push(xs.length
      ? [what, timeRange(xs.map((x) => x.seconds)), countRange(xs.map((x) => x.originRpcs)), syncOps(xs), xs[xs.length - 1].line ?? '']
      : [what, `${NOT_MEASURED} (failed)`, '', '', '']);
  }
  out.push(`A tree of ${int(ms.largeFiles)} files, by the same node:`, '');
  out.push(table(['Sync', 'Wall time', 'Origin requests', 'Operations', 'The sync\'s own line'], large), '');
  if (ms.memoryBefore && ms.memoryAfter) {
    out.push(`Node memory taken by the first sync of ${int(ms.largeFiles)} files: ${mib(ms.memoryAfter.tmpfsUsed - ms.memoryBefore.tmpfsUsed)} of tmpfs ` +
      `(file data, in page-sized blocks), ${mib(ms.memoryAfter.slab - ms.memoryBefore.slab)} of kernel slab (inodes and dentries of the copy), ` +
      `${mib(ms.memoryAfter.walkRecord ?? 0)} for the record of the last walk (in /run); MemAvailable fell by ${mib(ms.memoryBefore.available - ms.memoryAfter.available)}.`, '');
  }
  if (ms.staleness.length) {
    const same = syncSamples(ms, 'unchanged', ms.largeFiles);
    const bound = same.length ? ms.intervalSeconds + 2 * median(same.map((x) => x.seconds)) + 60 : undefined;
    out.push(`Staleness of the tree of ${int(ms.largeFiles)} files with \`mirroring.interval\` ${ms.intervalSeconds} s: how long after the change on the origin a client of the mirror saw it` +
      (bound ? ` (the bound, the interval plus two unchanged syncs plus the client's 60 s of directory attributes: ${secs(bound)})` : '') + ':', '');
    out.push(table(['Change on the origin', 'Seen by the client after'], ms.staleness.map((x) => [x.change, secs(x.seconds)])), '');
  }
  const timeout = syncTimeoutRates(ms);
  if (timeout) out.push(timeout, '');
  const p = syncProjection(ms);
  if (p) {
    out.push(`Projected to ${int(p.files)} files (the figures above, linear in the files; not measured): an unchanged sync ` +
      `${secs(p.unchangedSeconds)} and ${int(Math.round(p.unchangedRpcs))} origin requests per node per interval` +
      (p.changedSeconds !== undefined ? `, ${secs(p.changedSeconds)} with ${(ms.changedShare * 100).toFixed(0)} % changed` : '') +
      (p.memory !== undefined ? `; about ${mib(p.memory)} of node memory for the copy, its inodes and the record` : '') + '.', '');
  }
  if (ms.failures.length) out.push('What failed in this run (left out of the tables):', '', ...ms.failures.map((f) => `- ${f}`), '');
  return out.join('\n');
}
