/**
 * Turns the recorded figures into the Markdown table and the chart's data. Every ratio is computed here from two
 * figures of the same run; nothing is typed in by hand.
 */
import { FanInResults, LabResults, ProtocolMode, ProtocolResults, MetaCell, MetaMode, MetaResults, MetaState, MetaWorkload, MirrorSyncResults, PartRun, Results, SeedingResults, SynthResults, SyncSample, Timing } from './results';
import { median } from './stats';

/** CloudFormation's limit on a template's size (a template uploaded through S3), bytes. */
export const TEMPLATE_LIMIT_BYTES = 1_000_000;

export interface Row {
  readonly item: string;
  readonly what: string;
  readonly baseline: string;
  readonly cached: string;
  /** baseline time / cached time. */
  readonly speedup?: number;
  readonly ceiling: string;
  /** cached speed / ceiling speed. */
  readonly ofCeiling?: number;
}

export interface ChartSpec {
  readonly title: string;
  readonly subtitle: string;
  readonly speedups: Array<{ label: string; value: number }>;
  readonly ceilings: Array<{ label: string; value: number }>;
  readonly synth: Array<{ nodes: number; kib: number; seconds: number; dashboard: boolean }>;
  readonly limitKiB: number;
  /** Node counts that did not synthesize. */
  readonly synthRefused: number[];
  /** Item 6, when measured. */
  readonly metadata?: MetaChart;
}

/** Item 6 in the chart: each cached mode's speed-up over the origin directly, and the origin operations avoided. */
export interface MetaChart {
  readonly title: string;
  /** The cached modes, in the order of each group's bars. */
  readonly modes: string[];
  /** One group of bars per workload and state; a bar is null where its measurement failed. */
  readonly groups: Array<{ label: string; bars: Array<MetaBar | null> }>;
  readonly avoided: { readonly title: string; readonly bars: Array<{ label: string; value: number; text: string }> };
}

/** A speed-up: ratio of medians, and its range over every pair of passes (metaSpeedup). */
export interface MetaBar {
  readonly median: number;
  readonly low: number;
  readonly high: number;
  readonly text: string;
}

const NOT_MEASURED = 'not measured';

function mbps(t: Timing): string {
  return t.bytes ? `, ${(t.bytes / t.seconds / 1e6).toFixed(1)} MB/s` : '';
}

function time(t: Timing): string {
  return `${t.seconds < 10 ? t.seconds.toFixed(2) : t.seconds.toFixed(1)} s${mbps(t)}`;
}

const x = (v: number | undefined) => (v === undefined ? '' : `${v < 10 ? v.toFixed(1) : v.toFixed(0)}x`);
const pct = (v: number | undefined) => (v === undefined ? '' : `${(v * 100).toFixed(0)} %`);
const mib = (bytes: number) => `${+(bytes / 2 ** 20).toFixed(1)} MiB`;
const kib = (bytes: number) => `${+(bytes / 1024).toFixed(1)} KiB`;
const int = (n: number) => n.toLocaleString('en-US');

/** Speed of `a` as a fraction of the speed of `b`, for the same amount of work. */
const fractionOf = (a: Timing, b: Timing) => b.seconds / a.seconds;

