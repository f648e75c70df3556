import * as crypto from 'crypto';
import { Annotations, Duration, Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { NFS_MIRROR_PORT } from '../private/constants';
import { knownAtSynth, propError, wholeSeconds } from '../private/errors';
import { InstanceTypeFacts } from '../private/instance-types';
import { seconds } from '../private/mount';
import { DOT_SEGMENT_RE, PATH_RE } from '../private/paths';

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
   * and reports `MirrorFull`; at boot the node refuses to serve. Whole MiB. With `MirrorStorage.MEMORY`, less than
   * the node type's RAM (where its name tells it: c, m and r families), with a synth warning above half of it: the
   * page cache is the cache. With `MirrorStorage.INSTANCE_STORE`, at most half of the disk cache's file system (the
   * node refuses more at boot): refused at synth above half of the type's instance store where the library knows its
   * size (the NVMe families c5d, c5ad, m5d, r5d, the c/m/r `gd`/`id` families of generations 6 to 8, i3, i3en, i4g,
   * i4i, i7i, i7ie, i8g, i8ge, im4gn, is4gen), with a warning within 3% of that (ext4's share of the disks).
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
   * rsync jobs of one sync at a time. The sync walks the origin once and compares the walk with the last one; what
   * changed is split into parts of at most 500 entries, one per job. Copying small files over NFS is latency-bound,
   * so jobs in flight are what makes a copy fast; each job is one more client of EFS while it copies. An unchanged
   * tree starts no job. 1 to 64.
   *
   * @default 8
   */
  readonly mirrorSyncWorkers?: number;

  /**
   * A change marker: while this file, which your publisher updates after each publish, is unchanged, a sync does not
   * walk the mirror.
   *
   * A path relative to each mirror's root, the same for every mirror (for example `'.published'`). Your publisher
   * touches or rewrites it once each publish is complete (a deploy pipeline usually has one place to do that).
   * Before walking a mirror, each sync reads the marker's attributes (inode, size, mtime, ctime) with one stat on an
   * origin mount of its own without attribute cache; while they are what they were before the last walk, the mirror
   * is not walked and the sync costs the origin that stat alone, whatever the tree's size. A walk still happens when
   * the marker changed (a publish during a walk is walked by the next sync), is absent (every sync walks then), or
   * cannot be trusted (a new boot, a lost copy), and at least every `mirrorFullSyncInterval`. A marker that cannot be
   * read (the origin does not answer) is a failed sync: the copy stays served.
   *
   * The contract: a change published without updating the marker is seen at the next walk the interval forces,
   * i.e. within `mirrorFullSyncInterval` plus a sync (plus the client's attribute cache), not within
   * `mirrorInterval`. Update the marker after the publish, never before: a marker updated first may let the sync
   * walk and save it before the rest of the publish lands.
   *
   * Letters, digits, `. _ - /`; relative; no empty, `.` or `..` component.
   *
   * @default - no marker: every sync walks every mirror
   */
  readonly mirrorChangeMarker?: string;

  /**
   * With `mirrorChangeMarker`: the longest time between two walks of a mirror whatever its marker says.
   *
   * It bounds how late a change published without updating the marker is copied: within this interval plus a sync
   * (plus the client's attribute cache). Whole seconds, at least `mirrorInterval`, at
   * most 7 days. Only with a marker (without one every sync walks).
   *
   * @default Duration.hours(1)
   */
  readonly mirrorFullSyncInterval?: Duration;
}

/**
 * The root under which every node exports its mirrors (`MIRROR_ROOT/<path under exportPath>`). The nodes' script
 * names it too (assets/lib/mirror.sh `MIRROR_ROOT`, assets/client/bootstrap.sh); test/shared-facts.test.ts fails if
 * they differ.
 */
export const MIRROR_ROOT = '/mirror';

/** The path clients mount a mirror from: `/mirror/<path under exportPath>`, as `mirrorExportPath` makes it. */
export const MIRROR_EXPORT_RE = new RegExp(`^${MIRROR_ROOT}/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$`);

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
  return `${MIRROR_ROOT}${path.slice(exportPath.length)}`;
}

