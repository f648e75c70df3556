import { IConstruct } from 'constructs';
import { propError } from './errors';

/**
 * Props of 0.1 that 0.2 renamed or removed, with what to give instead. TypeScript and the other jsii languages refuse
 * them when the code is compiled; JavaScript, which has no types, would pass them unseen, and the construct would be
 * built with the new prop's default instead (an NFSv3 fleet would serve NFSv4.1, under another fsid). So synth
 * refuses each one, naming it.
 */
export const REMOVED_FLEET_PROPS: Readonly<Record<string, string>> = {
  fileSystem: 'was removed in 0.2: give origin: CacheOrigin.efs(fileSystem).',
  originMountHelper: 'was removed in 0.2: give origin: CacheOrigin.efs(fileSystem, { mountHelper }).',
  originMountTimeout: 'was renamed mountTimeout in 0.2.',
  bootstrapTimeout: 'was renamed signalTimeout in 0.2.',
  clientProtocol: 'was renamed clientNfsVersion in 0.2: ClientProtocol.NFS_V3 is NfsVersion.NFS_V3, ClientProtocol.NFS_V4_1 ' +
    'is NfsVersion.NFS_V4_1.',
  hostedZone: 'was moved into fanOut in 0.2: give fanOut: FanOut.route53({ hostedZone }).',
  zoneName: 'was moved into fanOut in 0.2: give fanOut: FanOut.route53({ zoneName }).',
  recordName: 'was moved into fanOut in 0.2: give fanOut: FanOut.route53({ recordName }).',
  recordTtl: 'was moved into fanOut in 0.2: give fanOut: FanOut.route53({ recordTtl }).',
  loadBalancerIdleTimeout: 'was moved into fanOut in 0.2: give fanOut: FanOut.networkLoadBalancer({ idleTimeout }).',
  crossZone: 'was moved into fanOut in 0.2: give fanOut: FanOut.networkLoadBalancer({ crossZone }).',
  loadBalancerAccessLogs: 'was moved into fanOut in 0.2: give fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket } }).',
  loadBalancerAccessLogsPrefix: 'was moved into fanOut in 0.2: give fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket, prefix } }).',
  nodeCount: 'was moved into capacity in 0.2: give capacity: Capacity.nodes(n).',
  elastic: 'was moved into capacity in 0.2: give capacity: Capacity.elastic({ ... }), with the same options.',
  nodeDiskCacheDeviceModel: 'was moved into nodeDiskCache in 0.2: give nodeDiskCache: NodeDiskCache.instanceStore({ deviceModel }).',
  nodeDiskCacheRequireSelfTest: 'was moved into nodeDiskCache in 0.2: give nodeDiskCache: NodeDiskCache.instanceStore({ requireSelfTest }).',
  nfsdThreads: 'was moved into tuning in 0.2: give tuning: { nfsdThreads }.',
  readAhead: 'was moved into tuning in 0.2: give tuning: { readAhead }.',
  sunrpcSlotTableEntries: 'was moved into tuning in 0.2: give tuning: { sunrpcSlotTableEntries }.',
  vfsCachePressure: 'was moved into tuning in 0.2: give tuning: { vfsCachePressure }.',
  warmPaths: 'was moved into warming in 0.2: give warming: { paths }.',
  warmWorkers: 'was moved into warming in 0.2: give warming: { paths, workers }.',
  rewarmInterval: 'was moved into warming in 0.2: give warming: { paths, rewarmInterval }.',
  mirrorPaths: 'was moved into mirrors in 0.2: give mirrors: [Mirror.path(...)].',
  mirrorSources: 'was moved into mirrors in 0.2: give mirrors: [Mirror.s3(bucket, prefix)].',
  mirrorInterval: 'was moved into mirroring in 0.2: give mirroring: { interval }.',
  mirrorSize: 'was moved into mirroring in 0.2: give mirroring: { size }.',
  mirrorStorage: 'was moved into mirroring in 0.2: give mirroring: { storage }.',
  mirrorSyncTimeout: 'was moved into mirroring in 0.2: give mirroring: { syncTimeout }.',
  mirrorSyncWorkers: 'was moved into mirroring in 0.2: give mirroring: { syncWorkers }.',
  mirrorChangeMarker: 'was moved into mirroring in 0.2: give mirroring: { changeMarker }.',
  mirrorFullSyncInterval: 'was moved into mirroring in 0.2: give mirroring: { fullSyncInterval }.',
};

