import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import type { MonitoredOrigin } from './monitored';
import { DashboardSegment } from './segment';

/**
 * The headline: bytes the cache tiers served against bytes read from EFS, and their share. `served` gives the
 * tiers' served bytes when the dashboard renders, since client groups may be added after it is made.
 */
export function headlineSegment(origin: MonitoredOrigin, served: () => cloudwatch.IMetric[]): DashboardSegment {
  const headline = new RenderedLater(16, 6, () => new cloudwatch.GraphWidget({
    title: 'Reads served by the cache tiers vs read from EFS (bytes per minute)',
    width: 16,
    left: [origin.metricDataReadIoBytes({ label: 'read from EFS (DataReadIOBytes)' }), ...served()],
  }));
  const offload = new RenderedLater(8, 6, () => new cloudwatch.SingleValueWidget({
    title: 'Share of reads served by caches (%)',
    width: 8,
    height: 6,
    metrics: [offloadShare(origin, served())],
  }));
  return {
    rows: [
      [new cloudwatch.TextWidget({
        markdown: '## EFS cache\nHeadline: bytes served by the cache tiers against bytes read from EFS. The higher the ' +
          'share served by caches, the less the workload pays EFS for reads.',
        width: 24, height: 2,
      })],
      [headline, offload],
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
