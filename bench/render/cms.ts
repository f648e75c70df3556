/**
 * The CMS tables (item 10): WordPress's steady state, a cold web server and a publish through each mode, and the
 * results table's rows for it. Every ratio is computed from figures of the same run.
 */
import { CmsCell, CmsMode, CmsResults } from '../results';
import { median } from '../stats';
import { countRange, int, NOT_MEASURED, opsPerPass, pct, ratio, Row, secs, table, timeRange, x } from './format';

/** The modes in the tables' order: the baseline first, the ceiling last. */
export const CMS_MODE_ORDER: CmsMode[] = ['direct', 'fscache', 'v41', 'v3', 'mirror', 'local'];
export const CMS_MODE_LABELS: Record<CmsMode, string> = {
  direct: 'origin, directly', fscache: 'FS-Cache client', v41: 'node, NFSv4.1', v3: 'node, NFSv3', mirror: 'node\'s mirror', local: 'local disk',
};
const PAGES: Record<string, string> = { front: 'front page', post: 'a post', media: 'a media file' };
const PROFILES: Record<string, string> = { debian: 'Debian\'s PHP settings', tuned: 'PHP tuned for EFS' };

function steady(r: CmsResults, profile: string, mode: CmsMode, page: string): CmsCell | undefined {
  return r.cells.find((c) => c.kind === 'steady' && c.profile === profile && c.mode === mode && c.page === page && c.runs?.length);
}
/** A mode's cold-start runs (a cold web server's first requests each), with or without the client's warming first. */
export function coldRuns(r: CmsResults, mode: CmsMode, warmed = false): CmsCell[] {
  return r.cells.filter((c) => c.kind === 'cold' && c.mode === mode && c.seconds?.length && !!c.warming === warmed);
}
/** Each run's p99 of its requests. */
const p99s = (cells: CmsCell[]) => cells.map((c) => quantile(c.seconds!, 0.99));
/** `a` over `b` of values measured in runs: the ratio of medians, the range pairing the extremes. */
export function runsRatio(a: number[], b: number[]): { median: number; low: number; high: number } {
  return { median: median(a) / median(b), low: Math.min(...a) / Math.max(...b), high: Math.max(...a) / Math.min(...b) };
}
const rpsOf = (c: CmsCell) => c.runs!.map((w) => w.rps);

/** Requests per second of `a` over `b`: the ratio of medians, and the range pairing the slowest and fastest runs. */
export function cmsRatio(a: CmsCell, b: CmsCell): { median: number; low: number; high: number } {
  const ra = rpsOf(a);
  const rb = rpsOf(b);
  return { median: median(ra) / median(rb), low: Math.min(...ra) / Math.max(...rb), high: Math.max(...ra) / Math.min(...rb) };
}

const rpsRange = (v: number[]) => {
  const f = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
  return v.length > 1 ? `${f(median(v))} (${f(Math.min(...v))}-${f(Math.max(...v))})` : f(v[0]);
};
const ms = (s: number) => (s < 1 ? `${(s * 1000).toFixed(0)} ms` : `${s.toFixed(2)} s`);

/** p-th quantile (0-1) of values, nearest rank. */
export function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

