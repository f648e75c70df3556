import { Duration } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { propError } from '../private/errors';

/**
 * The namespace of the metrics the instances publish through the CloudWatch agent. Every metric carries the
 * dimension `Group`: the construct path of the cache fleet or client launch template that launched the instance,
 * so the dashboard aggregates per tier without knowing instance ids. The agent adds the dimension `metric_type`
 * (`counter` or `gauge`, from the StatsD type) to what it receives over StatsD; it adds no host dimension
 * (`omit_hostname`), so every instance of a group publishes to the same series.
 */
export const METRIC_NAMESPACE = 'CdkEfsCache';

/** The mirror metrics the nodes publish (`mirrors`), for `CacheFleet.metricMirror`. */
export enum MirrorMetric {
  /** Syncs of the mirrors that failed (sum per period): the node kept serving the last copy. */
  SYNC_FAILURES = 'MirrorSyncFailures',
  /** Seconds since a node's oldest mirror was last synced (maximum over the nodes): the staleness a client may see. */
  AGE_SECONDS = 'MirrorAgeSeconds',
  /** Seconds the last sync of a node's mirrors took (maximum). */
  SYNC_SECONDS = 'MirrorSyncSeconds',
  /** Files and directories the last sync of a node's mirrors walked (maximum). */
  FILES_WALKED = 'MirrorFilesWalked',
  /** 1 when a node's last mirror sync ran out of space in its mirrors' file system (maximum): raise `mirroring.size`. */
  FULL = 'MirrorFull',
  /** Bytes held by a node's mirrors (maximum). */
  BYTES = 'MirrorBytes',
  /** NFS requests the syncs of the mirrors sent to the origin (sum per period). */
  ORIGIN_OPS = 'MirrorOriginOps',
}

/**
 * One metric the instances publish (namespace CdkEfsCache): its name, which is the contract with the collectors in
 * assets/, the StatsD type they send it as (a `counter` of what happened since the last run, `|c`, or a `gauge`,
 * `|g`: the agent publishes it as the dimension `metric_type`), and the statistic that reads it over a period: the
 * fleet's and the clients' metric methods read these (`groupMetric`), and the dashboard reads those methods, so a
 * metric's name and statistic are written here only.
 */
export interface InstanceMetric {
  readonly name: string;
  readonly type: 'counter' | 'gauge';
  readonly statistic: 'Sum' | 'Average' | 'Minimum' | 'Maximum';
}

const counter = (name: string): InstanceMetric => ({ name, type: 'counter', statistic: 'Sum' });
const gauge = (name: string, statistic: InstanceMetric['statistic']): InstanceMetric => ({ name, type: 'gauge', statistic });

/**
 * The metrics of a disk cache, on FS-Cache clients and on cache nodes with `nodeDiskCache`.
 * Read them with `FsCacheClientLaunchTemplate.metricDiskCache` and `CacheFleet.metricNodeDiskCache`.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
 */
export enum DiskCacheMetric {
  /**
   * Bytes read from the cache's block device (sum per period): what the disk cache served. FS-Cache reads its files
   * with direct I/O, so on every kernel a read of the device is a read served from the cache, and a page-cache hit
   * reads nothing.
   */
  READ_BYTES = 'CacheDiskReadBytes',
  /** Bytes written to the cache's block device (sum per period): misses being stored. */
  WRITE_BYTES = 'CacheDiskWriteBytes',
  /**
   * Increase of the bytes used in the cache's file system (sum per period; a decrease counts 0).
   * Writes beyond the growth rewrite what the cache held.
   */
  GROWTH_BYTES = 'CacheDiskGrowthBytes',
  /** Free space of the cache file system, percent (minimum over the instances). */
  FREE_PERCENT = 'CacheDiskFreePercent',
  /**
   * FS-Cache's own read count, /proc/fs/fscache/stats `IO rd` (sum per period), whose meaning depends on the kernel.
   * On 6.1 it counts every page NFS looks up in the cache, hit or miss: `READ_BYTES` means the same on every kernel.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   */
  FSCACHE_READS = 'FscacheReads',
  /** FS-Cache's own write count, `IO wr` (sum per period). */
  FSCACHE_WRITES = 'FscacheWrites',
  /** Objects culled by cachefilesd (sum per period). */
  FSCACHE_CULLED = 'FscacheCulled',
}

/** The disk cache's metrics (`DiskCacheMetric`), read by assets/lib/fscache.sh (fscache_metrics_read). */
export const DISK_CACHE_METRICS = {
  fscacheReads: counter(DiskCacheMetric.FSCACHE_READS),
  fscacheWrites: counter(DiskCacheMetric.FSCACHE_WRITES),
  fscacheCulled: counter(DiskCacheMetric.FSCACHE_CULLED),
  cacheDiskReadBytes: counter(DiskCacheMetric.READ_BYTES),
  cacheDiskWriteBytes: counter(DiskCacheMetric.WRITE_BYTES),
  cacheDiskGrowthBytes: counter(DiskCacheMetric.GROWTH_BYTES),
  cacheDiskFreePercent: gauge(DiskCacheMetric.FREE_PERCENT, 'Minimum'),
} as const;

