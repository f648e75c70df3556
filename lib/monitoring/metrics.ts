import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';

/**
 * The namespace of the metrics the instances publish through the CloudWatch agent. Every metric carries the
 * dimension `Group`: the construct path of the cache fleet or client launch template that launched the instance,
 * so the dashboard aggregates per tier without knowing instance ids.
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
   * Requests that found every nfsd thread busy and waited (sum per period), from /proc/fs/nfsd/pool_stats
   * sockets-enqueued: nonzero means more threads would help.
   */
  nfsdRequestsQueued: 'NfsdRequestsQueued',
  /** Bytes of page cache (average), from /proc/meminfo Cached: the RAM cache itself. */
  pageCacheBytes: 'PageCacheBytes',
} as const;

/** Metrics of an FS-Cache client, read from /proc/fs/fscache and the cache file system. */
export const CLIENT_METRICS = {
  /** Pages read from the disk cache (sum per period): hits. */
  fscacheReads: 'FscacheReads',
  /** Pages written to the disk cache (sum per period): misses being filled. */
  fscacheWrites: 'FscacheWrites',
  /** Objects culled by cachefilesd (sum per period). */
  fscacheCulled: 'FscacheCulled',
  /** Free space of the cache file system, percent (minimum). */
  cacheDiskFreePercent: 'CacheDiskFreePercent',
} as const;

/** A metric of the instances' own namespace, for one fleet or client group. */
export function groupMetric(group: string, metricName: string, statistic: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRIC_NAMESPACE,
    metricName,
    dimensionsMap: { Group: group },
    statistic,
    period: Duration.minutes(1),
    ...props,
  });
}
