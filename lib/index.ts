export * from './origin/origin-file-system';
export * from './cached-file-system';
export * from './cache-fleet/cache-fleet';
export * from './cache-fleet/fan-out';
export { MountHelper } from './private/mount';
export * from './client/fs-cache-client';
export * from './monitoring/cache-dashboard';
export { METRIC_NAMESPACE, NODE_METRICS, CLIENT_METRICS } from './monitoring/metrics';
export * from './seeding/data-seeder';
