import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { counter, gauge, InstanceMetric } from '../instance/metrics';

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
 * The instance metric of a `DiskCacheMetric`, for `CacheFleet.metricNodeDiskCache` and the clients' `metricDiskCache`.
 */
export function diskCacheMetric(metric: DiskCacheMetric): InstanceMetric {
  const m = Object.values(DISK_CACHE_METRICS).find((n) => n.name === metric);
  if (!m) throw new Error(`cdk-efs-cache: no disk cache metric named ${metric}`);
  return m;
}

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