/** The part of a mirror's export path (`/mirror/app`, one `isMirrorExportPath` accepts) under the root: `/app`. */
export function underMirrorRoot(mirrorExport: string): string {
  return mirrorExport.slice(MIRROR_ROOT.length);
}

/** The fsid of one mirror: a UUID from the fleet's construct path and the mirror's path, the same on every node. */
export function mirrorFsid(constructPath: string, path: string): string {
  const h = crypto.createHash('sha256').update(`cdk-efs-cache:mirror-fsid:${constructPath}:${path}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The longest time between two walks of a mirror with a change marker, by default (`mirrorFullSyncInterval`). */
const MIRROR_FULL_SYNC_DEFAULT = Duration.hours(1);

/**
 * Whether `m` may be a change marker (`mirrorChangeMarker`): a relative path of letters, digits, . _ - and /, not
 * empty, no leading or trailing /, no empty, . or .. component (the nodes' check, assets/lib/mirror.sh, takes the same).
 */
export function isChangeMarker(m: string): boolean {
  return /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(m) && !m.split('/').some((c) => c === '.' || c === '..');
}

/** Throws `Invalid <prop>` for mirror options that cannot work (`diskCache`: the fleet's `nodeDiskCache`, resolved). */
export function validateMirrorOptions(scope: IConstruct, o: MirrorOptions, exportPath: string, diskCache: boolean): void {
  const paths = o.mirrorPaths ?? [];
  for (const p of paths) {
    knownAtSynth(scope, 'mirrorPaths', p, 'each mirror is an export of its own');
    if (!isMirrorPath(p)) {
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
  needsPaths('mirrorChangeMarker', o.mirrorChangeMarker);
  needsPaths('mirrorFullSyncInterval', o.mirrorFullSyncInterval);
  const marker = o.mirrorChangeMarker;
  if (marker !== undefined) {
    knownAtSynth(scope, 'mirrorChangeMarker', marker);
    if (!isChangeMarker(marker)) {
      throw propError(scope, 'mirrorChangeMarker', `'${marker}' is not a path relative to each mirror's root (letters, digits, . _ - /, ` +
        'not empty, no leading or trailing /, no empty, . or .. component), e.g. \'.published\'.');
    }
  }
  if (o.mirrorFullSyncInterval !== undefined && marker === undefined) {
    throw propError(scope, 'mirrorFullSyncInterval', 'applies only with mirrorChangeMarker: without a marker every sync walks every mirror.');
  }
  wholeSeconds(scope, 'mirrorFullSyncInterval', o.mirrorFullSyncInterval, 10, 7 * 86400, '10 seconds to 7 days');
  const w = o.mirrorSyncWorkers;
  knownAtSynth(scope, 'mirrorSyncWorkers', w);
  if (w !== undefined && (!Number.isInteger(w) || w < 1 || w > 64)) {
    throw propError(scope, 'mirrorSyncWorkers', `must be a whole number from 1 to 64, got ${w}.`);
  }
  if (o.mirrorStorage === MirrorStorage.INSTANCE_STORE && !diskCache) {
    throw propError(scope, 'mirrorStorage', 'INSTANCE_STORE needs the second cache level on the nodes (nodeDiskCache, on by ' +
      'default for types with NVMe instance store such as c7gd, c6gd, i4i): the mirrors live beside the disk cache.');
  }
  wholeSeconds(scope, 'mirrorInterval', o.mirrorInterval, 10, 86400, '10 seconds to 24 hours');
  wholeSeconds(scope, 'mirrorSyncTimeout', o.mirrorSyncTimeout, 10, 86400, '10 seconds to 24 hours');
  if (marker !== undefined) {
    const interval = o.mirrorInterval ?? Duration.minutes(1);
    const full = o.mirrorFullSyncInterval ?? MIRROR_FULL_SYNC_DEFAULT;
    if (full.toSeconds() < interval.toSeconds()) {
      throw propError(scope, 'mirrorFullSyncInterval', `must be at least mirrorInterval (${interval.toHumanString()}), got ${full.toHumanString()}.`);
    }
  }
  if (o.mirrorSize) {
    knownAtSynth(scope, 'mirrorSize', o.mirrorSize);
    const mib = o.mirrorSize.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(mib) || mib < 1 || mib > 16 * 1024 * 1024) {
      throw propError(scope, 'mirrorSize', `must be whole MiB from 1 MiB to 16 TiB, got ${mib} MiB.`);
    }
  }
}