function steadyTables(r: CmsResults): string[] {
  const profiles = [...new Set(r.cells.filter((c) => c.kind === 'steady').map((c) => c.profile))];
  // A page with no cell of a profile was not measured with it (the run's settings say which): no row.
  const rowsOf = (f: (c: CmsCell, local: CmsCell | undefined, direct: CmsCell | undefined) => string) => profiles.flatMap((profile) =>
    Object.keys(PAGES).filter((page) => CMS_MODE_ORDER.some((m) => steady(r, profile, m, page))).map((page) => {
      const local = steady(r, profile, 'local', page);
      const direct = steady(r, profile, 'direct', page);
      return [`${PAGES[page]}, ${PROFILES[profile] ?? profile}`, ...CMS_MODE_ORDER.map((m) => {
        const c = steady(r, profile, m, page);
        return c ? f(c, local, direct) : NOT_MEASURED;
      })];
    }));
  const header = ['Page, PHP settings', ...CMS_MODE_ORDER.map((m) => CMS_MODE_LABELS[m])];
  const runs = r.cells.find((c) => c.kind === 'steady')?.runs?.length ?? 0;
  return [
    `Requests per second (median of ${runs} runs, their range) and their share of the local disk's; below, the speed-up over the origin directly ` +
    '(ratio of medians, the range pairing the slowest and fastest runs of each side):',
    '',
    table(header, rowsOf((c, local) => `${rpsRange(rpsOf(c))}${local && c !== local ? `: ${pct(median(rpsOf(c)) / median(rpsOf(local)))}` : ''}`)),
    '',
    table(header, rowsOf((c, _l, direct) => (direct ? ratio(cmsRatio(c, direct), c.runs!.length) : ''))),
    '',
    'Latency, p50 / p99 (median over the runs of wrk\'s percentiles), and the origin\'s NFSv4 operations per request (median over the runs):',
    '',
    table(header, rowsOf((c) => `${ms(median(c.runs!.map((w) => w.p50)))} / ${ms(median(c.runs!.map((w) => w.p99)))}; ` +
      `${opsPerPass(median(c.originOpsPerRequest))} ops`)),
  ];
}

/** Operations per request as their median, followed by their range when they differ. */
const opsRange = (v: number[]) => (v.length > 1 && opsPerPass(Math.min(...v)) !== opsPerPass(Math.max(...v))
  ? `${opsPerPass(median(v))} (${opsPerPass(Math.min(...v))}-${opsPerPass(Math.max(...v))})` : opsPerPass(median(v)));
const msRange = (v: number[]) => (v.length > 1 ? `${ms(median(v))} (${ms(Math.min(...v))}-${ms(Math.max(...v))})` : ms(v[0]));

function coldTable(r: CmsResults): string[] {
  const local = coldRuns(r, 'local');
  const rows: [string, CmsCell[]][] = CMS_MODE_ORDER.flatMap((m): [string, CmsCell[]][] => [
    [CMS_MODE_LABELS[m], m === 'local' ? local : coldRuns(r, m)],
    ...(m === 'mirror' && coldRuns(r, m, true).length ? [['node\'s mirror, warmed by the client first', coldRuns(r, m, true)] as [string, CmsCell[]]] : []),
  ]);
  const body = rows.map(([label, cells]) => {
    if (!cells.length) return [label, NOT_MEASURED, '', '', '', '', '', ''];
    const v = (f: (c: CmsCell) => number) => cells.map(f);
    return [
      label, String(cells.length), msRange(v((c) => c.seconds![0])), msRange(v((c) => quantile(c.seconds!, 0.5))), msRange(p99s(cells)),
      local.length && cells !== local ? ratio(runsRatio(p99s(cells), p99s(local)), Math.min(cells.length, local.length)) : '',
      timeRange(v((c) => c.seconds!.reduce((a, b) => a + b, 0))), opsRange(v((c) => c.originOpsPerRequest[0])),
    ];
  });
  const any = rows.find(([, c]) => c.length)?.[1][0];
  const n = any?.seconds?.length ?? 0;
  const out = [
    `A web server that comes up cold: its first ${n} requests one after another (front page, post, media in turn), Debian's PHP settings; ` +
    'each figure the median of the runs and their range (the ratio: of medians, the range pairing the extremes):',
    '',
    table(['Mode', 'Runs', 'First request', 'p50', 'p99', 'p99 / local disk\'s', `All ${n}`, 'Origin ops per request'], body),
  ];
  const warmed = coldRuns(r, 'mirror', true).map((c) => c.warming!);
  if (warmed.length) {
    out.push('', `The client's warming before each warmed run (\`client.sh --warm\`, the warming its user data runs at boot, after the drop): ` +
      `${countRange(warmed.map((w) => w.files))} files, ${countRange(warmed.map((w) => w.mib))} MiB read in ${timeRange(warmed.map((w) => w.seconds))}, ` +
      `costing the origin ${countRange(warmed.map((w) => w.originOps))} operations (the node's mirror served ${countRange(warmed.map((w) => w.mirrorOps))}).`);
  }
  const boot = r.settings['warming at boot'];
  if (boot) out.push('', `At the web server's first boot its user data's warming logged: ${boot.replace(/\n/g, '; ')}.`);
  return out;
}