function labRows(lab: LabResults | undefined): Row[] {
  if (!lab) {
    return ['1', '2', '3'].map((item) => ({ item, what: ['FS-Cache client', 'RAM cache node', 'Metadata-heavy work'][Number(item) - 1], baseline: NOT_MEASURED, cached: '', ceiling: '' }));
  }
  const f = lab.fscache;
  const n = lab.node;
  const m = lab.metadata;
  const rows: Row[] = [
    {
      item: '1', what: `FS-Cache client: ${f.smallFiles.count} files of ${kib(f.smallFiles.bytesEach)}`,
      baseline: `cold, from the origin: ${time(f.smallFiles.cold)}`, cached: `warm, from FS-Cache: ${time(f.smallFiles.warm)}`,
      speedup: f.smallFiles.cold.seconds / f.smallFiles.warm.seconds,
      ceiling: `client's local RAID: ${time(f.smallFiles.local)}`, ofCeiling: fractionOf(f.smallFiles.warm, f.smallFiles.local),
    },
    {
      item: '1', what: `FS-Cache client: one ${mib(f.bigFile.bytes)} file`,
      baseline: `cold, from the origin: ${time(f.bigFile.cold)}`, cached: `warm, from FS-Cache: ${time(f.bigFile.warm)}`,
      speedup: f.bigFile.cold.seconds / f.bigFile.warm.seconds,
      ceiling: `client's local RAID: ${time(f.bigFile.local)}`, ofCeiling: fractionOf(f.bigFile.warm, f.bigFile.local),
    },
    {
      item: '2', what: `RAM cache node: one ${mib(n.bytes)} file`,
      baseline: `origin, directly: ${time(n.direct)}`, cached: `through the warmed node: ${time(n.nodeWarm)}`,
      speedup: n.direct.seconds / n.nodeWarm.seconds,
      ceiling: `raw TCP, node to client: ${time(n.link)}`, ofCeiling: fractionOf(n.nodeWarm, n.link),
    },
    {
      item: '2', what: 'RAM cache node: the same file, first read (node cold)',
      baseline: `origin, directly: ${time(n.direct)}`, cached: `through the node, cold: ${time(n.nodeCold)}`,
      speedup: n.direct.seconds / n.nodeCold.seconds, ceiling: '',
    },
  ];
  const via = { node: 'the cache node', fscache: 'the FS-Cache client' } as const;
  for (const [kind, label] of [['list', `\`ls -lR\` of ${int(m.files)} files`], ['read', `read loop: ${int(m.readFiles)} files of ${kib(m.bytesEach)}`]] as const) {
    for (const p of ['node', 'fscache'] as const) {
      const t = m[kind];
      rows.push({
        item: '3', what: `${label}, through ${via[p]}`,
        baseline: `origin, directly: ${time(t.direct)}`, cached: `${p === 'node' ? 'warmed node' : 'FS-Cache mount, warm'}: ${time(t[p])}`,
        speedup: t.direct.seconds / t[p].seconds,
        ceiling: `client's local RAID: ${time(t.local)}`, ofCeiling: fractionOf(t[p], t.local),
      });
    }
  }
  return rows;
}

/** The seeding lab's figures, found by their names (whatever else it reports is listed under the table). */
export function seedingFigures(s: SeedingResults | undefined): {
  loader?: [string, number]; cp?: [string, number]; rsync?: [string, number]; ceiling?: [string, number];
} {
  const entries = Object.entries(s?.results ?? {});
  const find = (re: RegExp, not?: RegExp) => entries.find(([k]) => re.test(k.trim()) && !(not && not.test(k)));
  return {
    loader: find(/seed|loader|parallel/i, /again|of which|fpsync|ceiling|warm|node/i),
    cp: find(/^cp -R$/),
    rsync: find(/^rsync -a$/),
    ceiling: find(/ceiling/i),
  };
}

function seedingRows(s: SeedingResults | undefined): Row[] {
  const { loader, cp, rsync, ceiling } = seedingFigures(s);
  // A run whose tests failed is not published as a result (its figures stay in bench/figures.json).
  if (!s || !s.measured || !loader || (s.exitCode ?? 0) !== 0) {
    const why = !s ? 'not run' : (s.exitCode ?? 0) !== 0 ? `the seeding lab's tests did not all pass (exit ${s.exitCode})` : (s.note ?? 'no figure for the parallel loader');
    return [{ item: '4', what: 'Seeding: parallel loader vs `cp -R` and `rsync -a`', baseline: `${NOT_MEASURED} (${why})`, cached: '', ceiling: '' }];
  }
  const ceil = ceiling ? `${ceiling[0].replace(/^ceiling:\s*/i, '')}: ${ceiling[1].toFixed(1)} s` : '';
  const rows: Row[] = [];
  for (const base of [cp, rsync]) {
    if (!base) continue;
    rows.push({
      item: '4', what: `Seeding: parallel loader vs \`${base[0]}\``,
      baseline: `\`${base[0]}\`: ${base[1].toFixed(1)} s`, cached: `parallel loader: ${loader[1].toFixed(1)} s`,
      speedup: base[1] / loader[1], ceiling: ceil, ofCeiling: ceiling ? ceiling[1] / loader[1] : undefined,
    });
  }
  return rows;
}

