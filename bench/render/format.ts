/** Formatting shared by the rendered tables: units, ratios with their spreads, counts and Markdown tables. */
import { Timing } from '../results';
import { median } from '../stats';

/** What a cell says when its figure was not recorded. */
export const NOT_MEASURED = 'not measured';

function mbps(t: Timing): string {
  return t.bytes ? `, ${(t.bytes / t.seconds / 1e6).toFixed(1)} MB/s` : '';
}

/** A timing: seconds, and its speed when it moved bytes. */
export function time(t: Timing): string {
  return `${t.seconds < 10 ? t.seconds.toFixed(2) : t.seconds.toFixed(1)} s${mbps(t)}`;
}

/** A ratio, such as a speed-up: `12x`, or one decimal below 10. */
export const x = (v: number | undefined) => (v === undefined ? '' : `${v < 10 ? v.toFixed(1) : v.toFixed(0)}x`);
/** A fraction as a whole percentage. */
export const pct = (v: number | undefined) => (v === undefined ? '' : `${(v * 100).toFixed(0)} %`);
/** Bytes in MiB, with at most one decimal. */
export const mib = (bytes: number) => `${+(bytes / 2 ** 20).toFixed(1)} MiB`;
/** Bytes in KiB, with at most one decimal. */
export const kib = (bytes: number) => `${+(bytes / 1024).toFixed(1)} KiB`;
/** A count with thousands separators. */
export const int = (n: number) => n.toLocaleString('en-US');

/** Speed of `a` as a fraction of the speed of `b`, for the same amount of work. */
export const fractionOf = (a: Timing, b: Timing) => b.seconds / a.seconds;

/** Seconds in ms below 0.1 s, with two decimals below 10 s and one above. */
export const secs = (v: number) => (v < 0.1 ? `${(v * 1000).toFixed(1)} ms` : v < 10 ? `${v.toFixed(2)} s` : `${v.toFixed(1)} s`);

/** A ratio of medians, followed by its range over the passes when there was more than one pass. */
export const ratio = (r: { median: number; low: number; high: number }, passes: number) =>
  passes > 1 ? `${x(r.median)} (${x(r.low)}-${x(r.high)})` : x(r.median);
/** A share of the baseline's origin operations avoided, or how many more were caused. */
export const avoidedPct = (v: number) => (v < 0 ? `${(-v * 100).toFixed(0)} % more` : v === 1 ? '100 % avoided'
  : `${v >= 0.995 ? (v * 100).toFixed(2) : (v * 100).toFixed(v >= 0.99 ? 1 : 0)} % avoided`);
/** Operations per pass: one decimal below 10, whole numbers above. */
export const opsPerPass = (v: number) => (v > 0 && v < 10 ? v.toFixed(1) : int(Math.round(v)));

/** Times as their median, followed by their range when there was more than one. */
export const timeRange = (v: number[]) => (v.length > 1 ? `${secs(median(v))} (${secs(Math.min(...v))}-${secs(Math.max(...v))})` : secs(v[0]));
/** Counts as their median, followed by their range when they differ. */
export const countRange = (v: number[]) => (v.length > 1 && Math.min(...v) !== Math.max(...v)
  ? `${int(Math.round(median(v)))} (${int(Math.min(...v))}-${int(Math.max(...v))})` : int(Math.round(median(v))));

/** A Markdown table: a header row, its rule and one row per body entry. */
export function table(header: string[], body: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
}

/** One row of the results table: a measurement, its baseline and the lab's ceiling for the same work. */
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
