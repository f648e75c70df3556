import * as crypto from 'crypto';
import { Annotations, Duration, Size, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { IConstruct } from 'constructs';
import { NFS_MIRROR_PORT } from '../private/constants';
import { knownAtSynth, propError, wholeSeconds } from '../private/errors';
import { InstanceTypeFacts } from '../private/instance-types';
import { seconds } from '../private/mount';
import { grantReadPrefix } from '../private/s3-grant';
import { DOT_SEGMENT_RE, normalS3Prefix, PATH_RE, S3_PREFIX_RE } from '../private/paths';

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

/** Options of `MirrorSource.s3`. */
export interface S3MirrorOptions {
  /**
   * Where the nodes export the mirror: at `/mirror/<name>`, which clients mount (`mirrorPaths: ['/mirror/<name>']`
   * of `MountSource.cacheFleet`). A relative path of letters, digits, `. _ - /` (no empty, `.` or `..` component),
   * apart from every other mirror's export (`mirrorPaths` export `/mirror/<path under exportPath>`). Changing it
   * gives the mirror a new fsid: clients then mount it again.
   *
   * @default - the prefix without its trailing `/` (`'site/'` is exported at `/mirror/site`); required for the whole
   * bucket (prefix '')
   */
  readonly name?: string;
}

/**
 * A mirror whose source is not the origin (`mirrorSources`): for now an S3 prefix (`MirrorSource.s3`). Path mirrors of
 * the origin stay in `mirrorPaths`.
 */
export class MirrorSource {
  /**
   * Every object under `prefix` in `bucket`, copied by each node into its mirrors' file system and served read-only
   * at `/mirror/<name>` like a path mirror: with delegations, the same interval, timeout, size check and failure rules,
   * and a first sync before the node serves. Each sync lists the prefix (`aws s3api list-objects-v2`, every page) and
   * fetches only the objects whose ETag or size changed, each written aside and renamed over the old one; removals
   * come last, after every fetch succeeded. A listing that fails keeps the last copy. Keys that would leave the mirror
   * (a `.` or `..` component, a leading `/`, an empty component) or that hold control characters are skipped with a
   * warning; keys that end in `/` (folder placeholders) are skipped.
   *
   * The nodes' role may list the bucket under the prefix (`s3:ListBucket` with an `s3:prefix` condition) and read the
   * objects under it (`s3:GetObject` on `<prefix>*`), decrypt with the bucket's key if it has one, and nothing else
   * of the bucket. The bucket's region is its stack's (`bucket.env.region`).
   *
   * @param bucket the bucket, made anywhere or imported
   * @param prefix key prefix, for example `'site/'` (a trailing `/` is added); '' for the whole bucket (then `name`
   *   is required). Letters, digits and `. _ = + -` in each component, no empty, `.` or `..` component.
   */
  public static s3(bucket: s3.IBucket, prefix: string, options: S3MirrorOptions = {}): MirrorSource {
    return new MirrorSource(bucket, prefix, options.name);
  }

  /** The bucket. */
  public readonly bucket: s3.IBucket;
  /** The key prefix as given. */
  public readonly givenPrefix: string;
  /** The key prefix as listed: '' or ending in `/`. */
  public readonly prefix: string;
  /**
   * The name under /mirror, as given.
   *
   * @default - the prefix without its trailing `/`
   */
  public readonly givenName?: string;

  private constructor(bucket: s3.IBucket, prefix: string, name: string | undefined) {
    this.bucket = bucket;
    this.givenPrefix = prefix;
    this.prefix = Token.isUnresolved(prefix) ? prefix : normalS3Prefix(prefix);
    this.givenName = name;
  }

  /** The name under /mirror: as given, or the prefix without its trailing `/`. */
  public get name(): string {
    return this.givenName ?? this.prefix.replace(/\/$/, '');
  }

  /** Where the nodes export this mirror and clients mount it from: `/mirror/<name>`. */
  public get exportPath(): string {
    return `${MIRROR_ROOT}/${this.name}`;
  }
}

/**
 * Mirror options of a cache fleet: subtrees that the nodes serve from a local copy instead of the
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
   * Mirrors whose source is not the origin: S3 prefixes (`MirrorSource.s3(bucket, 'site/')`), each exported at
   * `/mirror/<name>` with an fsid of its own, the same on every node, beside the `mirrorPaths`, with the same
   * interval, size, storage, timeout and jobs (`mirrorSyncWorkers`: objects fetched at a time). A copy lags the
   * bucket by at most `mirrorInterval` plus two syncs. Clients mount one with `MountSource.cacheFleet(fleet,
   * { mirrorPaths: ['/mirror/<name>'] })`. The change marker (`mirrorChangeMarker`) applies to `mirrorPaths` only:
   * each sync lists every prefix (one request per 1,000 keys). Proved against an AWS API emulator's S3 only.
   *
   * @default - no S3 mirror
   */
  readonly mirrorSources?: MirrorSource[];

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
   * Longest time one try of a sync of one mirror may take; a try that takes longer is ended and counted as failed.
   * What it copied is kept, and the next try continues from it: the first sync at boot tries again at once for as
   * long as each try copies more (the node serves once the copy is whole), later syncs at the next interval. Each try
   * walks the whole tree first, so the timeout must exceed the walk (docs/benchmarks.md gives measured rates).
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
 * names it too (assets/lib/mirror.sh `MIRROR_ROOT`, assets/client/bootstrap.sh); test/bootstrap/shared-facts.test.ts fails if
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
  validateMirrorSources(scope, o, exportPath);
  const sources = o.mirrorSources ?? [];
  const needsPaths = (name: keyof MirrorOptions, given: unknown) => {
    if (given !== undefined && paths.length === 0 && sources.length === 0) {
      throw propError(scope, name, 'needs mirrorPaths (or mirrorSources): there is nothing to mirror.');
    }
  };
  needsPaths('mirrorInterval', o.mirrorInterval);
  needsPaths('mirrorSize', o.mirrorSize);
  needsPaths('mirrorStorage', o.mirrorStorage);
  needsPaths('mirrorSyncTimeout', o.mirrorSyncTimeout);
  needsPaths('mirrorSyncWorkers', o.mirrorSyncWorkers);
  if (o.mirrorChangeMarker !== undefined && paths.length === 0 && sources.length > 0) {
    throw propError(scope, 'mirrorChangeMarker', 'needs mirrorPaths: the marker is a file of the origin\'s mirrored trees, and S3 mirrors ' +
      '(mirrorSources) are listed at every sync.');
  }
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

/**
 * Throws `Invalid mirrorSources` for S3 mirrors that cannot work: a prefix or name that is not a literal, a prefix
 * outside the seeder's rule or with a `.` or `..` component, a bad name, the whole bucket without a name, and export
 * paths that meet another mirror's (the same, or one inside the other: clients mount them side by side).
 */
function validateMirrorSources(scope: IConstruct, o: MirrorOptions, exportPath: string): void {
  const sources = o.mirrorSources ?? [];
  const exports = (o.mirrorPaths ?? []).map((p) => ({ at: mirrorExportPath(exportPath, p), what: `the mirror of '${p}' (mirrorPaths)` }));
  sources.forEach((m, i) => {
    const at = `mirrorSources[${i}]`;
    knownAtSynth(scope, 'mirrorSources', m.givenPrefix, `${at}.prefix: the nodes' role may read only under it`);
    if (!S3_PREFIX_RE.test(m.prefix) || DOT_SEGMENT_RE.test(m.prefix)) {
      throw propError(scope, 'mirrorSources', `${at}: the S3 prefix '${m.givenPrefix}' may hold only letters, digits and . _ = + - / ` +
        '(no empty, . or .. component), e.g. \'site/\'.');
    }
    // S3 keys are at most 1,024 bytes: under a longer listed prefix no object can exist, and the mirror would stay empty.
    if (m.prefix.length > 1023) {
      throw propError(scope, 'mirrorSources', `${at}: the S3 prefix is ${m.prefix.length} characters with its trailing /; S3 keys ` +
        'are at most 1,024, so no object can be under it. Use a prefix of at most 1,022 characters.');
    }
    if (m.givenName === undefined && m.prefix === '') {
      throw propError(scope, 'mirrorSources', `${at}: a mirror of the whole bucket needs a name (MirrorSource.s3(bucket, '', { name: 'site' })): ` +
        'it is exported at /mirror/<name>.');
    }
    knownAtSynth(scope, 'mirrorSources', m.name, `${at}.name: each mirror is an export of its own`);
    if (!isChangeMarker(m.name)) {
      throw propError(scope, 'mirrorSources', `${at}: the name '${m.name}' is not a relative path (letters, digits, . _ - /, not empty, ` +
        'no leading or trailing /, no empty, . or .. component), e.g. \'site\'.');
    }
    const mine = m.exportPath;
    for (const other of exports) {
      const how = mine === other.at ? 'is' : other.at.startsWith(`${mine}/`) ? 'contains' : mine.startsWith(`${other.at}/`) ? 'is inside' : undefined;
      if (how) {
        throw propError(scope, 'mirrorSources', `${at}: its export '${mine}' ${how} ${how === 'is' ? 'the export of' : 'that of'} ${other.what}, ` +
          `'${other.at}': each mirror is exported apart from the others; give it another name.`);
      }
    }
    exports.push({ at: mine, what: `mirrorSources[${i}]` });
  });
}

/**
 * Lets `role` (the nodes') read each S3 mirror: `s3:ListBucket` on its bucket with an `s3:prefix` condition for its
 * prefix (none for the whole bucket), `s3:GetObject` on `<prefix>*`, and decrypt with the bucket's key if it has one;
 * nothing else. The objects' wildcard is acknowledged to cdk-nag: their keys are not known at synth.
 */
export function grantMirrorSources(role: iam.IRole, o: MirrorOptions): void {
  for (const m of o.mirrorSources ?? []) {
    grantReadPrefix(role, m.bucket, m.prefix,
      'The nodes copy every object under the S3 mirror\'s prefix (mirrorSources); their keys are not known at synth time.');
  }
}

/** The fsid of an S3 mirror exported at `/mirror/<name>`: from the fleet's construct path and that export path. */
export function mirrorSourceFsid(constructPath: string, m: MirrorSource): string {
  return mirrorFsid(constructPath, m.exportPath);
}

/** Whether the fleet has any mirror: `mirrorPaths` or `mirrorSources`. */
export function hasMirrors(o: MirrorOptions): boolean {
  return (o.mirrorPaths?.length ?? 0) + (o.mirrorSources?.length ?? 0) > 0;
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
  if (!hasMirrors(o)) return;
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
 * The `EFSC_MIRROR_S3*` parameters of the S3 mirrors (assets/lib/mirror.sh), only with some: their names (exported
 * at /mirror/<name>), fsids, `s3://bucket/prefix` URIs and buckets' regions, space-separated, in the same order.
 * A bucket or region may be a token (its parameter is then decoded at boot, and checked there).
 */
function mirrorSourceParameters(constructPath: string, o: MirrorOptions): Record<string, string> {
  const sources = o.mirrorSources ?? [];
  if (sources.length === 0) return {};
  return {
    EFSC_MIRROR_S3_NAMES: sources.map((m) => m.name).join(' '),
    EFSC_MIRROR_S3_FSIDS: sources.map((m) => mirrorSourceFsid(constructPath, m)).join(' '),
    EFSC_MIRROR_S3_URIS: sources.map((m) => `s3://${m.bucket.bucketName}/${m.prefix}`).join(' '),
    EFSC_MIRROR_S3_REGIONS: sources.map((m) => m.bucket.env.region).join(' '),
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
  if (!hasMirrors(o)) return { EFSC_MIRROR_PATHS: '' };
  return {
    EFSC_MIRROR_PATHS: paths.join(' '),
    ...mirrorSourceParameters(constructPath, o),
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
