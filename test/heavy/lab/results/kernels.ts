/**
 * The kernel matrix's recorded figures (test/heavy/lab/results/kernels.json) and the table of docs/images-and-kernels.md
 * rendered from them.
 * `EFSC_RECORD=1 bash test/heavy/lab/run.sh 'kernels\.lab'` records the extra kernels (test/heavy/lab/kernels.lab.ts), and
 * `EFSC_RECORD=1 bash test/heavy/lab/run.sh 'metrics\.lab'` bookworm's 6.1 (its disk cache figures, test/heavy/lab/metrics.lab.ts);
 * each run writes what it measured into the file and renders the page's table again. test/kernel-matrix.test.ts
 * holds the page to the file, so no figure of the table is typed by hand.
 */
import * as fs from 'fs';
import * as path from 'path';
import { notServing } from '../../../../lib/monitoring/metrics';

/** The disk cache bytes one phase cost, as the instance's collector sent them (`DiskCacheMetric`). */
export interface DiskDelta { read: number; written: number; growth: number }

/** What one kernel showed. Each field is set by the test that measured it; a failed test leaves it out. */
export interface KernelFigures {
  version: string;
  selfTest?: { fileBytes: number; serverBytes: number; fscacheReads: number };
  clientReRead?: { fileBytes: number; fscacheReads: number; nodeBytes: number; cacheDiskReadBytes: number };
  nodeEvicted?: { fileBytes: number; fscacheReads: number; originBytes: number; cacheDiskReadBytes: number };
  notServing?: { fileBytes: number; firstClient: DiskDelta; firstNode?: DiskDelta; reRead: DiskDelta; againClient: DiskDelta };
  /** A client's cache disk filled to `fillFreePercent` free by a file of its own, then below bcull by FS-Cache's writes. */
  culling?: { bcull: number; brun: number; fillFreePercent: number; freeBefore: number; freeAfter: number; culled: number; waitedSeconds: number };
  mirror?: { opensAfterFirstRound: number; sqliteAndLock: boolean };
  reexport?: { sqliteExit: number; sqliteError: boolean; flockExit: number; flockError: string };
  metrics?: { node: number; client: number };
}

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
export const KERNEL_FIGURES_FILE = path.join(REPO, 'test', 'heavy', 'lab', 'results', 'kernels.json');
/** The page that holds the kernel table (between its markers). */
export const KERNEL_TABLE_FILE = path.join(REPO, 'docs', 'images-and-kernels.md');
export const KERNEL_TABLE_START = '<!-- kernel-matrix:start (written by the lab with EFSC_RECORD=1: test/heavy/lab/results/kernels.ts) -->';
export const KERNEL_TABLE_END = '<!-- kernel-matrix:end -->';

export function readKernelFigures(file = KERNEL_FIGURES_FILE): Record<string, KernelFigures> {
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
}

/** Merges one run's figures into the file (a kernel's fields measured again replace the old ones) and renders the page's table. */
export function writeKernelFigures(figures: Record<string, Partial<KernelFigures>>, file = KERNEL_FIGURES_FILE): void {
  const all = readKernelFigures(file);
  for (const [tag, f] of Object.entries(figures)) all[tag] = { ...all[tag], ...f } as KernelFigures;
  const sorted = Object.fromEntries(Object.keys(all).sort(byVersion).map((k) => [k, all[k]]));
  fs.writeFileSync(file, JSON.stringify(sorted, null, 2) + '\n');
  const readmeFile = KERNEL_TABLE_FILE;
  const readme = fs.readFileSync(readmeFile, 'utf8');
  const range = kernelTableRange(readme);
  if (!range) throw new Error(`${path.relative(REPO, readmeFile)} has no ${KERNEL_TABLE_START} ... ${KERNEL_TABLE_END}`);
  fs.writeFileSync(readmeFile, readme.slice(0, range[0]) + renderKernelTable(sorted) + readme.slice(range[1]));
}