export function rows(results: Results): Row[] {
  return [...labRows(results.lab), ...seedingRows(results.seeding)];
}

function table(header: string[], body: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
}

export function mainTable(results: Results): string {
  return table(
    ['#', 'Work', 'Baseline', 'With the cache', 'Speed-up', "Lab's ceiling", 'Of the ceiling'],
    rows(results).map((r) => [r.item, r.what, r.baseline, r.cached, x(r.speedup), r.ceiling, pct(r.ofCeiling)]),
  );
}

export function synthTable(synth: SynthResults | undefined): string {
  if (!synth) return `Synthesis (item 5): ${NOT_MEASURED}.`;
  const one = synth.rows.find((r) => r.nodes === 1 && r.seconds !== undefined);
  return table(
    ['Cache nodes', 'Synth time', 'vs 1 node', 'Template', 'vs 1 node', "Of CloudFormation's 1 MB limit", 'Resources'],
    synth.rows.map((r) => r.seconds === undefined || r.templateBytes === undefined
      ? [String(r.nodes), `does not synthesize: ${r.error ?? r.defaultError ?? 'unknown'}`, '', '', '', '', '']
      : [
        `${r.nodes}${r.elastic ? ' (elastic: maxNodes)' : ''}${r.dashboard ? '' : ' (without dashboard)'}`,
        `${r.seconds.toFixed(2)} s`, one?.seconds ? x(r.seconds / one.seconds) : '',
        kib(r.templateBytes), one?.templateBytes ? x(r.templateBytes / one.templateBytes) : '',
        pct(r.templateBytes / TEMPLATE_LIMIT_BYTES), String(r.resources ?? ''),
      ]),
  );
}

