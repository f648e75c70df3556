/**
 * What a benchmark run records: the measurements, as measured, with the date, machine and settings of the run that
 * measured them. Nothing here is a result by itself: the table and chart are computed from these figures.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';

export interface Machine {
  /** CPU model as the kernel reports it. */
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly kernel: string;
  /** QEMU version, when the part ran VMs. */
  readonly qemu?: string;
}

/** One part of the benchmark, measured in one run. */
export interface PartRun {
  /** ISO date and time the part started. */
  readonly date: string;
  readonly durationSeconds: number;
  readonly machine: Machine;
  /** Settings that the figures depend on, human-readable. */
  readonly settings: Record<string, string>;
}

/** The run record of a lab part that started at `started` (ms) on `date`, with its settings; its origin first. */
export function labPartRun(date: string, started: number, origin: string, settings: Record<string, string>): PartRun {
  return { date, durationSeconds: (Date.now() - started) / 1000, machine: machine(true), settings: { origin, ...settings } };
}

/** A timed operation: wall seconds and the bytes it moved (when it moved data). */
export interface Timing {
  readonly seconds: number;
  readonly bytes?: number;
}

export interface SynthRow {
  readonly nodes: number;
  /** Median wall time of construct + synth, seconds (absent when the stack did not synthesize). */
  readonly seconds?: number;
  /** Every repetition, seconds. */
  readonly samples: number[];
  /** Size of the synthesized template file. */
  readonly templateBytes?: number;
  readonly resources?: number;
  /** Why the stack did not synthesize at all (with or without the dashboard). */
  readonly error?: string;
  /** Whether the default dashboard was part of the stack. */
  readonly dashboard: boolean;
  /** Why the default stack (with its dashboard) did not synthesize, when it did not: the row is then without it. */
  readonly defaultError?: string;
  /** An elastic fleet (`capacity: Capacity.elastic({ maxNodes: nodes })`, behind the NLB) rather than `capacity: Capacity.nodes(nodes)`. */
  readonly elastic?: boolean;
}

export interface SynthResults extends PartRun {
  readonly rows: SynthRow[];
}

export interface LabResults extends PartRun {
  readonly fscache: {
    readonly smallFiles: { readonly count: number; readonly bytesEach: number; readonly cold: Timing; readonly warm: Timing; readonly local: Timing };
    readonly bigFile: { readonly bytes: number; readonly cold: Timing; readonly warm: Timing; readonly local: Timing };
  };
  readonly node: {
    readonly bytes: number;
    readonly direct: Timing;
    readonly nodeCold: Timing;
    readonly nodeWarm: Timing;
    /** Raw TCP stream from the node to the client (the link's capacity in the lab), best of the samples. */
    readonly link: Timing;
  };
  readonly metadata: {
    readonly files: number;
    readonly bytesEach: number;
    readonly readFiles: number;
    /** `ls -lR` of the whole tree, second pass (client caches dropped before each pass). */
    readonly list: Record<MetadataPath, Timing>;
    /** `cat` of readFiles files in one process, second pass. */
    readonly read: Record<MetadataPath, Timing>;
    /** The first passes (`list.<path>`, `read.<path>`), which fill the node or FS-Cache. */
    readonly firstPass: Record<string, Timing>;
  };
  /** Evidence that the warm reads came from the cache: byte and page counters read around them. */
  readonly checks: Record<string, number | number[]>;
}

export type MetadataPath = 'direct' | 'node' | 'fscache' | 'local';

export interface SeedingResults extends PartRun {
  /** false when the seeding lab wrote no results: the row is reported as not measured. */
  readonly measured: boolean;
  readonly note?: string;
  readonly exitCode?: number;
  readonly link?: unknown;
  readonly results?: Record<string, number>;
  /** Percent busy of the loader's and the origin's vCPUs during each method (by its name in results). */
  readonly cpu?: Record<string, { loader: number; origin: number }>;
}

export type MetaMode = 'direct' | 'fscache' | 'node' | 'mirror';
export type MetaWorkload = 'storm' | 'tree' | 'ls';
export type MetaState = 'cold' | 'warm' | 'steady';

/** Latency of one kind of system call over a call's passes, microseconds. */
export interface OpLatency {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
}

/** One workload in one state through one mode: a call of bench/workload.py on a client. */
export interface MetaCell {
  readonly mode: MetaMode;
  readonly workload: MetaWorkload;
  readonly state: MetaState;
  /** Wall time of each pass, seconds. */
  readonly seconds: number[];
  /** The origin nfsd's NFSv4 operations per pass (total and by kind). */
  readonly originOps: Record<string, number>;
  /** The origin nfsd's NFSv4 requests (COMPOUNDs) per pass. */
  readonly originRpcs: number;
  /** The cache node's nfsd operations per pass (modes served by the node). */
  readonly nodeOps?: Record<string, number>;
  /** stat, open, read, readdir latencies (the ls workload has none). */
  readonly latency: Record<string, OpLatency>;
}

