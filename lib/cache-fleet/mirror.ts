import * as crypto from 'crypto';
import { Duration, Size, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { propError, wholeSeconds } from '../private/errors';
import { MountHelper, RECOMMENDED_NFS_OPTIONS, seconds } from '../private/mount';
import { DOT_SEGMENT_RE } from '../private/paths';

/** Where a node keeps the copies of its mirrors (`mirrorStorage`). */
export enum MirrorStorage {
  /**
   * A RAM-backed file system (tmpfs) of `mirrorSize`: the copies take that much of the node's memory at most, beside
   * the page cache of the re-export.
   */
  MEMORY = 'MEMORY',
  /**
   * An ext4 file system of `mirrorSize` in an image file on the node's instance store (the RAID 0 of the second cache
   * level, `nodeDiskCache`), made afresh at every boot: trees larger than the memory a node can spare, with hot files
   * still served from the page cache. At most half the instance store; the rest stays the disk cache.
   */
  INSTANCE_STORE = 'INSTANCE_STORE',
}

/**
 * Mirror options of a cache fleet (issue 19): subtrees that the nodes serve from a local copy instead of the
 * re-export, so that clients get read delegations and re-open and re-read hot files with no request at all.
 */
export interface MirrorOptions {
  /**
   * Node paths under `exportPath` (for example `'/efs/app'`) that every node copies to a local file system of its
   * own (`mirrorStorage`) and exports read-only from there, at `/mirror/<path under exportPath>` (`'/efs/app'` becomes `node:/mirror/app`). A copy lags the
   * origin by at most `mirrorInterval` plus two syncs (plus the client's own attribute cache for directory listings).
   * For trees read again and again and changed rarely: application code, templates, vendor and package trees.
   * Writes still go to EFS. No path may contain another. Clients' mounts of a mirror outlive a reboot or replacement
   * of the node; reordering the paths gives the mirrors new file handles, and clients then mount them again.
   *
   * @default - no mirror
   */
  readonly mirrorPaths?: string[];

  /**
   * Time from the end of one sync of the mirrors to the start of the next. Whole seconds, 10 seconds to 24 hours.
   *
   * @default Duration.minutes(1)
   */
  readonly mirrorInterval?: Duration;

  /**
   * Size of the file system that holds every mirror of a node (`mirrorStorage`). A tree that outgrows it (bytes, or
   * on the instance store also inodes: one per 4 KiB) is not copied further: the node keeps serving the last copy
   * and reports `MirrorFull`; at boot the node refuses to serve. Whole MiB.
   *
   * @default Size.gibibytes(1)
   */
  readonly mirrorSize?: Size;

  /**
   * Where the nodes keep the copies. `INSTANCE_STORE` needs the second cache level (`nodeDiskCache`). Changing it
   * gives the mirrors new file handles: clients then mount them again.
   *
   * @default - `MirrorStorage.INSTANCE_STORE` when the nodes keep the second cache level (`nodeDiskCache`), else
   * `MirrorStorage.MEMORY`
   */
  readonly mirrorStorage?: MirrorStorage;

  /**
   * Longest time one sync of one mirror may take; a sync that takes longer is ended and counted as failed.
   *
   * @default Duration.minutes(10)
   */
  readonly mirrorSyncTimeout?: Duration;

  /**
   * rsync jobs of one sync at a time (fpart walks the origin once and splits its list into parts of 500 entries, one per job). Small
   * files over NFS are latency-bound, so jobs in flight are what makes a sync fast; each job is one more client of
   * EFS during the sync. 1 to 64.
   *
   * @default 8
   */
  readonly mirrorSyncWorkers?: number;
}

const PATH_RE = /^\/[A-Za-z0-9._/-]*$/;

/** The path clients mount a mirror from: `/mirror/<path under exportPath>`, as `mirrorExportPath` makes it. */
export const MIRROR_EXPORT_RE = /^\/mirror\/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$/;

/** The fsid of a mirror, as `mirrorFsid` makes it and the nodes' check (assets/lib/mirror.sh) takes it: a UUID, lowercase. */
export const MIRROR_FSID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether `p` may be a mirror's node path: absolute (letters, digits, . _ - /), no trailing / or //, no . or ..
 * segment (`/efs//app` would be a second name of `/efs/app`, mirrored twice into one directory).
 */
export function isMirrorPath(p: string): boolean {
  return PATH_RE.test(p) && !p.endsWith('/') && !p.includes('//') && !DOT_SEGMENT_RE.test(p);
}

/** Whether `p` may be the path clients mount a mirror from: `/mirror/<path>`, no trailing / or //, no . or .. segment. */
export function isMirrorExportPath(p: string): boolean {
  return MIRROR_EXPORT_RE.test(p) && !p.includes('//') && !DOT_SEGMENT_RE.test(p);
}

/** Where clients mount a mirror of node path `path` (under `exportPath`): `/mirror/<path under exportPath>`. */
export function mirrorExportPath(exportPath: string, path: string): string {
  return `/mirror${path.slice(exportPath.length)}`;
}

/** The fsid of one mirror: a UUID from the fleet's construct path and the mirror's path, the same on every node. */
export function mirrorFsid(constructPath: string, path: string): string {
  const h = crypto.createHash('sha256').update(`cdk-efs-cache:mirror-fsid:${constructPath}:${path}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Throws `Invalid <prop>` for mirror options that cannot work (`diskCache`: the fleet's `nodeDiskCache`, resolved). */
export function validateMirrorOptions(scope: IConstruct, o: MirrorOptions, exportPath: string, diskCache: boolean): void {
  const paths = o.mirrorPaths ?? [];
  for (const p of paths) {
    if (Token.isUnresolved(p) || !isMirrorPath(p)) {
      throw propError(scope, 'mirrorPaths', `'${p}' is not an absolute path (letters, digits, . _ - /, no trailing / or //, no . or .. segment).`);
    }
    if (!p.startsWith(`${exportPath}/`)) {
      throw propError(scope, 'mirrorPaths', `'${p}' is not under the export (exportPath '${exportPath}'); mirror paths are node paths below it, e.g. '${exportPath}/app'.`);
    }
    const outer = paths.find((q) => q !== p && p.startsWith(`${q}/`));
    if (outer) throw propError(scope, 'mirrorPaths', `'${p}' is inside '${outer}': a tree is mirrored once.`);
  }
  if (new Set(paths).size !== paths.length) throw propError(scope, 'mirrorPaths', 'lists a path twice.');
  const needsPaths = (name: keyof MirrorOptions, given: unknown) => {
    if (given !== undefined && paths.length === 0) throw propError(scope, name, 'needs mirrorPaths: there is nothing to mirror.');
  };
  needsPaths('mirrorInterval', o.mirrorInterval);
  needsPaths('mirrorSize', o.mirrorSize);
  needsPaths('mirrorStorage', o.mirrorStorage);
  needsPaths('mirrorSyncTimeout', o.mirrorSyncTimeout);
  needsPaths('mirrorSyncWorkers', o.mirrorSyncWorkers);
  const w = o.mirrorSyncWorkers;
  if (w !== undefined && (Token.isUnresolved(w) || !Number.isInteger(w) || w < 1 || w > 64)) {
    throw propError(scope, 'mirrorSyncWorkers', `must be a whole number from 1 to 64, got ${Token.isUnresolved(w) ? 'a token' : w}.`);
  }
  if (o.mirrorStorage === MirrorStorage.INSTANCE_STORE && !diskCache) {
    throw propError(scope, 'mirrorStorage', 'INSTANCE_STORE needs the second cache level on the nodes (nodeDiskCache, on by ' +
      'default for types with NVMe instance store such as c7gd, c6gd, i4i): the mirrors live beside the disk cache.');
  }
  wholeSeconds(scope, 'mirrorInterval', o.mirrorInterval, 10, 86400, '10 seconds to 24 hours');
  wholeSeconds(scope, 'mirrorSyncTimeout', o.mirrorSyncTimeout, 10, 86400, '10 seconds to 24 hours');
  if (o.mirrorSize) {
    const mib = o.mirrorSize.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(mib) || mib < 1 || mib > 16 * 1024 * 1024) {
      throw propError(scope, 'mirrorSize', `must be whole MiB from 1 MiB to 16 TiB, got ${mib} MiB.`);
    }
  }
}