function machineLine(p: PartRun): string {
  const m = p.machine;
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel}${m.qemu ? `, QEMU ${m.qemu} (TCG)` : ''}`;
}

function partLines(name: string, p: PartRun | undefined): string[] {
  if (!p) return [`- **${name}**: ${NOT_MEASURED}.`];
  const lines = [`- **${name}**: ${p.date.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}, ${Math.round(p.durationSeconds)} s; ${machineLine(p)}.`];
  for (const [k, v] of Object.entries(p.settings)) lines.push(`  - ${k}: ${v}`);
  return lines;
}

/** One-line summary of the settings, for the README and the chart. */
export function settingsLine(results: Results): string {
  const p = results.lab ?? results.synth ?? results.seeding;
  const parts = [p ? `${p.date.slice(0, 10)}, ${machineLine(p)}` : ''];
  if (results.lab) parts.push(`items 1-3: ${results.lab.settings['origin link'].replace(/ \(EFS stand-in.*\)$/, '')}`);
  return parts.filter(Boolean).join('; ');
}

export function markdown(results: Results, opts: { chart?: string; smoke?: boolean }): string {
  const out: string[] = ['# Benchmarks', ''];
  out.push(
    'Written by `npm run bench` (see [bench/](../bench)) from the figures it measured and recorded in',
    '`bench/figures.json`. Each speed-up and each fraction of a ceiling is a ratio of two figures measured in the same run,',
    'on the same machine; the VMs are emulated (QEMU TCG, no KVM), so absolute speeds are 10-20x below hardware and only',
    'the ratios mean something. The origin link is shaped like a remote service, and the speed-ups of items 1 and 2 depend',
    'on how it is shaped (stated below): a slower or farther origin gives larger ratios.',
    '',
  );
  if (opts.smoke) out.push('**Smoke run**: only what this run measured is shown; it is not a benchmark result.', '');
  if (opts.chart) out.push(`![Benchmark chart](${opts.chart})`, '');
  out.push('## Results', '', mainTable(results), '');
  out.push('Speed-up: baseline time / cached time. Of the ceiling: cached speed / the ceiling\'s speed for the same work.', '');
  out.push('## Metadata-heavy work, cold, warm and steady (item 6)', '');
  if (results.metadata) {
    out.push(
      'Against an origin that behaves like EFS (no delegations), each workload through each mode, run by the library\'s own',
      'client user data (the baseline mounts the origin with EFS\'s recommended options). The settings are under "Runs and',
      'settings"; a part of the run that failed is listed under the tables and left out of them.',
      '',
    );
  }
  out.push(metadataTables(results.metadata), '');
  if (results.metadata) out.push(metadataDetail(results.metadata));
  out.push('## The mirrors\' sync (item 7)', '');
  if (syncResults(results.mirrorSync)) {
    out.push(
      'What a mirror costs the origin and how long its sync takes, against the same kind of origin, by one cache node; each',
      'sync started by hand with the timer held. The settings are under "Runs and settings".',
      '',
    );
  }
  out.push(mirrorSyncTables(results.mirrorSync), '');
  out.push('## Several clients, one warm file, one node (item 8)', '', fanInTable(results.fanIn), '');
  out.push('## NFSv4.1 or NFSv3 between clients and a node, and nconnect (item 9)', '', protocolTables(results.protocol), '');
  out.push('## Synthesis: how cost grows with the fleet (item 5)', '', synthTable(results.synth), '');
  const failed = results.synth?.rows.filter((r) => r.defaultError) ?? [];
  for (const r of failed) {
    if (!r.error) out.push(`With ${r.nodes} nodes the default stack (with its dashboard) did not synthesize: "${r.defaultError}".`, '');
  }
  const s = results.seeding;
  if (s?.results && Object.keys(s.results).length && (s.exitCode ?? 0) === 0) {
    out.push('## Seeding: every figure of the seeding lab (item 4)', '');
    out.push(table(['Measurement', 'Seconds'], Object.entries(s.results).map(([k, v]) => [k.trim(), v.toFixed(1)])), '');
    if (s.note) out.push(`Note: ${s.note}.`, '');
  }
  const lab = results.lab;
  if (lab) {
    out.push('## Checks and first passes', '');
    out.push('Counters read around the warm reads, to show where they were served from:', '');
    for (const [k, v] of Object.entries(lab.checks)) out.push(`- ${k}: ${Array.isArray(v) ? v.join(', ') : int(v)}`);
    out.push('', 'First passes of item 3 (caches dropped on the client; they fill the node or FS-Cache):', '');
    for (const [k, v] of Object.entries(lab.metadata.firstPass)) out.push(`- ${k}: ${time(v)}`);
    out.push('');
  }
  out.push('## Runs and settings', '');
  out.push(...partLines('Items 1-3 (lab VMs)', results.lab));
  out.push(...partLines('Item 4 (seeding lab)', results.seeding));
  out.push(...partLines('Item 5 (synthesis)', results.synth));
  out.push(...partLines('Item 6 (metadata lab)', results.metadata));
  out.push(...partLines('Item 7 (mirror sync lab)', results.mirrorSync));
  out.push(...partLines('Item 8 (fan-in lab)', results.fanIn));
  out.push(...partLines('Item 9 (protocol lab)', results.protocol));
  out.push('', '## Re-running', '');
  out.push(
    '```',
    'sudo npm run bench                       # everything (root: the lab makes network namespaces and taps)',
    'npm run bench -- --only synth            # one part: synth, lab (items 1-3), seeding (item 4), metadata (item 6), mirror-sync (item 7), fan-in (item 8), protocol (item 9)',
    'npm run bench -- --only render           # the table, chart and README section from bench/figures.json',
    'npm run bench -- --smoke                 # cheap check: synth with 1 node, rendered into a temporary folder',
    '```',
    '',
    'Options: `--delay-ms` and `--rate-mbit` shape the origin link (defaults 2 ms and 16 Mbit/s), `--out DIR` writes the',
    'table and chart elsewhere. The chart needs matplotlib, installed into `.venv` from `requirements-bench.txt` by',
    '`bench/setup.sh` (the bench runs it).',
    '',
  );
  return out.join('\n');
}

