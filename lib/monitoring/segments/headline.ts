import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import type { MonitoredOrigin } from './monitored';
import { DashboardSegment } from './segment';

/**
 * The headline: bytes the cache tiers served against bytes read from EFS, their share, and the EFS read charges
 * they avoided at `efsReadPricePerGb` (US dollars). `served` gives the tiers' served bytes when the dashboard
 * renders, since client groups may be added after it is made.
 */
export function headlineSegment(origin: MonitoredOrigin, served: () => cloudwatch.IMetric[], efsReadPricePerGb: number): DashboardSegment {
  const headline = new RenderedLater(16, 6, () => new cloudwatch.GraphWidget({
    title: 'Reads served by the cache tiers vs read from EFS (bytes per minute)',
    width: 16,
    left: [origin.metricDataReadIoBytes({ label: 'read from EFS (DataReadIOBytes)' }), ...served()],
  }));
  const offload = new RenderedLater(8, 3, () => new cloudwatch.SingleValueWidget({
    title: 'Share of reads served by caches (%)',
    width: 8,
    height: 3,
    metrics: [offloadShare(origin, served())],
  }));
  const savings = new RenderedLater(8, 3, () => new cloudwatch.SingleValueWidget({
    title: `EFS read charges avoided (USD per hour, at $${decimal(efsReadPricePerGb)} per GB)`,
    width: 8,
    height: 3,
    metrics: [readChargesAvoided(served(), efsReadPricePerGb)],
  }));
  return {
    rows: [
      [new cloudwatch.TextWidget({
        markdown: '## EFS cache\nHeadline: bytes served by the cache tiers against bytes read from EFS. The higher the ' +
          'share served by caches, the less the workload pays EFS for reads.',
        width: 24, height: 2,
      })],
      [headline, new cloudwatch.Column(offload, savings)],
    ],
    addAlarms: () => {},
  };
}

/** Percent of read bytes served by the caches: served / (served + read from EFS). */
function offloadShare(origin: MonitoredOrigin, served: cloudwatch.IMetric[]): cloudwatch.IMetric {
  const usingMetrics: Record<string, cloudwatch.IMetric> = { efs: origin.metricDataReadIoBytes() };
  served.forEach((m, i) => { usingMetrics[`c${i}`] = m; });
  const cacheSum = served.map((_m, i) => `FILL(c${i}, 0)`).join(' + ') || '0';
  return new cloudwatch.MathExpression({
    expression: `100 * (${cacheSum}) / ((${cacheSum}) + FILL(efs, 0))`,
    usingMetrics,
    label: '% of reads served by caches',
    period: CACHE_DASHBOARD_DEFAULTS.display.offloadSharePeriod,
  });
}

/**
 * What EFS would have charged for the bytes the caches served, in US dollars per hour: their sum / 1e9 * the price
 * per GB (decimal GB, as EFS bills). The nodes' nfsd reads include what they read from EFS on a miss, which EFS did
 * charge (docs/sizing-and-cost.md).
 */
export function readChargesAvoided(served: cloudwatch.IMetric[], pricePerGb: number): cloudwatch.IMetric {
  const usingMetrics: Record<string, cloudwatch.IMetric> = {};
  served.forEach((m, i) => { usingMetrics[`c${i}`] = m; });
  const cacheSum = served.map((_m, i) => `FILL(c${i}, 0)`).join(' + ') || '0';
  return new cloudwatch.MathExpression({
    expression: `(${cacheSum}) / 1000000000 * ${decimal(pricePerGb)}`,
    usingMetrics,
    label: 'EFS read charges avoided (USD)',
    period: CACHE_DASHBOARD_DEFAULTS.display.readChargesAvoidedPeriod,
  });
}

/**
 * A number as a plain decimal, never in exponent notation (CloudWatch metric math reads no `1e-7`): `0.03`,
 * `0.0000001`, `1000000000000000000000`.
 */
export function decimal(n: number): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(n));
  if (!m) return String(n);
  const [, sign, lead, fraction = '', exponent] = m;
  const e = Number(exponent);
  // JavaScript writes exponents only below 1e-6 and from 1e21, where the digits always fit before the point.
  return e < 0 ? `${sign}0.${'0'.repeat(-e - 1)}${lead}${fraction}` : `${sign}${lead}${fraction}${'0'.repeat(e - fraction.length)}`;
}

/** A widget whose content is decided when the dashboard renders (at synthesis), not when it is added. */
class RenderedLater implements cloudwatch.IWidget {
  private x?: number;
  private y?: number;
  constructor(public readonly width: number, public readonly height: number, private readonly build: () => cloudwatch.IWidget) {}
  public position(x: number, y: number): void {
    this.x = x;
    this.y = y;
  }
  public toJson(): any[] {
    const widget = this.build();
    if (this.x !== undefined && this.y !== undefined) widget.position(this.x, this.y);
    return widget.toJson();
  }
}
