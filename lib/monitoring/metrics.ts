import { Duration } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
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

/** The mirror metrics the nodes publish (`mirrorPaths`), for `CacheFleet.metricMirror`. */
export enum MirrorMetric {
  /** Syncs of the mirrors that failed (sum per period): the node kept serving the last copy. */
  SYNC_FAILURES = 'MirrorSyncFailures',
  /** Seconds since the oldest mirror of a node was last synced (maximum over the nodes): the staleness a client may see. */
  AGE_SECONDS = 'MirrorAgeSeconds',
  /** Seconds the last sync of a node's mirrors took (maximum). */
  SYNC_SECONDS = 'MirrorSyncSeconds',
  /** Files and directories the last sync of a node's mirrors walked (maximum). */
  FILES_WALKED = 'MirrorFilesWalked',
  /** 1 when the last sync of a node's mirrors ran out of space in its mirrors' file system (maximum): raise mirrorSize. */
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
  /** Syncs of the mirrors that failed (sum per period): the node kept serving the last copy (assets/lib/mirror.sh). */
  mirrorSyncFailures: counter(MirrorMetric.SYNC_FAILURES),
  /** Seconds since the oldest mirror of a node was last synced (maximum): the staleness a client may see. */
  mirrorAgeSeconds: gauge(MirrorMetric.AGE_SECONDS, 'Maximum'),
  /** Seconds the last sync of a node's mirrors took (maximum). */
  mirrorSyncSeconds: gauge(MirrorMetric.SYNC_SECONDS, 'Maximum'),
  /** Files and directories the last sync of a node's mirrors walked (maximum). */
  mirrorFilesWalked: gauge(MirrorMetric.FILES_WALKED, 'Maximum'),
  /** 1 when the last sync of a node's mirrors ran out of space in its mirrors' file system (maximum): raise mirrorSize. */
  mirrorFull: gauge(MirrorMetric.FULL, 'Maximum'),
  /** Bytes held by a node's mirrors (maximum). */
  mirrorBytes: gauge(MirrorMetric.BYTES, 'Maximum'),
  /** NFS requests the syncs of the mirrors sent to the origin (sum per period), from the sync mount's mountstats. */
  mirrorOriginOps: counter(MirrorMetric.ORIGIN_OPS),
} as const;

/** The node metric of each `MirrorMetric`, for `CacheFleet.metricMirror`. */
export function mirrorMetric(metric: MirrorMetric): InstanceMetric {
  const m = Object.values(NODE_METRICS).find((n) => n.name === metric);
  if (!m) throw new Error(`cdk-efs-cache: no node metric named ${metric}`);
  return m;
}

/** Metrics of an FS-Cache client, read from /proc/fs/fscache and the cache file system. */
export const CLIENT_METRICS = {
  /**
   * Pages read from the disk cache (sum per period), from /proc/fs/fscache/stats `IO rd`. On kernel 6.1 NFS counts a
   * read for every page it looks up in the cache, hit or miss: hits are FscacheReads minus FscacheWrites.
   */
  fscacheReads: counter('FscacheReads'),
  /** Pages written to the disk cache (sum per period), `IO wr`: misses being filled. */
  fscacheWrites: counter('FscacheWrites'),
  /** Objects culled by cachefilesd (sum per period). */
  fscacheCulled: counter('FscacheCulled'),
  /** Free space of the cache file system, percent (minimum). */
  cacheDiskFreePercent: gauge('CacheDiskFreePercent', 'Minimum'),
} as const;

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
export function autoScalingGroupMetric(group: autoscaling.IAutoScalingGroup, metric: NodeGroupMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
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
 * The `EFSC_METRICS*` parameters of an instance script (assets/lib/metrics.sh) whose `Group` is `scope`'s path, and,
 * when metrics are on, the permission to publish them: `cloudwatch:PutMetricData` in this namespace only (the
 * CloudWatch agent needs nothing else for StatsD metrics). PutMetricData supports no resource scoping, so its
 * resource is `*`: the caller acknowledges AwsSolutions-IAM5 for it.
 */
export function instanceMetrics(scope: Construct, role: iam.IRole, enabled = true): Record<string, string> {
  if (!enabled) return { EFSC_METRICS: 'off', EFSC_METRICS_GROUP: '' };
  const group = scope.node.path;
  if (!/^[A-Za-z0-9/_.-]{1,255}$/.test(group)) {
    throw propError(scope, 'metrics', `the metrics dimension Group is the construct path '${group}', which must be 1-255 ` +
      'letters, digits, / _ . or -: rename the constructs, or set metrics: false.');
  }
  role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['cloudwatch:PutMetricData'],
    resources: ['*'],
    conditions: { StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } },
  }));
  return { EFSC_METRICS: 'cloudwatch-agent', EFSC_METRICS_GROUP: group };
}

/** Why PutMetricData's `*` is acceptable (AwsSolutions-IAM5 acknowledgements). */
export const PUT_METRIC_DATA_REASON = 'cloudwatch:PutMetricData supports no resource-level permissions; the statement ' +
  `is limited by condition to the namespace ${METRIC_NAMESPACE}.`;