function publishTable(r: CmsResults): string[] {
  const body = CMS_MODE_ORDER.map((m) => {
    const c = r.cells.find((p) => p.kind === 'publish' && p.mode === m);
    if (!c) return [CMS_MODE_LABELS[m], NOT_MEASURED, '', ''];
    return [CMS_MODE_LABELS[m], c.seconds?.length ? secs(c.seconds[0]) : 'not within the limit', secs(c.copySeconds ?? NaN), int(c.originOpsPerRequest[0])];
  });
  return [
    'A publish: the whole tree rewritten (every file; WordPress\'s version changed), then the front page polled until it named the new ' +
    'version; one mode at a time, so each window\'s origin operations are its own (the local disk\'s copy is rewritten on the web server):',
    '',
    table(['Mode', 'New version served after', 'The rewrite took', 'Origin operations in the window'], body),
  ];
}

/** What the emulated CPU bounds: PHP's own time (the local disk's p50) against what each mode adds to it. */
function phpShare(r: CmsResults): string[] {
  const local = steady(r, 'debian', 'local', 'front');
  if (!local) return [];
  const php = median(local.runs!.map((w) => w.p50));
  const parts = CMS_MODE_ORDER.filter((m) => m !== 'local').map((m) => {
    const c = steady(r, 'debian', m, 'front');
    return c ? `${CMS_MODE_LABELS[m]} ${ms(Math.max(0, median(c.runs!.map((w) => w.p50)) - php))}` : undefined;
  }).filter(Boolean);
  return [`PHP's own time for the front page (the local disk's p50, Debian's PHP settings) was ${ms(php)} on the emulated CPU; what each ` +
    `mode added to it (its p50 less that): ${parts.join(', ')}. On hardware PHP runs 10-20x faster and EFS's latency does not shrink, ` +
    'so the file system\'s share of a request is larger there than here.'];
}

/** Which PHP settings the profiles are, and where they come from. */
const PHP_SOURCES = [
  'The PHP settings: Debian\'s php8.2-fpm as packaged (OPcache on, each script\'s timestamp checked every 2 s, a 4 MiB realpath',
  'cache kept 120 s), and tuned as operators of sites on shared file systems tune them: `opcache.validate_timestamps=0`',
  '(scripts never re-checked; the PHP manual: OPcache must then be reset, or PHP restarted, "for changes to the filesystem',
  'to take effect", so a deploy restarts PHP-FPM) and `realpath_cache_ttl=600` (resolved paths kept 10 minutes; the manual',
  'suggests a longer time "for systems with rarely changing files"). Sources: php.net/manual/en/opcache.configuration.php,',
  'php.net/manual/en/filesystem.configuration.php, and the WordPress operators\' guide "Adjusting PHP OPCache for WordPress"',
  '(managingwp.io), which gives the deploy-pipeline variant. With them the origin served about as many operations per',
  'request as without: what PHP reads as data rather than runs (such as WordPress\'s block.json files and the theme\'s',
  'theme.json and templates) is not OPcache\'s to keep. That cause is inferred; the files read were not traced.',
];

/** Item 10's tables, or a line saying it was not measured. */
export function cmsTables(r: CmsResults | undefined): string {
  if (!r) return `${NOT_MEASURED} (run \`npm run bench -- --only cms\`)`;
  const out = [...steadyTables(r), '', ...PHP_SOURCES, '', ...phpShare(r), '', ...coldTable(r), '', ...publishTable(r)];
  if (r.failures.length) out.push('', 'Failed, and left out of the tables:', '', ...r.failures.map((f) => `- ${f}`));
  return out.join('\n');
}