/**
 * The `EFSC_MIRROR_*` parameters of assets/lib/mirror.sh. The sync mounts the origin a second time, read-only and
 * without attribute caching (`actimeo=0`, `nosharecache` so that the re-export's long timers do not apply), so a
 * sync sees the origin as it is: the staleness bound is the interval plus two syncs, not the re-export's timers.
 */
export function mirrorParameters(constructPath: string, o: MirrorOptions, helper: MountHelper, diskCache: boolean): Record<string, string> {
  const paths = o.mirrorPaths ?? [];
  // Without mirrors the user data has no lib/mirror.sh, only its stand-ins, which read EFSC_MIRROR_PATHS alone.
  if (paths.length === 0) return { EFSC_MIRROR_PATHS: '' };
  return {
    EFSC_MIRROR_PATHS: paths.join(' '),
    EFSC_MIRROR_FSIDS: paths.map((p) => mirrorFsid(constructPath, p)).join(' '),
    EFSC_MIRROR_INTERVAL: `${seconds(o.mirrorInterval ?? Duration.minutes(1))}s`,
    EFSC_MIRROR_SIZE_MB: String((o.mirrorSize ?? Size.gibibytes(1)).toMebibytes()),
    EFSC_MIRROR_STORAGE: (o.mirrorStorage ?? (diskCache ? MirrorStorage.INSTANCE_STORE : MirrorStorage.MEMORY)) === MirrorStorage.MEMORY ? 'memory' : 'disk',
    EFSC_MIRROR_TIMEOUT_SEC: seconds(o.mirrorSyncTimeout ?? Duration.minutes(10)),
    EFSC_MIRROR_WORKERS: String(o.mirrorSyncWorkers ?? 8),
    EFSC_MIRROR_SOURCE_OPTIONS: [
      ...(helper === MountHelper.EFS_UTILS ? ['tls', 'iam'] : []),
      ...RECOMMENDED_NFS_OPTIONS, 'ro', 'nosharecache', 'actimeo=0',
    ].join(','),
  };
}
