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

/**
 * Metrics of a cache node, read from /proc by the node's collector and sent to the agent's StatsD listener
 * (the agent publishes them; names are the contract with assets/).
 */
export const NODE_METRICS = {
  /** NFS operations served (sum per period), from /proc/net/rpc/nfsd `rc` hits + misses + nocache. */
  nfsdOps: 'NfsdOps',
  /** Bytes read by clients from nfsd (sum per period), from /proc/net/rpc/nfsd `io`: what the cache tier served. */
  nfsdBytesRead: 'NfsdBytesRead',
  /** nfsd threads running (average), from /proc/fs/nfsd/threads. */
  nfsdThreads: 'NfsdThreads',
  /**
   * Requests that found no idle nfsd thread and waited (sum per period), from /proc/fs/nfsd/pool_stats:
   * packets-arrived minus threads-woken (sockets-enqueued counts every request on 6.1). Nonzero and rising means
   * more threads would help.
   */
  nfsdRequestsQueued: 'NfsdRequestsQueued',
  /** Bytes of page cache (average), from /proc/meminfo Cached: the RAM cache itself. */
  pageCacheBytes: 'PageCacheBytes',
  /** Syncs of the mirrors that failed (sum per period): the node kept serving the last copy (assets/lib/mirror.sh). */
  mirrorSyncFailures: 'MirrorSyncFailures',
  /** Seconds since the oldest mirror of a node was last synced (maximum): the staleness a client may see. */
  mirrorAgeSeconds: 'MirrorAgeSeconds',
  /** Seconds the last sync of a node's mirrors took (maximum). */
  mirrorSyncSeconds: 'MirrorSyncSeconds',
  /** Files and directories the last sync of a node's mirrors walked (maximum). */
  mirrorFilesWalked: 'MirrorFilesWalked',
  /** 1 when the last sync of a node's mirrors ran out of space in its mirrors' file system (maximum): raise mirrorSize. */
  mirrorFull: 'MirrorFull',
  /** Bytes held by a node's mirrors (maximum). */
  mirrorBytes: 'MirrorBytes',
  /** NFS requests the syncs of the mirrors sent to the origin (sum per period), from the sync mount's mountstats. */
  mirrorOriginOps: 'MirrorOriginOps',
} as const;

/** Metrics of an FS-Cache client, read from /proc/fs/fscache and the cache file system. */
export const CLIENT_METRICS = {
  /**
   * Pages read from the disk cache (sum per period), from /proc/fs/fscache/stats `IO rd`. On kernel 6.1 NFS counts a
   * read for every page it looks up in the cache, hit or miss: hits are FscacheReads minus FscacheWrites.
   */
  fscacheReads: 'FscacheReads',
  /** Pages written to the disk cache (sum per period), `IO wr`: misses being filled. */
  fscacheWrites: 'FscacheWrites',
  /** Objects culled by cachefilesd (sum per period). */
  fscacheCulled: 'FscacheCulled',
  /** Free space of the cache file system, percent (minimum). */
  cacheDiskFreePercent: 'CacheDiskFreePercent',
} as const;

/** The metrics sent as StatsD gauges (`|g`); every other one is a counter (`|c`) of what happened since the last run. */
const GAUGES: string[] = [NODE_METRICS.nfsdThreads, NODE_METRICS.pageCacheBytes, CLIENT_METRICS.cacheDiskFreePercent,
  NODE_METRICS.mirrorAgeSeconds, NODE_METRICS.mirrorSyncSeconds, NODE_METRICS.mirrorFilesWalked, NODE_METRICS.mirrorFull,
  NODE_METRICS.mirrorBytes];

/** A metric of one Auto Scaling group: EC2's metrics by group (AWS/EC2), or the group's own (AWS/AutoScaling). */
export function autoScalingGroupMetric(group: autoscaling.IAutoScalingGroup, metricName: string, statistic: string,
  props?: cloudwatch.MetricOptions, namespace = 'AWS/EC2'): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace,
    metricName,
    dimensionsMap: { AutoScalingGroupName: group.autoScalingGroupName },
    statistic,
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

/** A metric of the instances' own namespace, for one fleet or client group. */
export function groupMetric(group: string, metricName: string, statistic: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName,
    dimensionsMap: { Group: group, metric_type: GAUGES.includes(metricName) ? 'gauge' : 'counter' },
    statistic,
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