/** The results table's rows for item 10: the steady front page and a cold web server's p99, through the mirror and the node. */
export function cmsRows(r: CmsResults | undefined): Row[] {
  if (!r) return [{ item: '10', what: 'WordPress through each mode', baseline: `${NOT_MEASURED} (not run)`, cached: '', ceiling: '' }];
  const rows: Row[] = [];
  const direct = steady(r, 'debian', 'direct', 'front');
  const local = steady(r, 'debian', 'local', 'front');
  for (const m of ['mirror', 'v3', 'fscache'] as CmsMode[]) {
    const c = steady(r, 'debian', m, 'front');
    if (!c || !direct || !local) continue;
    const rps = (cell: CmsCell) => `${median(rpsOf(cell)).toFixed(2)} req/s`;
    rows.push({
      item: '10', what: `WordPress front page, steady, Debian's PHP: ${CMS_MODE_LABELS[m]}`,
      baseline: `origin, directly: ${rps(direct)}`, cached: `${CMS_MODE_LABELS[m]}: ${rps(c)}`,
      speedup: median(rpsOf(c)) / median(rpsOf(direct)), ceiling: `local disk: ${rps(local)}`, ofCeiling: median(rpsOf(c)) / median(rpsOf(local)),
    });
  }
  const [cd, cl] = [coldRuns(r, 'direct'), coldRuns(r, 'local')];
  for (const [warmed, label] of [[false, 'node\'s mirror'], [true, 'node\'s mirror, warmed by the client']] as const) {
    const cm = coldRuns(r, 'mirror', warmed);
    if (!cd.length || !cm.length || !cl.length) continue;
    const p99 = (cells: CmsCell[]) => median(p99s(cells));
    rows.push({
      item: '10', what: `WordPress, a cold web server's first ${cm[0].seconds!.length} requests, p99 (median of ${cm.length} runs): ${label}`,
      baseline: `origin, directly: ${ms(p99(cd))}`, cached: `${label}: ${ms(p99(cm))}`, speedup: p99(cd) / p99(cm),
      ceiling: `local disk: ${ms(p99(cl))}`, ofCeiling: p99(cl) / p99(cm),
    });
  }
  return rows;
}

/** One sentence of what item 10 means for a user, from its figures; undefined until the figures it quotes exist. */
export function cmsSummary(r: CmsResults | undefined): string | undefined {
  if (!r) return undefined;
  const [mirror, direct, local] = (['mirror', 'direct', 'local'] as CmsMode[]).map((m) => steady(r, 'debian', m, 'front'));
  const [cm, cl, cw] = [coldRuns(r, 'mirror'), coldRuns(r, 'local'), coldRuns(r, 'mirror', true)];
  if (!mirror || !direct || !local || !cm.length || !cl.length) return undefined;
  const p99 = (cells: CmsCell[]) => median(p99s(cells));
  const rps = (c: CmsCell) => median(rpsOf(c));
  const ops = (c: CmsCell) => opsPerPass(median(c.originOpsPerRequest));
  return `**A real CMS (item 10)**: WordPress's front page served from the node's mirror ran at ${pct(rps(mirror) / rps(local))} of the ` +
    `requests per second of the same tree on the web server's own disk and ${x(rps(mirror) / rps(direct))} those of the origin directly, ` +
    `costing the origin ${ops(mirror)} operations per request (directly: ${ops(direct)}); a web server that came up cold answered its ` +
    `first ${cm[0].seconds!.length} requests through the mirror with a p99 ${x(p99(cm) / p99(cl))} the local disk's` +
    (cw.length ? ` (${x(p99(cw) / p99(cl))} when the client's warming had read the tree first, in ${secs(median(cw.map((c) => c.warming!.seconds)))}, ` +
      `costing the origin ${int(Math.round(median(cw.map((c) => c.warming!.originOps))))} operations)` : '') + '. ' +
    'For a CMS on EFS, that is the mode to choose for its code and themes, with its uploads through the re-export and its database off EFS.';
}