/** Where the mirrors of a fleet live: `mirrorStorage`, or its default. */
export function mirrorStorageOf(o: MirrorOptions, diskCache: boolean): MirrorStorage {
  return o.mirrorStorage ?? (diskCache ? MirrorStorage.INSTANCE_STORE : MirrorStorage.MEMORY);
}

/**
 * The part of the instance store a node's file system loses to ext4 (inode tables: 1/64 of it; the journal, up to
 * 1 GiB; the RAID's metadata), at most: the boot check compares `mirrorSize` with half of the file system, which is
 * this much smaller than the disks AWS lists.
 */
const EXT4_OVERHEAD = 0.03;

/**
 * Checks `mirrorSize` (or its default) against the node type, where its name tells the memory or instance store
 * (`facts`): in memory (a tmpfs), refuses a size not below the type's RAM, which leaves nothing for the page cache
 * that is the cache (and the tmpfs, filled, would drive the node out of memory), and warns above half of it. On the
 * instance store, refuses what each node refuses at boot (assets/lib/mirror.sh: more than half of the disk cache's
 * file system), where it is certain: more than half of the disks; and warns within `EXT4_OVERHEAD` of that.
 */
export function checkMirrorSizeFits(scope: IConstruct, o: MirrorOptions, diskCache: boolean, facts: InstanceTypeFacts, type: string): void {
  if (!o.mirrorPaths?.length) return;
  const size = o.mirrorSize ?? Size.gibibytes(1);
  const bytes = size.toBytes({ rounding: SizeRoundingBehavior.NONE });
  const gib = bytes / 2 ** 30;
  const shown = `${o.mirrorSize ? '' : 'the default '}${+gib.toFixed(3)} GiB`;
  if (mirrorStorageOf(o, diskCache) === MirrorStorage.MEMORY) {
    if (facts.memoryGiB === undefined) return;
    if (gib >= facts.memoryGiB) {
      throw propError(scope, 'mirrorSize', `${shown} in memory (MirrorStorage.MEMORY) is not less than the ${facts.memoryGiB} GiB ` +
        `of RAM of ${type}: a tmpfs that size leaves nothing for the page cache, which is the cache, and filled it drives ` +
        `the node out of memory. Choose at most ${facts.memoryGiB / 2} GiB (half the RAM), a type with more memory, or ` +
        'MirrorStorage.INSTANCE_STORE on a type with NVMe instance store.');
    }
    if (gib > facts.memoryGiB / 2) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:mirrorSizeOverHalfMemory', `mirrorSize: ${shown} in memory is more than ` +
        `half of the ${facts.memoryGiB} GiB of RAM of ${type}: filled, the mirrors leave less than half of it to the page ` +
        'cache that serves everything else. Choose a type with more memory, or MirrorStorage.INSTANCE_STORE on a type ' +
        'with NVMe instance store.');
    }
    return;
  }
  if (facts.instanceStoreGB === undefined) return;
  const store = facts.instanceStoreGB * 1e9;
  const most = Math.floor((store * (1 - EXT4_OVERHEAD)) / 2 / 2 ** 30);
  if (2 * bytes > store) {
    throw propError(scope, 'mirrorSize', `${shown} on the instance store (MirrorStorage.INSTANCE_STORE) is more than half of ` +
      `the ${facts.instanceStoreGB} GB of ${type}: every node would refuse to serve at boot (the mirrors may take at most ` +
      `half of the disk cache's file system; the rest stays the disk cache). Choose at most ${most} GiB, or a type with ` +
      'more instance store.');
  }
  if (2 * bytes > store * (1 - EXT4_OVERHEAD)) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:mirrorSizeNearHalfInstanceStore', `mirrorSize: ${shown} is within ` +
      `${EXT4_OVERHEAD * 100}% of half of the ${facts.instanceStoreGB} GB instance store of ${type}, and the disk cache's ` +
      'file system is up to that much smaller than the disks (ext4\'s inode tables and journal): a node whose mirrors ' +
      `take more than half of it refuses to serve at boot. Choose at most ${most} GiB.`);
  }
}

