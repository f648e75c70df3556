import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { DiskCacheMetric, NOT_SERVING, notServingExpression } from '../../fscache/metrics';
import { AlarmDefaults, alarmSpan, CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import { DashboardAlarms } from './segment';

/*
 * What the two disk cache tiers (cache nodes with `nodeDiskCache`, FS-Cache clients) show and alarm on alike.
 */

/** The disk cache of a tier: bytes served (device reads), written, and the growth of what it holds; objects culled. */
export function diskCacheWidget(title: string, metric: (m: DiskCacheMetric, label: string) => cloudwatch.IMetric): cloudwatch.GraphWidget {
  return new cloudwatch.GraphWidget({
    title: `${title}: disk cache bytes served, written and held anew (per minute)`, width: 12,
    left: [
      metric(DiskCacheMetric.READ_BYTES, 'served (device reads)'),
      metric(DiskCacheMetric.WRITE_BYTES, 'written'),
      metric(DiskCacheMetric.GROWTH_BYTES, 'growth of what it holds'),
    ],
    right: [metric(DiskCacheMetric.FSCACHE_CULLED, 'objects culled')],
  });
}

/**
 * An alarm when a group's disk caches are "written but not serving" (`NOT_SERVING`) in each of the evaluation
 * periods (`CACHE_DASHBOARD_DEFAULTS.alarms.cacheNotServing`): they keep storing again what they held, and serve
 * almost nothing of it. `metric` gives the group's metric of each name over `period`.
 */
export function notServingAlarm(
  alarms: DashboardAlarms, id: string, who: string, metric: (m: DiskCacheMetric, period: cloudwatch.MetricOptions['period']) => cloudwatch.IMetric,
): cloudwatch.Alarm {
  const s: AlarmDefaults = CACHE_DASHBOARD_DEFAULTS.alarms.cacheNotServing;
  const expression = notServingExpression((m) => metric(m, s.period), `disk cache of ${who} written but not serving`, s.period);
  return alarms.alarm(id, expression, {
    threshold: s.threshold!,
    evaluationPeriods: s.evaluationPeriods,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: `The disk cache of ${who} was written but did not serve for ${alarmSpan(s)}: in each ` +
      `${s.period.toMinutes()} minutes they wrote at least ${NOT_SERVING.minWriteBytes / 1024 / 1024} MiB to it, at least ` +
      `${NOT_SERVING.rewriteShare * 100}% of it stored again what the cache held, and its device served less than ` +
      `${NOT_SERVING.readShare * 100}% of that. FS-Cache stores but does not serve on this kernel, or the cache is too small for ` +
      'the data read again (docs/operations.md: "A cache that shows it serves").',
  });
}