/** Kernel tags in version order (6.1, 6.12, 7): a JSON object lists integer-like keys such as "7" first. */
export function byVersion(a: string, b: string): number {
  const [pa, pb] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/** The kernel table, markers included: [start, end) of it in `readme` (the text of the page). */
export function kernelTableRange(readme: string): [number, number] | undefined {
  const s = readme.indexOf(KERNEL_TABLE_START);
  const e = readme.indexOf(KERNEL_TABLE_END);
  return s < 0 || e < s ? undefined : [s, e + KERNEL_TABLE_END.length];
}

const n = (v: number) => v.toLocaleString('en-US');
const mib = (v: number) => (v >= 1048576 || v === 0 ? `${(v / 1048576).toFixed(v % 1048576 === 0 ? 0 : 1)} MiB` : `${(v / 1024).toFixed(0)} KiB`);
const NOT_MEASURED = 'not measured';

/**
 * A row: what it shows, bookworm's 6.1 (where the whole lab proves it, by name, unless `recordedOnSix1`: then from the
 * file's 6.1 figures when there are some), a cell per kernel of the file, and what a kernel without the figure shows.
 */
interface Row { what: string; onSix1: string; recordedOnSix1?: boolean; missing?: string; cell(f: KernelFigures): string | undefined }

/** The lab's floor for the rule (its caches hold 256 MiB; a production period's is 256 MiB). */
export const LAB_NOT_SERVING_FLOOR = 4 * 1048576;
const delta = (d: DiskDelta) => `read ${mib(d.read)}, written ${mib(d.written)}, grown ${mib(d.growth)} ` +
  `(${notServing(d.read, d.written, d.growth, LAB_NOT_SERVING_FLOOR) ? 'the rule fires' : 'no alarm'})`;

const ROWS: Row[] = [
  {
    what: 'a client\'s re-read, page cache dropped, served by FS-Cache (the node serves no byte of it)',
    onSix1: 'yes (`scenarios.lab.ts`, `metrics.lab.ts`)',
    cell: (f) => f.clientReRead && `yes: ${mib(f.clientReRead.fileBytes)}, cache device read ${mib(f.clientReRead.cacheDiskReadBytes)}, ` +
      `IO rd +${n(f.clientReRead.fscacheReads)}, node +${n(f.clientReRead.nodeBytes)} bytes`,
  },
  {
    what: 'the node\'s re-export with its fsid, NFSv3 (the client\'s `fsc` mount) and NFSv4.1',
    onSix1: 'yes (`scenarios.lab.ts`)',
    cell: (f) => f.selfTest && 'yes',
  },
  {
    what: 'the node\'s disk cache serves a file evicted from its RAM (the origin serves no byte of it)',
    onSix1: 'yes (`mirror.lab.ts` (e))',
    cell: (f) => f.nodeEvicted && `yes: ${mib(f.nodeEvicted.fileBytes)}, cache device read ${mib(f.nodeEvicted.cacheDiskReadBytes)}, origin +${n(f.nodeEvicted.originBytes)} bytes`,
  },
  {
    what: 'the node\'s boot self-test of its disk cache (`NodeDiskCache.instanceStore({ requireSelfTest })`)',
    onSix1: 'served (`mirror.lab.ts` (a))',
    cell: (f) => f.selfTest && `served: ${n(f.selfTest.serverBytes)} bytes from the origin, ${n(f.selfTest.fscacheReads)} FS-Cache reads`,
  },
  {
    what: 'the "not serving" alarm\'s counters (cache device read, written, grown): a first read (client; node), a re-read (client), ' +
      'the file written over at the origin and read again (client, through a mount with `actimeo=0`)',
    onSix1: NOT_MEASURED,
    recordedOnSix1: true,
    cell: (f) => f.notServing && [
      `${mib(f.notServing.fileBytes)}; first: ${delta(f.notServing.firstClient)}${f.notServing.firstNode ? `; ${delta(f.notServing.firstNode)}` : ''}`,
      `re-read: ${delta(f.notServing.reRead)}`,
      `again: ${delta(f.notServing.againClient)}`,
    ].join('<br>'),
  },
  {
    what: 'a mirror\'s read delegations: no OPEN after the first round',
    onSix1: 'yes (`mirror.lab.ts` (b))',
    cell: (f) => f.mirror && (f.mirror.opensAfterFirstRound === 0 ? 'yes: 0 OPENs' : `no: ${n(f.mirror.opensAfterFirstRound)} OPENs`),
  },
  {
    what: 'a read-only SQLite query and a shared lock on a mirror',
    onSix1: 'yes (`mirror.lab.ts` (f))',
    cell: (f) => f.mirror && (f.mirror.sqliteAndLock ? 'yes' : 'no'),
  },
  {
    what: 'the same through the re-export (NFSv4.1)',
    onSix1: 'granted (`mirror.lab.ts` (f))',
    cell: (f) => f.reexport && (f.reexport.sqliteExit === 0 && f.reexport.flockExit === 0 ? 'granted'
      : `refused at once: SQLite ${f.reexport.sqliteError ? '"disk I/O error"' : `exit ${f.reexport.sqliteExit}`}, \`flock\` exit ${f.reexport.flockExit}` +
        (/524/.test(f.reexport.flockError) ? ' (error 524, the kernel\'s ENOTSUPP)' : '')),
  },
  {
    what: 'the mirrors\' own nfsd in its network namespace, reached on TCP 2050',
    onSix1: 'yes (`mirror.lab.ts`)',
    cell: (f) => f.mirror && 'yes',
  },
  {
    what: 'the metrics both scripts publish, parsed from that kernel\'s files',
    onSix1: 'yes (`metrics.lab.ts`)',
    cell: (f) => f.metrics && `yes: node ${f.metrics.node}, client ${f.metrics.client} metrics`,
  },
  {
    what: 'culling by cachefilesd at the library\'s limits: a client\'s cache disk filled by a file of its own, then taken below `bcull` by FS-Cache\'s writes',
    onSix1: 'not shown',
    recordedOnSix1: true,
    cell: (f) => f.culling && `${f.culling.culled > 0 ? `culled ${n(f.culling.culled)} object${f.culling.culled === 1 ? '' : 's'}` : 'nothing culled'} within ${f.culling.waitedSeconds} s: ` +
      `${f.culling.freeBefore}% free -> ${f.culling.freeAfter}% (bcull ${f.culling.bcull}%, brun ${f.culling.brun}%)`,
    missing: 'not run',
  },
];

/** The table with its markers, from the recorded figures: 6.1, then each kernel of the file other than 6.1. */
export function renderKernelTable(figures: Record<string, KernelFigures>): string {
  const extra = Object.keys(figures).filter((k) => k !== '6.1').sort(byVersion);
  const six1 = figures['6.1'];
  const head = ['behaviour the library relies on', '6.1', ...extra];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    `| the kernel booted (Debian's build, \`uname -r\`) | ${six1?.version ?? 'bookworm\'s'} | ${extra.map((k) => figures[k].version).join(' | ')} |`,
    ...ROWS.map((r) => {
      const first = (r.recordedOnSix1 && six1 && r.cell(six1)) || r.onSix1;
      return `| ${[r.what, first, ...extra.map((k) => r.cell(figures[k]) ?? r.missing ?? NOT_MEASURED)].join(' | ')} |`;
    }),
  ];
  return `${KERNEL_TABLE_START}\n${lines.join('\n')}\n${KERNEL_TABLE_END}`;
}
