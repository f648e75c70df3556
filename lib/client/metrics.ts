import { DISK_CACHE_METRICS } from '../fscache/metrics';

/** Metrics of an FS-Cache client: its disk cache's. */
export const CLIENT_METRICS = DISK_CACHE_METRICS;
