import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { DiskCacheMetric } from '../../fscache/metrics';
import { diskCacheWidget, notServingAlarm } from './disk-cache';
import type { MonitoredNodeDiskCache } from './monitored';
import { DashboardSegment } from './segment';

/** The disk cache of a fleet's nodes (`nodeDiskCache`): bytes served, written and grown, culls, free space; the alarm `NodeCacheNotServing`. */
export function nodeDiskCacheSegment(f: MonitoredNodeDiskCache): DashboardSegment {
  return {
    rows: [[
      diskCacheWidget('Cache nodes', (m, label) => f.metricNodeDiskCache(m, { label })),
      new cloudwatch.GraphWidget({ title: 'Cache nodes: disk cache free (%)', width: 12,
        left: [f.metricNodeDiskCache(DiskCacheMetric.FREE_PERCENT)], leftYAxis: { min: 0, max: 100 } }),
    ]],
    addAlarms: (alarms) => {
      notServingAlarm(alarms, 'NodeCacheNotServing', `the cache nodes of ${f.node.path}`, (m, period) => f.metricNodeDiskCache(m, { period }));
    },
  };
}
