// The public API, named one by one: what is exported here is what jsii carries to every language and what API.md
// lists. Helpers of the modules below (validation, fsid derivation, metric-name tables) stay internal.
export { OriginFileSystem, OriginFileSystemOptions, OriginFileSystemProps } from './origin/origin-file-system';
export { CachedFileSystem, CachedFileSystemProps, ClientLaunchTemplateOptions } from './cached-file-system';
export { CacheFleet } from './cache-fleet/cache-fleet';
export { CacheOrigin, EfsOriginOptions, NfsServerOptions, NfsServerPorts } from './origin/cache-origin';
export {
  CacheFleetAttributes, CacheFleetOptions, CacheFleetProps, ICacheFleet, MirrorExport, TuningOptions, WarmingOptions,
} from './cache-fleet/options';
export { Capacity, ElasticCapacityOptions } from './cache-fleet/capacity';
export { NodeDiskCache, NodeDiskCacheOptions } from './cache-fleet/node-disk-cache';
export { DiskCacheMetric } from './fscache/metrics';
export { MirrorMetric } from './cache-fleet/metrics';
export { FanOut } from './cache-fleet/fan-out';
export { AccessLogsOptions, NetworkLoadBalancerFanOutOptions, Route53FanOutOptions } from './cache-fleet/fan-out-options';
export { ICacheNode } from './cache-fleet/cache-node';
export { Mirror, MirroringOptions, MirrorOptions, MirrorStorage, S3MirrorOptions } from './cache-fleet/mirror';
export { AmazonLinux2023KernelLine } from './instance/kernel-line';
export { CommonInstanceOptions } from './instance/options';
export { MountHelper } from './nfs/mount-helper';
export { NfsVersion } from './nfs/nfs-version';
export { FsCacheClientLaunchTemplate } from './client/fs-cache-client';
export { CullLimits, FsCacheClientLaunchTemplateProps, FsCacheClientOptions } from './client/options';
export { DiskCache, DiskCacheOptions, EbsDiskCacheOptions, InstanceStoreDiskCacheOptions } from './fscache/disk-cache';
export { FleetSourceOptions, MountSource } from './client/mount-source';
export { ClientWarmingOptions } from './client/warming';
export { CacheFleetExportOptions, FleetExport } from './containers/fleet-export';
export { ClusterHostsOptions } from './containers/cluster-hosts';
export { EcsFleetCapacity, EcsFleetCapacityProps } from './containers/ecs-fleet-capacity';
export { EcsFleetVolume, EcsFleetVolumeProps } from './containers/ecs-fleet-volume';
export { EksFleetNodes, EksFleetNodesProps } from './containers/eks-fleet-nodes';
export { EksFleetVolume, EksFleetVolumeProps } from './containers/eks-fleet-volume';
export { CacheDashboard, CacheDashboardOptions, CacheDashboardProps } from './monitoring/cache-dashboard';
export { DataSeeder, DataSeederProps, SeedSource } from './seeding/data-seeder';
