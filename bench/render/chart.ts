/** The chart's data (drawn by bench/chart.py): speed-ups, fractions of the ceilings, synthesis growth and item 6. */
import { MetaMode, MetaResults, MetaState, MetaWorkload, Results } from '../results';
import { avoidedPct, opsPerPass, x } from './format';
import { Row, rows } from './main-table';
import { META_CACHED, META_MODE_LABELS, META_WORKLOADS, metaAvoided, metaCell, metaSpeedup } from './metadata';
import { settingsLine } from './runs';
import { TEMPLATE_LIMIT_BYTES } from './synth';

/** What bench/chart.py draws, as JSON. */
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

/** The chart's data from the recorded results. */
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