/**
 * Metrics of a cache node, read from /proc by the node's collector and sent to the agent's StatsD listener
 * (the agent publishes them; names are the contract with assets/).
 */
export const NODE_METRICS = {
  /**
   * NFS operations served (sum per period), from /proc/net/rpc/nfsd `rc` hits + misses + nocache: the node's nfsd and,
   * with mirrors, the mirrors' own (its network namespace's counters).
   */
  nfsdOps: counter('NfsdOps'),
  /**
   * Bytes read by clients from nfsd (sum per period), from /proc/net/rpc/nfsd `io`: what the cache tier served, by the
   * node's nfsd and, with mirrors, the mirrors' own.
   */
  nfsdBytesRead: counter('NfsdBytesRead'),
  /** Threads of the node's nfsd, the re-export's (average), from /proc/fs/nfsd/threads; the mirrors' nfsd has as many. */
  nfsdThreads: gauge('NfsdThreads', 'Average'),
  /**
   * Requests that found no idle nfsd thread and waited (sum per period), from /proc/fs/nfsd/pool_stats:
   * packets-arrived minus threads-woken (sockets-enqueued counts every request on 6.1). Nonzero and rising means
   * more threads would help. The node's nfsd only (the re-export's), not the mirrors' own.
   */
  nfsdRequestsQueued: counter('NfsdRequestsQueued'),
  /** Bytes of page cache (average), from /proc/meminfo Cached: the RAM cache itself. */
  pageCacheBytes: gauge('PageCacheBytes', 'Average'),
  /** Syncs of the mirrors that failed (sum per period): the node kept serving the last copy (assets/lib/mirror-sync.sh). */
  mirrorSyncFailures: counter(MirrorMetric.SYNC_FAILURES),
  /** Seconds since the oldest mirror of a node was last synced (maximum): the staleness a client may see. */
  mirrorAgeSeconds: gauge(MirrorMetric.AGE_SECONDS, 'Maximum'),
  /** Seconds the last sync of a node's mirrors took (maximum). */
  mirrorSyncSeconds: gauge(MirrorMetric.SYNC_SECONDS, 'Maximum'),
  /** Files and directories the last sync of a node's mirrors walked (maximum). */
  mirrorFilesWalked: gauge(MirrorMetric.FILES_WALKED, 'Maximum'),
  /** 1 when the last sync of a node's mirrors ran out of space in its mirrors' file system (maximum): raise `mirroring.size`. */
  mirrorFull: gauge(MirrorMetric.FULL, 'Maximum'),
  /** Bytes held by a node's mirrors (maximum). */
  mirrorBytes: gauge(MirrorMetric.BYTES, 'Maximum'),
  /** NFS requests the syncs of the mirrors sent to the origin (sum per period), from the sync mount's mountstats. */
  mirrorOriginOps: counter(MirrorMetric.ORIGIN_OPS),
  /** The disk cache's metrics (`DiskCacheMetric`), on nodes with `nodeDiskCache`. */
  ...DISK_CACHE_METRICS,
} as const;

/**
 * The instance metric of a `MirrorMetric` or `DiskCacheMetric` (a node's table holds both; a client's disk cache metrics
 * are the same entries), for `CacheFleet.metricMirror`, `metricNodeDiskCache` and the clients' `metricDiskCache`.
 */
export function namedMetric(metric: MirrorMetric | DiskCacheMetric): InstanceMetric {
  const m = Object.values(NODE_METRICS).find((n) => n.name === metric);
  if (!m) throw new Error(`cdk-efs-cache: no instance metric named ${metric}`);
  return m;
}

/** Metrics of an FS-Cache client: its disk cache's. */
export const CLIENT_METRICS = DISK_CACHE_METRICS;

/**
 * When a disk cache is "written but not serving" over one period: the instances wrote at least `minWriteBytes` to
 * the cache device, at least `rewriteShare` of those writes did not grow the cache (they stored again what it held:
 * the clients keep reading the same data from the server), and the cache device served less than `readShare` of what
 * was written. A healthy warm-up grows the cache with what it writes; a working set held in RAM writes nothing once
 * warm; a cache that serves reads its device. (`readShare` is 10 %, not 0: storing a file again reads some 8 % of it
 * from the device on kernels 6.12 and 7.3, the lab measured.)
 */