export function chartSpec(results: Results): ChartSpec {
  const rs = rows(results);
  const label = (r: Row) => `${r.item}. ${r.what.replace(/`/g, '')}`;
  return {
    title: 'cdk-efs-cache benchmarks (ratios measured in one run; emulated VMs)',
    subtitle: settingsLine(results),
    speedups: rs.filter((r) => r.speedup !== undefined).map((r) => ({ label: label(r), value: r.speedup! })),
    ceilings: rs.filter((r) => r.ofCeiling !== undefined).map((r) => ({ label: label(r), value: r.ofCeiling! })),
    // Fixed fleets only: an elastic fleet's template does not grow with maxNodes (its row is in the table).
    synth: (results.synth?.rows ?? []).flatMap((r) => (r.seconds === undefined || r.templateBytes === undefined || r.elastic ? []
      : [{ nodes: r.nodes, kib: r.templateBytes / 1024, seconds: r.seconds, dashboard: r.dashboard }])),
    limitKiB: TEMPLATE_LIMIT_BYTES / 1024,
    synthRefused: (results.synth?.rows ?? []).filter((r) => r.seconds === undefined).map((r) => r.nodes),
    ...(results.metadata ? { metadata: metaChart(results.metadata) } : {}),
  };
}

// Item 6: metadata-heavy work (bench/metadata.ts). Ratios are of medians; their range pairs the extremes
// (slowest baseline pass over fastest cached pass, and the reverse), so it holds every pair of passes measured.
const META_WORKLOADS: Array<[MetaWorkload, string]> = [['storm', 'include/stat storm'], ['tree', 'package tree, walked and read'], ['ls', '`ls -lR` of the tree']];
const META_STATES: Array<[MetaState, string]> = [['cold', 'cold'], ['warm', 'warm (client caches dropped)'], ['steady', 'steady (nothing dropped)']];
const META_CACHED: MetaMode[] = ['fscache', 'node', 'mirror'];
export const META_MODE_LABELS: Record<MetaMode, string> = {
  direct: 'origin, directly', fscache: 'FS-Cache client', node: 'through the node', mirror: 'node\'s mirror',
};

const secs = (v: number) => (v < 0.1 ? `${(v * 1000).toFixed(1)} ms` : v < 10 ? `${v.toFixed(2)} s` : `${v.toFixed(1)} s`);

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

const ratio = (r: { median: number; low: number; high: number }, passes: number) =>
  passes > 1 ? `${x(r.median)} (${x(r.low)}-${x(r.high)})` : x(r.median);
const avoidedPct = (v: number) => (v < 0 ? `${(-v * 100).toFixed(0)} % more` : v === 1 ? '100 % avoided'
  : `${v >= 0.995 ? (v * 100).toFixed(2) : (v * 100).toFixed(v >= 0.99 ? 1 : 0)} % avoided`);
const opsPerPass = (v: number) => (v > 0 && v < 10 ? v.toFixed(1) : int(Math.round(v)));

const META_CHART_WORKLOADS: Record<MetaWorkload, string> = { storm: 'include/stat storm', tree: 'package tree', ls: 'ls -lR' };
const META_CHART_STATES: MetaState[] = ['warm', 'steady'];

/** Item 6 for the chart: the warm and steady speed-ups of each cached mode, and the steady storm's origin operations avoided. */
export function metaChart(m: MetaResults): MetaChart {
  const groups = META_WORKLOADS.flatMap(([wl]) => META_CHART_STATES.map((state) => {
    const base = metaCell(m, 'direct', wl, state);
    return {
      label: `${META_CHART_WORKLOADS[wl]}, ${state}`,
      bars: META_CACHED.map((mode): MetaBar | null => {
        const c = metaCell(m, mode, wl, state);
        if (!base || !c) return null;
        const r = metaSpeedup(base, c);
        return { ...r, text: x(r.median) };
      }),
    };
  }));
  const label = (mode: MetaMode) => (mode === 'node' ? `${META_MODE_LABELS[mode]} (re-export)` : META_MODE_LABELS[mode]);
  const base = metaCell(m, 'direct', 'storm', 'steady');
  const avoided = base ? META_CACHED.flatMap((mode) => {
    const c = metaCell(m, mode, 'storm', 'steady');
    if (!c) return [];
    const v = metaAvoided(base, c);
    return [{ label: label(mode), value: v, text: `${avoidedPct(v)} (${opsPerPass(c.originOps.total)} of ${opsPerPass(base.originOps.total)} per pass)` }];
  }) : [];
  return {
    title: '6. Metadata-heavy work: speed-up over the origin directly\n(origin without delegations, like EFS)',
    modes: META_CACHED.map(label),
    groups,
    avoided: { title: 'Steady include/stat storm:\norigin operations avoided', bars: avoided },
  };
}

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

/** Item 7's results in the current shape, or undefined (none, or only the figures of the sync before issue 29). */
function syncResults(ms: MirrorSyncResults | undefined): MirrorSyncResults | undefined {
  return ms && 'smallFiles' in ms ? ms : undefined;
}

/** The samples of item 7 of one kind and tree size. */
function syncSamples(ms: MirrorSyncResults, kind: SyncSample['kind'], files: number): SyncSample[] {
  return ms.samples.filter((x) => x.kind === kind && x.files === files);
}

const timeRange = (v: number[]) => (v.length > 1 ? `${secs(median(v))} (${secs(Math.min(...v))}-${secs(Math.max(...v))})` : secs(v[0]));
const countRange = (v: number[]) => (v.length > 1 && Math.min(...v) !== Math.max(...v)
  ? `${int(Math.round(median(v)))} (${int(Math.min(...v))}-${int(Math.max(...v))})` : int(Math.round(median(v))));
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

/** Item 7: the mirrors' sync on a tree of 20,000 files (beside the sync before issue 29), one of 100,000, and its staleness. */
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

const PROTOCOL_LABELS: Record<ProtocolMode, string> = {
  direct: 'origin directly (EFS options)', v41: 'node, NFSv4.1 (fleet client options)', v3: 'node, NFSv3 (same options, vers=3, nolock)',
};

/** Item 9: the storm through the origin, a node over NFSv4.1 and a node over NFSv3; the large file with nconnect. */
export function protocolTables(p: ProtocolResults | undefined): string {
  if (!p) return `NFSv4.1 against NFSv3 between a client and a node (item 9): ${NOT_MEASURED}.`;
  const out: string[] = [
    `The include/stat storm (${p.stormFiles} files) against an origin without delegations: time per pass (median, range), speed-up over the origin directly ` +
      '(ratio of medians, range over every pair of passes), and what each pass cost the origin and the node (their own nfsd counters):',
    '',
  ];
  const body: string[][] = [];
  for (const state of ['warm', 'steady'] as const) {
    const base = p.cells.find((c) => c.mode === 'direct' && c.state === state);
    for (const mode of ['direct', 'v41', 'v3'] as ProtocolMode[]) {
      const c = p.cells.find((k) => k.mode === mode && k.state === state);
      const label = `${state === 'warm' ? 'warm (client caches dropped)' : 'steady (nothing dropped)'}: ${PROTOCOL_LABELS[mode]}`;
      if (!c) {
        body.push([label, `${NOT_MEASURED} (failed)`, '', '', '', '', '']);
        continue;
      }
      const lat = c.latency.open ? `${c.latency.open.p50.toFixed(0)} / ${c.latency.open.p99.toFixed(0)} µs` : '';
      const speed = base && mode !== 'direct'
        ? ratio({
          median: median(base.seconds) / median(c.seconds), low: Math.min(...base.seconds) / Math.max(...c.seconds),
          high: Math.max(...base.seconds) / Math.min(...c.seconds),
        },
          Math.min(base.seconds.length, c.seconds.length)) : '';
      body.push([label, timeRange(c.seconds), speed, opsPerPass(c.originOps), opsPerPass(c.originOpens), mode === 'direct' ? '' : opsPerPass(c.nodeOps), lat]);
    }
  }
  out.push(table(['State and mount', 'Time per pass', 'Speed-up', 'Origin ops / pass', 'Origin OPENs / pass', 'Node ops / pass', 'open p50 / p99'], body), '');
  const n1 = p.nconnect['1'] ?? [];
  const n4 = p.nconnect['4'] ?? [];
  if (n1.length && n4.length) {
    const n = Math.min(n1.length, n4.length);
    const gains = Array.from({ length: n }, (_, i) => n1[i] / n4[i]);
    out.push(`One file of ${p.fileMiB} MiB, warm on the node, read over NFSv4.1 after the client dropped its caches: nconnect=1 ${timeRange(n1)}, nconnect=4 ${timeRange(n4)}; ` +
      `nconnect=4 over nconnect=1: ${ratio({ median: median(n1) / median(n4), low: Math.min(...gains), high: Math.max(...gains) }, n)} (each pass paired with the one after it).`, '');
  } else {
    out.push(`nconnect: ${NOT_MEASURED} (failed).`, '');
  }
  if (p.handles) out.push(`File handles (name_to_handle_at on the client's mounts, bytes; a client's copy is the server's handle plus a few bytes): ${p.handles}.`, '');
  if (p.failures.length) out.push('What failed in this run (left out of the tables):', '', ...p.failures.map((f) => `- ${f}`), '');
  return out.join('\n');
}