export interface SyncRun {
  readonly seconds: number;
  readonly originOps: Record<string, number>;
  readonly originRpcs: number;
  /** The mirror's state line after it: "<last success> <seconds> <files>". */
  readonly state: string;
}

export interface NodeMemory {
  readonly shmem: number;
  readonly slab: number;
  readonly available: number;
  /** Bytes used on the mirrors' tmpfs. */
  readonly tmpfsUsed: number;
  /** Bytes of the sync's record of its last walk (in /run, so in memory). */
  readonly walkRecord?: number;
}

/**
 * One sync of item 7: copying new files into the mirror, a first sync (no copy, no record), an unchanged tree, or a
 * tree of which a share of the files changed.
 */
export interface SyncSample extends SyncRun {
  readonly workers: number;
  readonly kind: 'copy' | 'first' | 'unchanged' | 'changed';
  readonly files: number;
  /** The sync's own log line, after "synced". */
  readonly line?: string;
}

/** How long one kind of change on the origin took to reach a client of the mirror. */
export interface StalenessSample {
  readonly change: 'change' | 'addition' | 'removal' | 'rename';
  readonly seconds: number;
}

/** The sync before issue 29 (fpart and rsync on a mount without attribute caching), from the run that measured it. */
export interface SyncBaseline {
  readonly date: string;
  readonly workers: number;
  readonly files: number;
  /** Unchanged syncs of a tree of `files`. */
  readonly unchangedSeconds: number[];
  readonly unchangedRpcs: number[];
  /** The copy of `copyFiles` new files into it. */
  readonly copyFiles: number;
  readonly copySeconds: number[];
  readonly copyRpcs: number[];
}

/** Item 7: the mirrors' sync on a tree of 20,000 files and one of 100,000, and its staleness (bench/mirror-sync.ts). */
export interface MirrorSyncResults extends PartRun {
  readonly smallFiles: number;
  readonly largeFiles: number;
  readonly changedShare: number;
  readonly intervalSeconds: number;
  readonly samples: SyncSample[];
  readonly staleness: StalenessSample[];
  /** The node right before and right after the first sync of the large tree. */
  readonly memoryBefore?: NodeMemory;
  readonly memoryAfter?: NodeMemory;
  readonly baseline?: SyncBaseline;
  readonly failures: string[];
}

/** The results of item 7 as recorded before issue 29: 1 job against 8, then a large tree. */
interface OldMirrorSyncResults extends PartRun {
  readonly compareFiles: number;
  readonly largeFiles: number;
  readonly samples: Array<SyncRun & { workers: number; kind: 'copy' | 'unchanged'; files: number }>;
}

/**
 * The baseline to keep beside a new run of item 7: the one a run of the new sync already keeps, or the figures of the
 * old sync's own run (its node with the most jobs, its large tree).
 */
export function syncBaselineOf(r: MirrorSyncResults | OldMirrorSyncResults | undefined): SyncBaseline | undefined {
  if (!r) return undefined;
  if ('baseline' in r || 'smallFiles' in r) return (r as MirrorSyncResults).baseline;
  const old = r as OldMirrorSyncResults;
  const workers = Math.max(...old.samples.map((x) => x.workers));
  const of = (kind: 'copy' | 'unchanged') => old.samples.filter((x) => x.workers === workers && x.kind === kind && x.files === old.largeFiles);
  const [copy, same] = [of('copy'), of('unchanged')];
  if (!copy.length || !same.length) return undefined;
  return {
    date: old.date, workers, files: old.largeFiles,
    unchangedSeconds: same.map((x) => x.seconds), unchangedRpcs: same.map((x) => x.originRpcs),
    copyFiles: old.largeFiles - old.compareFiles, copySeconds: copy.map((x) => x.seconds), copyRpcs: copy.map((x) => x.originRpcs),
  };
}

/** Item 8: clients reading one warm file through one node, one alone and all at once (bench/fan-in.ts). */
export interface FanInResults extends PartRun {
  readonly fileMiB: number;
  readonly clients: number;
  /** Seconds of each pass of one client alone. */
  readonly single: number[];
  /** Seconds of each pass of every client at once (first start to last end). */
  readonly all: number[];
  /** Busy share of the node's vCPU during each pass. */
  readonly nodeBusySingle: number[];
  readonly nodeBusyAll: number[];
  /** dd's summary line of the node reading the file from its own page cache. */
  readonly nodeLocal: string;
  readonly failures: string[];
}

