import { DISK_CACHE_METRICS, DiskCacheMetric } from '../fscache/metrics';
import { counter, gauge, InstanceMetric, NodeGroupMetric } from '../instance/metrics';

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
   * Requests that found no idle nfsd thread and waited (sum per period), from /proc/fs/nfsd/pool_stats: what
   * packets-arrived grew by beyond threads-woken between two reads, or 0 when threads-woken grew more
   * (sockets-enqueued counts every request on 6.1; newer kernels wake threads for more than arrivals). Nonzero and
   * rising means more threads would help. The node's nfsd only (the re-export's), not the mirrors' own.
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

/** The instance metric of a `MirrorMetric` or `DiskCacheMetric` (a node's table holds both), for `CacheFleet.metricMirror`. */
export function namedMetric(metric: MirrorMetric | DiskCacheMetric): InstanceMetric {
  const m = Object.values(NODE_METRICS).find((n) => n.name === metric);
  if (!m) throw new Error(`cdk-efs-cache: no instance metric named ${metric}`);
  return m;
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
