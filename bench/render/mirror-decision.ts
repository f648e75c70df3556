/** The mirrors' decision table of docs/mirrors.md: which data belongs in a mirror, the re-export or EFS, with figures. */
import { MetaMode, MetaResults, MetaState, MetaWorkload, MirrorSyncResults, Results } from '../results';
import { median } from '../stats';
import { avoidedPct, int, mib, NOT_MEASURED, secs, table, x } from './format';
import { metaAvoided, metaCell, metaSpeedup } from './metadata';
import { syncResults, syncSamples } from './mirror-sync';

export const MIRROR_DECISION_START = '<!-- mirror-decision:start (written by npm run bench) -->';
export const MIRROR_DECISION_END = '<!-- mirror-decision:end -->';

/** What item 6 measured for a kind of data, or undefined when it measured nothing that applies. */
type Measured = (results: Results) => string | undefined;

const MIRROR_LABELS: Record<MetaMode, string> = { direct: 'origin directly', mirror: 'mirror', node: 're-export', fscache: 'FS-Cache' };
const DECISION_MODES: MetaMode[] = ['mirror', 'node', 'fscache'];

/** Each cached mode's speed-up over the origin directly (ratio of medians), for one workload and state. */
function decisionSpeedups(m: MetaResults, wl: MetaWorkload, state: MetaState): string {
  const base = metaCell(m, 'direct', wl, state);
  if (!base) return `${NOT_MEASURED} (failed)`;
  return DECISION_MODES.map((mode) => {
    const c = metaCell(m, mode, wl, state);
    return `${MIRROR_LABELS[mode]} ${c ? x(metaSpeedup(base, c).median) : `${NOT_MEASURED} (failed)`}`;
  }).join(', ');
}

function decisionAvoided(m: MetaResults, wl: MetaWorkload, state: MetaState): string {
  const base = metaCell(m, 'direct', wl, state);
  if (!base) return `${NOT_MEASURED} (failed)`;
  return DECISION_MODES.map((mode) => {
    const c = metaCell(m, mode, wl, state);
    return `${MIRROR_LABELS[mode]} ${c ? avoidedPct(metaAvoided(base, c)) : `${NOT_MEASURED} (failed)`}`;
  }).join(', ');
}

/** The mirrors' sync cost (item 7): an unchanged sync of the large tree and the memory it takes, per 100,000 files. */
function decisionSyncCost(recorded: MirrorSyncResults | undefined): string | undefined {
  const ms = syncResults(recorded);
  const same = ms ? syncSamples(ms, 'unchanged', ms.largeFiles) : [];
  const first = ms ? syncSamples(ms, 'first', ms.largeFiles) : [];
  if (!ms || !same.length || !first.length) return undefined;
  const per = (v: number) => (v * 100_000) / ms.largeFiles;
  const mem = ms.memoryBefore && ms.memoryAfter
    ? `; ${mib(per(ms.memoryAfter.tmpfsUsed - ms.memoryBefore.tmpfsUsed + ms.memoryAfter.slab - ms.memoryBefore.slab + (ms.memoryAfter.walkRecord ?? 0)))} of node memory (copy, inodes, record)` : '';
  return `the mirrors' sync with ${same[0].workers} jobs, per 100,000 files: nothing changed ${secs(per(median(same.map((x) => x.seconds))))} and ` +
    `${int(Math.round(per(median(same.map((x) => x.originRpcs)))))} origin requests; a first sync ${secs(per(median(first.map((x) => x.seconds))))}${mem} ` +
    `(item 7, a tree of ${int(ms.largeFiles)} files; times on emulated VMs)`;
}

/** The decision table of docs/mirrors.md: which data belongs in a mirror, the re-export or EFS, with item 6's figures. */
const DECISION_ROWS: Array<{ data: string; where: string; why: string; measured?: Measured }> = [
  {
    data: 'code, templates, vendor and package trees (`node_modules`, `vendor/`), read again and again, changed by deployments',
    where: 'mirror',
    why: 'opens and re-reads stop at the client (delegations); EFS sees one walk per interval per node',
    measured: ({ metadata: m }) => m && `speed-up over the origin directly, steady include/stat storm: ${decisionSpeedups(m, 'storm', 'steady')}; ` +
      `steady package tree: ${decisionSpeedups(m, 'tree', 'steady')}; origin operations in the steady storm: ${decisionAvoided(m, 'storm', 'steady')} (item 6)`,
  },
  {
    data: 'large files read once or by many clients (models, media, data sets)',
    where: 're-export (+ FS-Cache on clients)',
    why: 'the node\'s page cache and the clients\' disk caches hold them; a mirror would copy them to every node',
  },
  {
    data: 'data that must be seen at once after a write (uploads, sessions, queues)',
    where: 'EFS directly',
    why: 'a mirror lags by up to the interval plus a sync, the re-export by its attribute timers',
  },
  { data: 'anything written by clients', where: 'EFS directly', why: 'mirrors and the re-export are read-only' },
  {
    data: 'trees of thousands of files larger than a node\'s spare RAM',
    where: 'mirror on the instance store (`mirroring.storage`, node types with NVMe instance store)',
    why: 'the copy lives on local NVMe beside the disk cache, its hot files in the page cache; delegations as in RAM',
  },
  {
    data: 'trees of hundreds of thousands of files and more',
    where: 'mirror, with `mirroring.interval` above one sync; the re-export when the staleness that gives is too long',
    why: 'each sync walks the whole tree, one READDIR per reply-full of entries, and copies what changed',
    measured: (r) => decisionSyncCost(r.mirrorSync),
  },
];

/** The mirrors' decision table (docs/mirrors.md), from its start marker up to (not including) its end marker. */
export function mirrorDecisionSection(results: Results): string {
  return [
    MIRROR_DECISION_START,
    table(['data', 'where', 'why', 'measured (items 6 and 7 of `npm run bench`)'],
      DECISION_ROWS.map((r) => [r.data, r.where, r.why, r.measured?.(results) ?? NOT_MEASURED])),
    '',
    'Measured: speed-ups are ratios of the medians of the steady passes over the origin directly, mounted as EFS',
    'recommends, against an origin without delegations (like EFS); their ranges, the other states and workloads, and the',
    'sync tables are in [docs/benchmarks.md](benchmarks.md). "not measured": no item has a figure for that kind of data.',
    '',
  ].join('\n');
}