export type ProtocolMode = 'direct' | 'v41' | 'v3';

/** Item 9: one storm state through one way of mounting (bench/protocol.ts). */
export interface ProtocolCell {
  readonly mode: ProtocolMode;
  readonly state: 'warm' | 'steady';
  readonly seconds: number[];
  readonly latency: Record<string, { n: number; p50: number; p99: number }>;
  /** Per pass: the origin nfsd's NFSv4 operations, of them OPENs, and the node nfsd's operations (v3 and v4). */
  readonly originOps: number;
  readonly originOpens: number;
  readonly nodeOps: number;
}

/** Item 9: NFSv4.1 against NFSv3 between a client and a node, and nconnect (bench/protocol.ts). */
export interface ProtocolResults extends PartRun {
  readonly stormFiles: number;
  readonly cells: ProtocolCell[];
  readonly fileMiB: number;
  /** Seconds of each read of the large file, by nconnect value. */
  readonly nconnect: Record<string, number[]>;
  /** The file handle sizes name_to_handle_at returned on the client's mounts. */
  readonly handles: string;
  readonly failures: string[];
}

export interface MetaResults extends PartRun {
  readonly cells: MetaCell[];
  /** What failed in the run (a failed measurement is left out of the tables, never shown as a result). */
  readonly failures: string[];
}

export type CmsMode = 'local' | 'direct' | 'fscache' | 'v41' | 'v3' | 'mirror';

/** wrk's figures of one steady run: requests per second, requests, latency percentiles (seconds), errors. */
export interface CmsWrkRun {
  readonly rps: number;
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

/** One measurement of the CMS bench (item 10) through one mode. */
export interface CmsCell {
  /** steady: wrk's runs; cold: a cold web server's first requests; publish: seconds until the new version was served. */
  readonly kind: 'steady' | 'cold' | 'publish';
  readonly mode: CmsMode;
  /** front, post or media (steady), mix (cold), front (publish). */
  readonly page: string;
  /** The PHP settings (test/heavy/lab/scenarios/cms.ts: PHP_PROFILES). */
  readonly profile: string;
  /** steady: each repeat. */
  readonly runs?: CmsWrkRun[];
  /** cold: each request's latency; publish: the seconds until served (empty if it was not within the limit). */
  readonly seconds?: number[];
  /**
   * The origin nfsd's NFSv4 operations other than SEQUENCE (every request's first, and all of an idle mount's lease upkeep)
   * per request (steady: per repeat; cold: one figure), or in the publish's window.
   */
  readonly originOpsPerRequest: number[];
  /** publish: seconds the rewrite of the tree took, and the poller's requests. */
  readonly copySeconds?: number;
  readonly requests?: number;
  /** cold: which run of the cold case (0, 1, ...): each mode is measured once per run, the runs one after another. */
  readonly run?: number;
  /** cold: the web server warmed the mode's tree (the client's warming, `client.sh --warm`) after its caches were dropped. */
  readonly warming?: CmsWarming;
}

/** A client's warming before a cold run: what its log says it read, how long it took, what it cost the origin. */
export interface CmsWarming {
  readonly seconds: number;
  readonly files: number;
  readonly mib: number;
  /** The origin nfsd's NFSv4 operations other than SEQUENCE during the warming. */
  readonly originOps: number;
  /** The operations the node's mirror nfsd served during the warming (the reads the mirror answered). */
  readonly mirrorOps: number;
}

export interface CmsResults extends PartRun {
  readonly cells: CmsCell[];
  readonly failures: string[];
}

export interface Results {
  cms?: CmsResults;
  synth?: SynthResults;
  lab?: LabResults;
  seeding?: SeedingResults;
  /** Item 4 with a tree shaped like the fourth seed's web application (11,000 files, 98 MB), measured alone. */
  seedingApp?: SeedingResults;
  metadata?: MetaResults;
  mirrorSync?: MirrorSyncResults;
  fanIn?: FanInResults;
  protocol?: ProtocolResults;
}

export function machine(withQemu: boolean): Machine {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  let qemu: string | undefined;
  if (withQemu) {
    try {
      qemu = /version\s+(\S+)/.exec(execFileSync('qemu-system-x86_64', ['--version'], { encoding: 'utf8' }))?.[1];
    } catch {
      qemu = undefined;
    }
  }
  return {
    cpu,
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    ...(qemu ? { qemu } : {}),
  };
}

export function readResults(file: string): Results {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Results) : {};
}

export function writeResults(file: string, results: Results): void {
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}
