import * as crypto from 'crypto';
import { Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DEFAULT_CULL, diskCacheParameters, INSTANCE_STORE_MODEL } from '../fscache/fscache';
import { instanceMetrics } from '../instance/metrics';
import { EFS_UTILS_TLS_PORT, MountHelper, seconds, systemdTimeSpan } from '../nfs/mount';
import { NfsVersion } from '../nfs/nfs-version';
import { NFS_MIRROR_PORT, NFS_MOUNTD_PORT } from '../nfs/ports';
import { CacheOrigin, originBaseOptions, originMountType, originServerPath } from '../origin/cache-origin';
import { exportClients } from '../private/cidr';
import { mirrorParameters } from './mirror-parameters';
import { MIRROR_NAMESPACE, MIRROR_ROOT } from './mirror-paths';
import { CACHE_FLEET_DEFAULTS as DEFAULTS, CacheFleetOptions, CacheFleetProps } from './options';
import { NODE_CACHE_DIR } from './validation';

/**
 * The export's fsid: a UUID derived from the fleet's construct path and the re-exported origin path, so every node
 * of the fleet gets the same one without a database, and it stays the same across deployments. `numeric` (an NFSv3
 * fleet): a 32-bit number derived the same way, 12 bytes shorter in every file handle.
 */
export function fsidFor(constructPath: string, originPath: string, numeric = false): string {
  const h = crypto.createHash('sha256').update(`cdk-efs-cache:fsid:${constructPath}:${originPath}`).digest('hex');
  // A number from 1 to 2^31 - 1: exportfs keeps fsid=<number> in an int (it prints one above 2^31 - 1 as a negative
  // number), and 0 would make the export the NFSv4 pseudo-root.
  if (numeric) return String((parseInt(h.slice(0, 8), 16) % 0x7fffffff) + 1);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The options of the nodes' mount of the origin. */
export function originMountOptions(props: CacheFleetOptions, origin: CacheOrigin, helper: MountHelper, diskCache: boolean): string[] {
  const ac = seconds(props.attributeCacheTimeout ?? DEFAULTS.attributeCacheTimeout);
  const acdir = seconds(props.directoryCacheTimeout ?? DEFAULTS.directoryCacheTimeout);
  return [
    // FS-Cache keys its cache on the server's address and port: with the disk cache, efs-utils' local TLS port is
    // pinned (as on clients), so a remount finds what the disk holds. An NFS server's port is fixed anyway.
    ...(diskCache ? ['fsc'] : []),
    ...originBaseOptions(origin, helper, diskCache ? EFS_UTILS_TLS_PORT : undefined),
    'ro',
    (props.closeToOpenConsistency ?? DEFAULTS.closeToOpenConsistency) ? 'cto' : 'nocto',
    'ac',
    'lookupcache=all',
    `acregmin=${ac}`, `acregmax=${ac}`, `acdirmin=${acdir}`, `acdirmax=${acdir}`,
  ];
}

/** What the fleet derived from its props and the node type, which the node parameters carry. */
export interface NodeValues {
  readonly origin: CacheOrigin;
  readonly exportPath: string;
  readonly fsid: string;
  readonly nfsdThreads: number;
  readonly diskCache: boolean;
  readonly clientNfsVersion: NfsVersion;
  /** How the nodes mount an EFS origin (`CacheOrigin.efs(fs, { mountHelper })`); unused for an NFS server. */
  readonly mountHelper: MountHelper;
}

/**
 * The `EFSC_*` parameters of the nodes' bootstrap (assets/cache-node/bootstrap.sh), the same for every node: what
 * differs between nodes reaches them as tags (`EFSC_NODE_IDENTITY: 'tags'`).
 */
export function nodeParameters(fleet: Construct, props: CacheFleetProps, v: NodeValues): Record<string, string> {
  const stack = Stack.of(fleet);
  const clientCidrs = props.clientCidrs ?? [props.vpc.vpcCidrBlock];
  const tuning = props.tuning ?? {};
  const warming = props.warming;
  const rewarm = warming?.paths.length ? (warming.rewarmInterval ?? DEFAULTS.warming.rewarmInterval) : undefined;
  return {
    EFSC_ORIGIN_SERVER: v.origin.server,
    EFSC_ORIGIN_PATH: originServerPath(v.origin, props.originPath ?? DEFAULTS.originPath),
    EFSC_ORIGIN_MOUNT_TYPE: originMountType(v.origin, v.mountHelper),
    EFSC_ORIGIN_MOUNT_OPTIONS: originMountOptions(props, v.origin, v.mountHelper, v.diskCache).join(','),
    EFSC_MOUNT_TIMEOUT_SEC: seconds(props.mountTimeout ?? DEFAULTS.mountTimeout),
    EFSC_EXPORT_PATH: v.exportPath,
    EFSC_EXPORT_FSID: v.fsid,
    EFSC_EXPORT_CLIENTS: exportClients(clientCidrs),
    EFSC_NFSD_THREADS: String(v.nfsdThreads),
    EFSC_READ_AHEAD_KB: String((tuning.readAhead ?? DEFAULTS.tuning.readAhead).toKibibytes()),
    EFSC_SUNRPC_SLOTS: String(tuning.sunrpcSlotTableEntries ?? DEFAULTS.tuning.sunrpcSlotTableEntries),
    EFSC_VFS_CACHE_PRESSURE: String(tuning.vfsCachePressure ?? DEFAULTS.tuning.vfsCachePressure),
    EFSC_WARM_PATHS: (warming?.paths ?? []).join(' '),
    EFSC_WARM_WORKERS: String(warming?.workers ?? DEFAULTS.warming.workers),
    EFSC_REWARM_INTERVAL: rewarm ? systemdTimeSpan(rewarm) : '',
    ...instanceMetrics(fleet, props.metrics ?? DEFAULTS.metrics),
    ...mirrorParameters(fleet.node.path, props, originBaseOptions(v.origin, v.mountHelper), v.diskCache),
    // Facts the library owns and the script uses whatever the configuration: the ports clients reach (mountd with
    // NFSv3; the mirrors' nfsd), the mirrors' namespace and export root.
    EFSC_MOUNTD_PORT: String(NFS_MOUNTD_PORT),
    EFSC_MIRROR_PORT: String(NFS_MIRROR_PORT),
    EFSC_MIRROR_NAMESPACE: MIRROR_NAMESPACE,
    EFSC_MIRROR_ROOT: MIRROR_ROOT,
    EFSC_NODE_DISK_CACHE: String(v.diskCache),
    ...(v.clientNfsVersion === NfsVersion.NFS_V3 ? { EFSC_NFS_V3: 'true' } : {}),
    // Absent when off, so a fleet without it renders the same user data as before the option existed.
    ...(props.enaExpress ? { EFSC_ENA_EXPRESS: 'true' } : {}),
    ...(v.diskCache ? diskCacheParameters({
      dir: NODE_CACHE_DIR, label: 'efs-node-cache', tag: 'efsnode',
      deviceModel: props.nodeDiskCache?._deviceModel ?? INSTANCE_STORE_MODEL, initializeDevices: false, cull: DEFAULT_CULL,
    }) : {}),
    ...(v.diskCache ? { EFSC_CACHE_SELF_TEST: props.nodeDiskCache?._requireSelfTest ? 'require' : 'log' } : {}),
    // One launch template for every node: what differs between nodes (the stable interface to attach, the group to
    // signal) reaches each instance as tags its group propagates, read at boot through the metadata service.
    EFSC_NODE_IDENTITY: 'tags',
    EFSC_SIGNAL_STACK: stack.stackName,
    EFSC_SIGNAL_REGION: stack.region,
  };
}