/** The client props of 0.1 that 0.2 removed (see REMOVED_FLEET_PROPS). */
export const REMOVED_CLIENT_PROPS: Readonly<Record<string, string>> = {
  fileSystem: 'was removed in 0.2: give source: MountSource.fileSystem(fileSystem).',
  cacheFleet: 'was removed in 0.2: give source: MountSource.cacheFleet(fleet).',
  mirrorPaths: 'was removed in 0.2: give source: MountSource.cacheFleet(fleet, { mirrorPaths }).',
  mirrorMountPoint: 'was removed in 0.2: give source: MountSource.cacheFleet(fleet, { mirrorPaths, mirrorMountPoint }).',
  cacheStorage: 'was removed in 0.2: give diskCache: DiskCache.instanceStore() (CacheStorage.INSTANCE_STORE) or ' +
    'diskCache: DiskCache.ebs() (CacheStorage.EBS).',
  cacheVolumeSize: 'was moved into diskCache in 0.2: give diskCache: DiskCache.ebs({ volumeSize }).',
  cacheDeviceModel: 'was moved into diskCache in 0.2: give diskCache: DiskCache.instanceStore({ deviceModel }) or ' +
    'diskCache: DiskCache.ebs({ deviceModel }).',
  initializeCacheDevices: 'was moved into diskCache in 0.2: give diskCache: DiskCache.instanceStore({ initializeDevices }).',
};

/** The DataSeeder props of 0.1 that 0.2 renamed (see REMOVED_FLEET_PROPS). */
export const REMOVED_SEEDER_PROPS: Readonly<Record<string, string>> = {
  timeout: 'was renamed signalTimeout in 0.2.',
  volumeSize: 'was renamed rootVolumeSize in 0.2.',
};

/** The CachedFileSystem props of 0.1 that 0.2 renamed (see REMOVED_FLEET_PROPS). */
export const REMOVED_CACHED_FILE_SYSTEM_PROPS: Readonly<Record<string, string>> = {
  origin: 'was renamed originFileSystem in 0.2 (its type, OriginOptions, was renamed OriginFileSystemOptions).',
};

/** The CacheDashboard props of 0.1 that 0.2 renamed (see REMOVED_FLEET_PROPS). */
export const REMOVED_DASHBOARD_PROPS: Readonly<Record<string, string>> = {
  origin: 'was renamed originFileSystem in 0.2 (a CachedFileSystem\'s origin attribute was renamed originFileSystem too).',
};

/** The fleet attributes of 0.1 that 0.2 renamed (see REMOVED_FLEET_PROPS). */
export const REMOVED_FLEET_ATTRIBUTES: Readonly<Record<string, string>> = {
  clientProtocol: REMOVED_FLEET_PROPS.clientProtocol,
  mirrors: 'was renamed mirrorExports in 0.2.',
};

/** Throws `Invalid <prop>: was renamed ...` for the first prop of `removed` that `props` still gives. */
export function refuseRemovedProps(scope: IConstruct, props: object | undefined, removed: Readonly<Record<string, string>>): void {
  if (props === undefined || props === null) return;
  const given = props as Record<string, unknown>;
  for (const [name, why] of Object.entries(removed)) {
    if (Object.prototype.hasOwnProperty.call(given, name) && given[name] !== undefined) throw propError(scope, name, why);
  }
}