export const NOT_SERVING = { minWriteBytes: 256 * 1024 * 1024, rewriteShare: 0.5, readShare: 0.1 } as const;

/**
 * Whether one period's sums (`DiskCacheMetric` READ_BYTES, WRITE_BYTES, GROWTH_BYTES) are "written but not serving"
 * (the lab, which cannot write a production cache's floor, gives a floor of its own).
 */
export function notServing(read: number, written: number, growth: number, minWriteBytes: number = NOT_SERVING.minWriteBytes): boolean {
  return written >= minWriteBytes && written - growth >= NOT_SERVING.rewriteShare * written &&
    read < NOT_SERVING.readShare * written;
}

/**
 * `notServing` as CloudWatch metric math over the disk cache metrics of one group: 1 in a period that is "written but
 * not serving", else 0. `metric` gives the group's metric of each name, summed over `period`.
 */
export function notServingExpression(metric: (m: DiskCacheMetric) => cloudwatch.IMetric, label: string, period: Duration): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: `IF(w >= ${NOT_SERVING.minWriteBytes} AND w - g >= ${NOT_SERVING.rewriteShare} * w AND r < ${NOT_SERVING.readShare} * w, 1, 0)`,
    usingMetrics: {
      r: metric(DiskCacheMetric.READ_BYTES),
      w: metric(DiskCacheMetric.WRITE_BYTES),
      g: metric(DiskCacheMetric.GROWTH_BYTES),
    },
    label,
    period,
  });
}

/** A metric CloudWatch keeps of each node's Auto Scaling group: its namespace, name and the statistic that reads it. */
export interface NodeGroupMetric {
  readonly namespace: 'AWS/EC2' | 'AWS/AutoScaling';
  readonly name: string;
  readonly statistic: 'Sum' | 'Average' | 'Minimum' | 'Maximum';
}

/** The metrics of a node's group: EC2's by group (AWS/EC2), and the group's own (AWS/AutoScaling). */
export const NODE_GROUP_METRICS = {
  /** Bytes sent by the node (sum per period). */
  networkOut: { namespace: 'AWS/EC2', name: 'NetworkOut', statistic: 'Sum' },
  /** CPU utilization of the node (average). */
  cpuUtilization: { namespace: 'AWS/EC2', name: 'CPUUtilization', statistic: 'Average' },
  /** Whether the node is in service (minimum): 1 or 0, a group of one. */
  inService: { namespace: 'AWS/AutoScaling', name: 'GroupInServiceInstances', statistic: 'Minimum' },
} as const satisfies Record<string, NodeGroupMetric>;

/** A metric of one Auto Scaling group (`NODE_GROUP_METRICS`). */
export function autoScalingGroupMetric(
  group: autoscaling.IAutoScalingGroup, metric: NodeGroupMetric, props?: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: metric.namespace,
    metricName: metric.name,
    dimensionsMap: { AutoScalingGroupName: group.autoScalingGroupName },
    statistic: metric.statistic,
    period: Duration.minutes(1),
    ...props,
  });
}

/** The sum of several metrics, per minute (CloudWatch metric math; an alarm takes at most 10 of them). */
export function sumOfMetrics(metrics: cloudwatch.IMetric[], label: string, props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
  const usingMetrics: Record<string, cloudwatch.IMetric> = {};
  metrics.forEach((m, i) => { usingMetrics[`n${i}`] = m; });
  return new cloudwatch.MathExpression({
    expression: Object.keys(usingMetrics).join(' + '),
    usingMetrics,
    label,
    period: Duration.minutes(1),
    ...props,
  });
}

/** A metric of the instances' own namespace (`NODE_METRICS`, `CLIENT_METRICS`), for one fleet or client group. */
export function groupMetric(group: string, metric: InstanceMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName: metric.name,
    dimensionsMap: { Group: group, metric_type: metric.type },
    statistic: metric.statistic,
    period: Duration.minutes(1),
    ...props,
  });
}

/**
 * The `EFSC_METRICS*` parameters of an instance script (assets/lib/metrics.sh) whose `Group` is `scope`'s path. The
 * permission to publish them is the instance role's (`grantPutMetricData`, lib/monitoring/metrics-grant.ts).
 */
export function instanceMetrics(scope: Construct, enabled = true): Record<string, string> {
  if (!enabled) return { EFSC_METRICS: 'off', EFSC_METRICS_GROUP: '' };
  const group = scope.node.path;
  if (!/^[A-Za-z0-9/_.-]{1,255}$/.test(group)) {
    throw propError(scope, 'metrics', `the metrics dimension Group is the construct path '${group}', which must be 1-255 ` +
      'letters, digits, / _ . or -: rename the constructs, or set metrics: false.');
  }
  return { EFSC_METRICS: 'cloudwatch-agent', EFSC_METRICS_GROUP: group };
}
