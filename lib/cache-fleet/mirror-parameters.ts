import { seconds } from '../nfs/mount';
import { hasMirrors, MirrorOptions, MIRRORING_DEFAULTS, mirrorStorageOf, MirrorStorage, pathMirrors, s3MirrorFsid, s3Mirrors } from './mirror';
import { mirrorFsid } from './mirror-paths';

/** The attribute cache of the sync's own origin mount, in seconds: longer than a sync (a longer sync costs requests, never a stale copy). */
export const MIRROR_SOURCE_ATTR_SEC = 3600;

/**
 * The `EFSC_MIRROR_*` parameters of the change marker, only with one: the marker's path, the longest time between two
 * walks, and the mount options of the origin mount the nodes keep for the markers' stats alone (read-only, a
 * superblock of its own, no attribute cache: each stat asks the origin, so an unchanged marker is seen as it is).
 */
function markerParameters(o: MirrorOptions, base: string[]): Record<string, string> {
  const m = o.mirroring ?? {};
  if (m.changeMarker === undefined) return {};
  return {
    EFSC_MIRROR_MARKER: m.changeMarker,
    EFSC_MIRROR_FULL_SEC: seconds(m.fullSyncInterval ?? MIRRORING_DEFAULTS.fullSyncInterval),
    EFSC_MIRROR_MARKER_OPTIONS: [...base, 'ro', 'nosharecache', 'actimeo=0'].join(','),
  };
}

/**
 * The `EFSC_MIRROR_S3*` parameters of the S3 mirrors (assets/lib/mirror-s3.sh), only with some: their names (exported
 * at /mirror/<name>), fsids, `s3://bucket/prefix` URIs and buckets' regions, space-separated, in the same order.
 * A bucket or region may be a token (its parameter is then decoded at boot, and checked there).
 */
function mirrorSourceParameters(constructPath: string, o: MirrorOptions): Record<string, string> {
  const sources = s3Mirrors(o);
  if (sources.length === 0) return {};
  return {
    EFSC_MIRROR_S3_NAMES: sources.map((m) => m.name).join(' '),
    EFSC_MIRROR_S3_FSIDS: sources.map((m) => s3MirrorFsid(constructPath, m)).join(' '),
    EFSC_MIRROR_S3_URIS: sources.map((m) => `s3://${m.bucket.bucketName}/${m.prefix}`).join(' '),
    EFSC_MIRROR_S3_REGIONS: sources.map((m) => m.bucket.env.region).join(' '),
  };
}

/**
 * The `EFSC_MIRROR_*` parameters of assets/lib/mirror.sh. Each sync mounts the origin afresh, read-only, and unmounts
 * it after (`nosharecache`: a superblock of its own, so nothing the last sync or the re-export cached is reused), so a
 * sync sees the origin as it is: the staleness bound is the interval plus two syncs, not the re-export's timers. Its
 * attribute cache outlives the sync (`actimeo=3600`, `noatime`): the walk's stat of each entry is answered from the
 * attributes its READDIR reply carried, not by a GETATTR per file. With a change marker, also `markerParameters`.
 * `base`: the options of every mount of the origin (the origin's helper, version and ports: `originBaseOptions`).
 */
export function mirrorParameters(constructPath: string, o: MirrorOptions, base: string[], diskCache: boolean): Record<string, string> {
  const paths = pathMirrors(o);
  const m = o.mirroring ?? {};
  // Without mirrors, mirror.sh reads EFSC_MIRROR_PATHS alone.
  if (!hasMirrors(o)) return { EFSC_MIRROR_PATHS: '' };
  return {
    EFSC_MIRROR_PATHS: paths.join(' '),
    ...mirrorSourceParameters(constructPath, o),
    EFSC_MIRROR_FSIDS: paths.map((p) => mirrorFsid(constructPath, p)).join(' '),
    EFSC_MIRROR_INTERVAL: `${seconds(m.interval ?? MIRRORING_DEFAULTS.interval)}s`,
    EFSC_MIRROR_SIZE_MB: String((m.size ?? MIRRORING_DEFAULTS.size).toMebibytes()),
    EFSC_MIRROR_STORAGE: mirrorStorageOf(o, diskCache) === MirrorStorage.MEMORY ? 'memory' : 'disk',
    EFSC_MIRROR_TIMEOUT_SEC: seconds(m.syncTimeout ?? MIRRORING_DEFAULTS.syncTimeout),
    EFSC_MIRROR_WORKERS: String(m.syncWorkers ?? MIRRORING_DEFAULTS.syncWorkers),
    EFSC_MIRROR_SOURCE_OPTIONS: [...base, 'ro', 'nosharecache', `actimeo=${MIRROR_SOURCE_ATTR_SEC}`, 'noatime'].join(','),
    ...markerParameters(o, base),
  };
}

/** The defaults of `MirroringOptions` (test/defaults.test.ts); the storage's depends on the node disk cache. */
