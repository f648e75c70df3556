/**
 * The results table (items 1-4 and 10): each lab measurement against its baseline and the lab's ceiling, and the lab's
 * checks. Every ratio is computed from two figures of the same run; nothing is typed in by hand.
 */
import { LabResults, Results, SeedingResults } from '../results';
import { cmsRows } from './cms';
import { fractionOf, int, kib, mib, NOT_MEASURED, pct, Row, table, time, x } from './format';
import { appTreeLabel, SEEDING_TREES, seedingFigures } from './seeding';

export type { Row } from './format';

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

function seedingRows(s: SeedingResults | undefined, trees: readonly { prefix: string; label: string }[] = SEEDING_TREES): Row[] {
  const first = seedingFigures(s);
  // A run whose tests failed is not published as a result (its figures stay in bench/figures.json).
  if (!s || !s.measured || !first.loader || (s.exitCode ?? 0) !== 0) {
    const why = !s ? 'not run' : (s.exitCode ?? 0) !== 0 ? `the seeding lab's tests did not all pass (exit ${s.exitCode})` : (s.note ?? 'no figure for the parallel loader');
    return [{ item: '4', what: 'Seeding: parallel loader vs `cp -R`, `rsync -a` and `tar x`', baseline: `${NOT_MEASURED} (${why})`, cached: '', ceiling: '' }];
  }
  const rows: Row[] = [];
  for (const tree of trees) {
    const { loader, cp, rsync, tar, ceiling } = seedingFigures(s, tree.prefix);
    if (!loader) continue;
    const ceil = ceiling ? `${ceiling[0].replace(/^ceiling:\s*/i, '')}: ${ceiling[1].toFixed(1)} s` : '';
    for (const base of [cp, rsync, tar]) {
      if (!base) continue;
      rows.push({
        item: '4', what: `Seeding ${tree.label}: parallel loader vs \`${base[0]}\``,
        baseline: `\`${base[0]}\`: ${base[1].toFixed(1)} s`, cached: `parallel loader: ${loader[1].toFixed(1)} s`,
        speedup: base[1] / loader[1], ceiling: ceil, ofCeiling: ceiling ? ceiling[1] / loader[1] : undefined,
      });
    }
  }
  return rows;
}

/**
 * The rows of the results table: the lab's items 1-3, the seeding lab's item 4 (its generated tree and WordPress's, then
 * the web application's tree when it was measured), then the CMS's item 10.
 */
export function rows(results: Results): Row[] {
  const app = results.seedingApp ? seedingRows(results.seedingApp, [{ prefix: '', label: appTreeLabel(results.seedingApp) }]) : [];
  return [...labRows(results.lab), ...seedingRows(results.seeding), ...app, ...cmsRows(results.cms)];
}

/** The results table (items 1-4 and 10) in Markdown. */
export function mainTable(results: Results): string {
  return table(
    ['#', 'Work', 'Baseline', 'With the cache', 'Speed-up', "Lab's ceiling", 'Of the ceiling'],
    rows(results).map((r) => [r.item, r.what, r.baseline, r.cached, x(r.speedup), r.ceiling, pct(r.ofCeiling)]),
  );
}

/** The lab's counters around the warm reads and item 3's first passes, as Markdown lists. */
export function labChecks(lab: LabResults): string {
  const out: string[] = ['Counters read around the warm reads, to show where they were served from:', ''];
  for (const [k, v] of Object.entries(lab.checks)) out.push(`- ${k}: ${Array.isArray(v) ? v.join(', ') : int(v)}`);
  out.push('', 'First passes of item 3 (caches dropped on the client; they fill the node or FS-Cache):', '');
  for (const [k, v] of Object.entries(lab.metadata.firstPass)) out.push(`- ${k}: ${time(v)}`);
  return out.join('\n');
}