/** The attribute cache of the sync's own origin mount, in seconds: longer than a sync (a longer sync costs requests, never a stale copy). */
export const MIRROR_SOURCE_ATTR_SEC = 3600;

/**
 * The `EFSC_MIRROR_*` parameters of the change marker, only with one: the marker's path, the longest time between two
 * walks, and the mount options of the origin mount the nodes keep for the markers' stats alone (read-only, a
 * superblock of its own, no attribute cache: each stat asks the origin, so an unchanged marker is seen as it is).
 */
function markerParameters(o: MirrorOptions, base: string[]): Record<string, string> {
  if (o.mirrorChangeMarker === undefined) return {};
  return {
    EFSC_MIRROR_MARKER: o.mirrorChangeMarker,
    EFSC_MIRROR_FULL_SEC: seconds(o.mirrorFullSyncInterval ?? MIRROR_FULL_SYNC_DEFAULT),
    EFSC_MIRROR_MARKER_OPTIONS: [...base, 'ro', 'nosharecache', 'actimeo=0'].join(','),
  };
}

/**
 * The `EFSC_MIRROR_*` parameters of assets/lib/mirror.sh. Each sync mounts the origin afresh, read-only, and unmounts
 * it after (`nosharecache`: a superblock of its own, so nothing the last sync or the re-export cached is reused), so a
 * sync sees the origin as it is: the staleness bound is the interval plus two syncs, not the re-export's timers. Its
 * attribute cache outlives the sync (`actimeo=3600`, `noatime`): the walk's stat of each entry is answered from the
 * attributes its READDIR reply carried, not by a GETATTR per file. `EFSC_MIRROR_PORT`: the port of the node's own
 * addresses that reaches the mirrors' own nfsd (`NFS_MIRROR_PORT`). With a change marker, also `markerParameters`.
 * `base`: the options of every mount of the origin (the origin's helper, version and ports: `originBaseOptions`).
 */
export function mirrorParameters(constructPath: string, o: MirrorOptions, base: string[], diskCache: boolean): Record<string, string> {
  const paths = o.mirrorPaths ?? [];
  // Without mirrors the user data has no lib/mirror.sh, only its stand-ins, which read EFSC_MIRROR_PATHS alone.
  if (paths.length === 0) return { EFSC_MIRROR_PATHS: '' };
  return {
    EFSC_MIRROR_PATHS: paths.join(' '),
    EFSC_MIRROR_FSIDS: paths.map((p) => mirrorFsid(constructPath, p)).join(' '),
    EFSC_MIRROR_PORT: String(NFS_MIRROR_PORT),
    EFSC_MIRROR_INTERVAL: `${seconds(o.mirrorInterval ?? Duration.minutes(1))}s`,
    EFSC_MIRROR_SIZE_MB: String((o.mirrorSize ?? Size.gibibytes(1)).toMebibytes()),
    EFSC_MIRROR_STORAGE: mirrorStorageOf(o, diskCache) === MirrorStorage.MEMORY ? 'memory' : 'disk',
    EFSC_MIRROR_TIMEOUT_SEC: seconds(o.mirrorSyncTimeout ?? Duration.minutes(10)),
    EFSC_MIRROR_WORKERS: String(o.mirrorSyncWorkers ?? 8),
    EFSC_MIRROR_SOURCE_OPTIONS: [...base, 'ro', 'nosharecache', `actimeo=${MIRROR_SOURCE_ATTR_SEC}`, 'noatime'].join(','),
    ...markerParameters(o, base),
  };
}
