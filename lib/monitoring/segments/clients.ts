import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { DiskCacheMetric } from '../../fscache/metrics';
import { alarmSpan, CACHE_DASHBOARD_DEFAULTS } from '../dashboard-defaults';
import { diskCacheWidget, notServingAlarm } from './disk-cache';
import type { MonitoredClients } from './monitored';
import { DashboardSegment } from './segment';

/** A segment of one group of FS-Cache clients, and the bytes its disk caches served (for the headline). */
export interface ClientsSegment extends DashboardSegment {
  readonly served: cloudwatch.IMetric;
}

/**
 * The `n`th group of FS-Cache clients of a dashboard: its disk caches' bytes served, written and grown, culls and
 * free space; alarms `CullingStalled`N when culling does not keep up and `CacheNotServing`N when the caches stop
 * serving.
 */
export function clientsSegment(clients: MonitoredClients, n: number): ClientsSegment {
  const s = CACHE_DASHBOARD_DEFAULTS.alarms.cullingStalled;
  const blocksCull = clients.cullLimits.blocksCull!;
  return {
    // Bytes read from the cache devices: on every kernel, what FS-Cache served (FS-Cache's own read count means
    // hit-or-miss on 6.1 and hits on later kernels).
    served: clients.metricDiskCache(DiskCacheMetric.READ_BYTES, { label: `served by FS-Cache, ${clients.node.id}` }),
    rows: [[
      diskCacheWidget(`FS-Cache ${clients.node.id}`, (m, label) => clients.metricDiskCache(m, { label })),
      new cloudwatch.GraphWidget({
        title: `FS-Cache ${clients.node.id}: cache disk free (%)`, width: 12,
        left: [clients.metricCacheDiskFreePercent()], leftYAxis: { min: 0, max: 100 },
      }),
    ]],
    addAlarms: (alarms) => {
      alarms.alarm(`CullingStalled${n}`, clients.metricCacheDiskFreePercent({ period: s.period }), {
        threshold: blocksCull,
        evaluationPeriods: s.evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        alarmDescription: `FS-Cache disk of ${clients.node.path} stayed below its cull limit (${blocksCull}% free) for ${alarmSpan(s)}: ` +
          'culling is not keeping up or has stopped.',
      });
      notServingAlarm(alarms, `CacheNotServing${n}`, `the FS-Cache clients of ${clients.node.path}`,
        (m, period) => clients.metricDiskCache(m, { period }));
    },
  };
}