export const README_START = '<!-- benchmarks:start (written by npm run bench) -->';
export const README_END = '<!-- benchmarks:end -->';

/** The README's benchmark section, from its start marker up to (not including) its end marker. */
export function readmeSection(results: Results): string {
  return [
    README_START,
    `Measured by \`npm run bench\` (${settingsLine(results)}); details, settings and every figure in`,
    '[docs/benchmarks.md](docs/benchmarks.md).',
    '',
    '![Benchmark chart](docs/benchmarks.png)',
    '',
    mainTable(results),
    '',
    '**Metadata-heavy work (item 6)**, against an origin with no delegations, like EFS:',
    '',
    metadataTables(results.metadata),
    '',
    synthTable(results.synth),
    '',
  ].join('\n');
}

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

/** A part of the README or of a docs page written by the bench: from its start marker up to (not including) its end marker. */
export interface ReadmePart {
  /** What the part is, for messages. */
  readonly name: string;
  /** The file that holds it, from the repository's root. */
  readonly file: string;
  readonly start: string;
  readonly end: string;
  readonly render: (results: Results) => string;
}

export const README_PARTS: ReadmePart[] = [
  { name: 'benchmark section', file: 'README.md', start: README_START, end: README_END, render: readmeSection },
  { name: 'Mirrors decision table', file: 'docs/mirrors.md', start: MIRROR_DECISION_START, end: MIRROR_DECISION_END, render: mirrorDecisionSection },
];

/** Where a part's generated text is in `text` ([start, end)), or undefined when its markers are missing or out of order. */
export function readmePartRange(text: string, part: ReadmePart): [number, number] | undefined {
  const start = text.indexOf(part.start);
  const end = start < 0 ? -1 : text.indexOf(part.end, start);
  return start >= 0 && end > start ? [start, end] : undefined;
}

/** `text` (the file `file`) with every part of that file between its markers rendered again; `missing` names the parts without markers. */
export function renderReadme(text: string, results: Results, file = 'README.md'): { text: string; missing: string[] } {
  let out = text;
  const missing: string[] = [];
  for (const part of README_PARTS.filter((p) => p.file === file)) {
    const range = readmePartRange(out, part);
    if (!range) {
      missing.push(part.name);
      continue;
    }
    out = out.slice(0, range[0]) + part.render(results) + out.slice(range[1]);
  }
  return { text: out, missing };
}
