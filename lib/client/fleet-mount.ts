import { Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { isMirrorExportPath, MIRROR_ROOT } from '../cache-fleet/mirror-paths';
import { ICacheFleet, MirrorExport } from '../cache-fleet/options';
import { RECOMMENDED_NFS_OPTIONS, seconds } from '../nfs/mount';
import { NfsVersion } from '../nfs/nfs-version';
import { NFS_MIRROR_PORT, NFS_MOUNTD_PORT, NFS_PORT } from '../nfs/ports';
import { describeValue, knownAtSynth, propError } from '../private/errors';

/*
 * How a client mounts a cache fleet and its mirrors: the NFS options and ports, written once for every kind of client
 * (the EC2 instances of FsCacheClientLaunchTemplate, and the ECS and EKS volumes of lib/containers), so that they
 * cannot drift apart.
 */

/** Whether clients mount `fleet` over NFSv3 (`clientNfsVersion: NfsVersion.NFS_V3`). */
export function mountsNfsV3(fleet: ICacheFleet): boolean {
  return fleet.clientNfsVersion === NfsVersion.NFS_V3;
}

/**
 * The options of a mount of the fleet's export: `fsc` (when `fsCache`), EFS's recommended NFS options (nfsvers=3
 * for an NFSv3 fleet), `ro`, `nocto` and the fleet's own attribute and directory cache timers; for NFSv3 no locks
 * and both ports named (no rpcbind query).
 */
export function fleetMountOptions(fleet: ICacheFleet, fsCache: boolean): string[] {
  const v3 = mountsNfsV3(fleet);
  return [
    ...(fsCache ? ['fsc'] : []),
    ...(v3 ? RECOMMENDED_NFS_OPTIONS.map((o) => o === 'nfsvers=4.1' ? 'nfsvers=3' : o) : RECOMMENDED_NFS_OPTIONS),
    'ro',
    // The fleet is read-only and may itself hold attributes for its timers: clients that revalidated sooner would
    // ask the node for what it answers from its own cache anyway. Staleness through the fleet: at most the
    // fleet's timer at the node plus the same again here.
    'nocto', ...fleetAttributeCaching(fleet),
    // NFSv3: no locks (the export is read-only, so no NLM and no statd), and both ports given (no rpcbind query).
    ...(v3 ? ['nolock', 'proto=tcp', `port=${NFS_PORT}`, 'mountproto=tcp', `mountport=${NFS_MOUNTD_PORT}`, 'mountvers=3'] : []),
  ];
}

/**
 * The options of a mount of a mirror: NFSv4.1, read-only, hard, no fsc (the page cache holds what a delegation
 * covers), default attribute caching, on the mirrors' own port (`NFS_MIRROR_PORT`).
 */
export function mirrorMountOptions(): string[] {
  return [...RECOMMENDED_NFS_OPTIONS, 'ro', `port=${NFS_MIRROR_PORT}`];
}

/** Linux's bounds on `nconnect` (nfs(5)): the TCP connections of one NFS client to one server. */
export const NCONNECT_RANGE = { min: 1, max: 16 } as const;

/**
 * The `nconnect=<n>` option of a mount of the fleet (its export or a mirror), or none when `nconnect` is not given.
 * Throws `Invalid <prop>` for a deploy-time value (a mount option is a literal checked at synth: Docker's driver
 * options and a PersistentVolume's manifest take it unchecked) or a number other than a whole 1-16.
 */
export function nconnectOptions(scope: IConstruct, prop: string, nconnect: number | undefined): string[] {
  if (nconnect === undefined || nconnect === null) return [];
  knownAtSynth(scope, prop, nconnect, 'it becomes the mount option nconnect=<n>');
  if (typeof nconnect !== 'number' || !Number.isInteger(nconnect) || nconnect < NCONNECT_RANGE.min || nconnect > NCONNECT_RANGE.max) {
    throw propError(scope, prop, `must be a whole number of TCP connections from ${NCONNECT_RANGE.min} to ${NCONNECT_RANGE.max} ` +
      `(Linux's bounds for nconnect), got ${describeValue(nconnect, scope)}.`);
  }
  return [`nconnect=${nconnect}`];
}

/** The TCP ports a mount of the fleet's export uses: 2049, and mountd's 20048 for an NFSv3 fleet. */
export function fleetPorts(fleet: ICacheFleet): number[] {
  return [NFS_PORT, ...(mountsNfsV3(fleet) ? [NFS_MOUNTD_PORT] : [])];
}

/**
 * The export of the fleet's mirror named `path` (a `Mirror.path` path or an S3 mirror's `/mirror/<name>`). Throws
 * `Invalid <prop>` when the fleet has no such mirror, or serves it at a path that is not under /mirror.
 */
export function mirrorExportOf(scope: IConstruct, prop: string, fleet: ICacheFleet, path: string): MirrorExport {
  const m = fleet.mirrorExports.find((x) => x.path === path);
  if (!m) {
    throw propError(scope, prop, `${describeValue(path, scope)} is not a mirror of ${fleet.node.path} (its mirrors: ` +
      `${fleet.mirrorExports.map((x) => x.path).join(', ') || 'none'}).`);
  }
  if (!Token.isUnresolved(m.exportPath) && !isMirrorExportPath(m.exportPath)) {
    throw propError(scope, prop, `'${path}' is served by ${fleet.node.path} at '${m.exportPath}', which is not a path under ${MIRROR_ROOT} ` +
      '(no trailing / or //, no . or .. segment): mount the mirrors of a CacheFleet, or give the fleet\'s own mirrors[].exportPath.');
  }
  return m;
}

/** acregmin/acregmax/acdirmin/acdirmax of a client of the fleet: the fleet's own timers. */
function fleetAttributeCaching(fleet: ICacheFleet): string[] {
  const ac = seconds(fleet.attributeCacheTimeout);
  const acdir = seconds(fleet.directoryCacheTimeout);
  return [`acregmin=${ac}`, `acregmax=${ac}`, `acdirmin=${acdir}`, `acdirmax=${acdir}`];
}
