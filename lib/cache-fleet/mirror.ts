import * as crypto from 'crypto';
import { Annotations, Duration, Size, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { IConstruct } from 'constructs';
import { InstanceTypeFacts } from '../instance/instance-types';
import { seconds } from '../nfs/mount';
import { describeValue, knownAtSynth, propError, wholeSeconds } from '../private/errors';
import { DOT_SEGMENT_RE, normalS3Prefix, PATH_RE, S3_PREFIX_RE } from '../private/paths';
import { grantReadPrefix } from '../private/s3-grant';

/** Where a node keeps the copies of its mirrors (`mirroring.storage`). */
export enum MirrorStorage {
  /**
   * A RAM-backed file system (tmpfs) of `mirroring.size`, beside the page cache of the re-export.
   * The copies take that much of the node's memory at most.
   */
  MEMORY = 'MEMORY',
  /**
   * An ext4 file system of `mirroring.size` on the nodes' instance store, beside the disk cache (`nodeDiskCache`).
   * It holds trees larger than the memory a node can spare, with hot files still served from the page cache.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  INSTANCE_STORE = 'INSTANCE_STORE',
}

/** Options of `Mirror.s3`. */
export interface S3MirrorOptions {
  /**
   * The name of the mirror under `/mirror`: the nodes export it at `/mirror/<name>`, which clients mount.
   *
   * A relative path of letters, digits and `. _ - /`, apart from every other mirror's export; changing it changes the fsid.
   *
   * @default - the prefix without its trailing `/`; required for the whole bucket (prefix '')
   */
  readonly name?: string;
}

/** The kinds of mirror, as `Mirror`'s factories make them. */
enum MirrorKind {
  PATH = 'PATH',
  S3 = 'S3',
}

/**
 * A tree that every cache node copies locally and serves read-only: an origin path (`Mirror.path`) or an S3 prefix (`Mirror.s3`).
 *
 * The nodes make the path mirrors' roots first, in their order, then the S3 mirrors': reordering mirrors of one kind
 * gives them new file handles, and clients then mount them again.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md
 */
export class Mirror {
  /**
   * A node path under the fleet's `exportPath`, exported read-only at `/mirror/<path under exportPath>`.
   *
   * @param path the node path, for example `'/efs/app'` (exported at `/mirror/app`); no mirror path inside another
   */
  public static path(path: string): Mirror {
    return new Mirror(MirrorKind.PATH, path, undefined, undefined, undefined);
  }

  /**
   * Every object under `prefix` in `bucket`, copied by each node and served read-only at `/mirror/<name>`.
   *
   * The nodes' role may list the bucket under the prefix and read the objects under it, and nothing else of the bucket.
   *
   * @param bucket the bucket, made anywhere or imported
   * @param prefix key prefix, for example `'site/'` (a trailing `/` is added), of letters, digits and `. _ = + - /`
   *   without an empty, `.` or `..` component; '' for the whole bucket (then `name` is required)
   */
  public static s3(bucket: s3.IBucket, prefix: string, options: S3MirrorOptions = {}): Mirror {
    return new Mirror(MirrorKind.S3, undefined, bucket, prefix, options.name);
  }

  /**
   * The node path mirrored, for a path mirror.
   *
   * @default - none: an S3 mirror
   */
  public readonly nodePath?: string;

  /**
   * The bucket, for an S3 mirror.
   *
   * @default - none: a path mirror
   */
  public readonly bucket?: s3.IBucket;

  /**
   * The key prefix as listed ('' or ending in `/`), for an S3 mirror.
   *
   * @default - none: a path mirror
   */
  public readonly prefix?: string;

  /** @internal */
  public readonly _kind: MirrorKind;

  /**
   * The key prefix as given, for an S3 mirror.
   *
   * @internal
   */
  public readonly _givenPrefix?: string;

  /**
   * The name under /mirror as given, for an S3 mirror.
   *
   * @internal
   */
  public readonly _givenName?: string;

  private constructor(kind: MirrorKind, path: string | undefined, bucket: s3.IBucket | undefined, prefix: string | undefined,
    name: string | undefined) {
    this._kind = kind;
    this.nodePath = path;
    this.bucket = bucket;
    this._givenPrefix = prefix;
    if (prefix !== undefined) this.prefix = Token.isUnresolved(prefix) ? prefix : normalS3Prefix(prefix);
    this._givenName = name;
  }

  /**
   * The name under /mirror of an S3 mirror: as given, or the prefix without its trailing `/`.
   *
   * @default - none: a path mirror is named by its path under the fleet's `exportPath`
   */
  public get name(): string | undefined {
    if (this._kind !== MirrorKind.S3) return undefined;
    return this._givenName ?? (this.prefix ?? '').replace(/\/$/, '');
  }

  /**
   * Where the nodes export an S3 mirror and clients mount it from: `/mirror/<name>`.
   *
   * @default - none: a path mirror's export follows the fleet's `exportPath`
   */
  public get exportPath(): string | undefined {
    return this._kind === MirrorKind.S3 ? `${MIRROR_ROOT}/${this.name}` : undefined;
  }
}

/** An S3 mirror, as the fleet's code reads it: bucket, prefix and name known to be there. */
export interface S3Mirror {
  readonly bucket: s3.IBucket;
  readonly givenPrefix: string;
  readonly prefix: string;
  readonly givenName?: string;
  readonly name: string;
  readonly exportPath: string;
}

/** The node paths of the path mirrors, in their order: they give the mirrors their fsids and root inodes. */
export function pathMirrors(o: MirrorOptions): string[] {
  return (o.mirrors ?? []).filter((m) => m._kind === MirrorKind.PATH).map((m) => m.nodePath!);
}

/** The S3 mirrors, in their order (`EFSC_MIRROR_S3_*`). */
export function s3Mirrors(o: MirrorOptions): S3Mirror[] {
  return (o.mirrors ?? []).filter((m) => m._kind === MirrorKind.S3).map((m) => ({
    bucket: m.bucket!, givenPrefix: m._givenPrefix!, prefix: m.prefix!, givenName: m._givenName, name: m.name!, exportPath: m.exportPath!,
  }));
}

/**
 * Mirror options of a cache fleet: trees that the nodes serve from a local copy instead of the re-export.
 * Clients get read delegations, so they re-open and re-read hot files with no request at all.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md
 */
export interface MirrorOptions {
  /**
   * Trees every node copies to a local file system and serves read-only: `Mirror.path('/efs/app')` (at `/mirror/app`)
   * or `Mirror.s3(bucket, 'site/')` (at `/mirror/site`).
   *
   * @default - no mirror
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md
   */
  readonly mirrors?: Mirror[];

  /**
   * How the nodes keep their mirrors: how often and how long they sync, where the copies live and their size.
   *
   * @default - each option's default
   */
  readonly mirroring?: MirroringOptions;
}

/** How the nodes of a cache fleet keep its mirrors (the fleet's `mirroring`). */
export interface MirroringOptions {
  /**
   * Time from the end of one sync of the mirrors to the start of the next, in whole seconds.
   *
   * From 10 seconds to 24 hours.
   *
   * @default Duration.minutes(1)
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly interval?: Duration;

  /**
   * Size of the file system that holds every mirror of a node, in whole MiB (1 MiB to 16 TiB).
   *
   * A tree that outgrows it is not copied further, and synth refuses a size the node type cannot hold.
   *
   * @default Size.gibibytes(1)
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly size?: Size;

  /**
   * Where the nodes keep the copies: in memory or on the instance store, beside the disk cache (`nodeDiskCache`).
   *
   * Changing it gives the mirrors new file handles, and clients then mount them again.
   *
   * @default - `MirrorStorage.INSTANCE_STORE` when the nodes keep the disk cache (`nodeDiskCache`), else
   * `MirrorStorage.MEMORY`
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly storage?: MirrorStorage;

  /**
   * Longest time one try of a sync of one mirror may take, in whole seconds (10 seconds to 24 hours).
   *
   * Each try walks the whole tree first, so the timeout must exceed the walk.
   *
   * @default Duration.minutes(10)
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly syncTimeout?: Duration;

  /**
   * Copy jobs a sync runs at a time: a path mirror's rsync jobs, or an S3 mirror's object fetches.
   *
   * Copying small files over NFS is latency-bound, so jobs in flight are what makes a copy fast.
   *
   * @default 8
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly syncWorkers?: number;

  /**
   * A file under each path mirror's root (for example `'.published'`) that your publisher updates after each publish.
   *
   * While it is unchanged a sync does not walk the mirror, and costs the origin one stat.
   *
   * @default - no marker: every sync walks every mirror
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly changeMarker?: string;

  /**
   * With `changeMarker`: the longest time between two walks of a mirror, whatever its marker says (up to 7 days).
   *
   * It bounds how late a change published without updating the marker is copied.
   *
   * @default Duration.hours(1)
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md#mirroring-options
   */
  readonly fullSyncInterval?: Duration;
}

/**
 * The root under which every node exports its mirrors (`MIRROR_ROOT/<path under exportPath>`). The nodes' and the
 * clients' scripts take it as `EFSC_MIRROR_ROOT`.
 */
export const MIRROR_ROOT = '/mirror';

/** The network namespace of the mirrors' own nfsd on a node, which the node's script takes as `EFSC_MIRROR_NAMESPACE`. */
export const MIRROR_NAMESPACE = 'efs-cache-mirror';

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

/** The longest time between two walks of a mirror with a change marker, by default (`mirroring.fullSyncInterval`). */

/**
 * Whether `m` may be a change marker (`mirroring.changeMarker`): a relative path of letters, digits, . _ - and /, not
 * empty, no leading or trailing /, no empty, . or .. component (the nodes' check, assets/lib/mirror.sh, takes the same).
 */
export function isChangeMarker(m: string): boolean {
  return /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(m) && !m.split('/').some((c) => c === '.' || c === '..');
}

/** Throws `Invalid <prop>` for mirror options that cannot work (`diskCache`: the fleet's `nodeDiskCache`, resolved). */
export function validateMirrorOptions(scope: IConstruct, o: MirrorOptions, exportPath: string, diskCache: boolean): void {
  (o.mirrors ?? []).forEach((given, i) => {
    // From JavaScript, a 0.1 mirrorPaths entry (a string) or MirrorSource given in mirrors.
    if (typeof given !== 'object' || given === null || !Object.values(MirrorKind).includes((given as Mirror)._kind)) {
      throw propError(scope, 'mirrors', `mirrors[${i}] must be made by Mirror.path(path) or Mirror.s3(bucket, prefix), got ` +
        `${describeValue(given, scope)}.`);
    }
  });
  const paths = pathMirrors(o);
  for (const p of paths) {
    knownAtSynth(scope, 'mirrors', p, 'each mirror is an export of its own');
    if (!isMirrorPath(p)) {
      throw propError(scope, 'mirrors', `'${p}' is not an absolute path (letters, digits, . _ - /, no trailing / or //, no . or .. segment).`);
    }
    if (!p.startsWith(`${exportPath}/`)) {
      throw propError(scope, 'mirrors', `'${p}' is not under the export (exportPath '${exportPath}'); mirror paths are node paths below it, e.g. '${exportPath}/app'.`);
    }
    const outer = paths.find((q) => q !== p && p.startsWith(`${q}/`));
    if (outer) throw propError(scope, 'mirrors', `'${p}' is inside '${outer}': a tree is mirrored once.`);
  }
  if (new Set(paths).size !== paths.length) throw propError(scope, 'mirrors', 'lists a path twice.');
  validateS3Mirrors(scope, o, exportPath);
  const sources = s3Mirrors(o);
  const m = o.mirroring ?? {};
  const needsPaths = (name: keyof MirroringOptions, given: unknown) => {
    if (given !== undefined && paths.length === 0 && sources.length === 0) {
      throw propError(scope, `mirroring.${name}`, 'needs mirrors: there is nothing to mirror.');
    }
  };
  needsPaths('interval', m.interval);
  needsPaths('size', m.size);
  needsPaths('storage', m.storage);
  needsPaths('syncTimeout', m.syncTimeout);
  needsPaths('syncWorkers', m.syncWorkers);
  if (m.changeMarker !== undefined && paths.length === 0 && sources.length > 0) {
    throw propError(scope, 'mirroring.changeMarker', 'needs a path mirror (Mirror.path): the marker is a file of the origin\'s mirrored trees, ' +
      'and S3 mirrors are listed at every sync.');
  }
  needsPaths('changeMarker', m.changeMarker);
  needsPaths('fullSyncInterval', m.fullSyncInterval);
  const marker = m.changeMarker;
  if (marker !== undefined) {
    knownAtSynth(scope, 'mirroring.changeMarker', marker);
    if (!isChangeMarker(marker)) {
      throw propError(scope, 'mirroring.changeMarker', `'${marker}' is not a path relative to each mirror's root (letters, digits, . _ - /, ` +
        'not empty, no leading or trailing /, no empty, . or .. component), e.g. \'.published\'.');
    }
  }
  if (m.fullSyncInterval !== undefined && marker === undefined) {
    throw propError(scope, 'mirroring.fullSyncInterval', 'applies only with mirroring.changeMarker: without a marker every sync walks every mirror.');
  }
  wholeSeconds(scope, 'mirroring.fullSyncInterval', m.fullSyncInterval, 10, 7 * 86400, '10 seconds to 7 days');
  const w = m.syncWorkers;
  knownAtSynth(scope, 'mirroring.syncWorkers', w);
  if (w !== undefined && (!Number.isInteger(w) || w < 1 || w > 64)) {
    throw propError(scope, 'mirroring.syncWorkers', `must be a whole number from 1 to 64, got ${w}.`);
  }
  if (m.storage === MirrorStorage.INSTANCE_STORE && !diskCache) {
    throw propError(scope, 'mirroring.storage', 'INSTANCE_STORE needs the second cache level on the nodes (nodeDiskCache, on by ' +
      'default for types with NVMe instance store such as c7gd, c6gd, i4i): the mirrors live beside the disk cache.');
  }
  wholeSeconds(scope, 'mirroring.interval', m.interval, 10, 86400, '10 seconds to 24 hours');
  wholeSeconds(scope, 'mirroring.syncTimeout', m.syncTimeout, 10, 86400, '10 seconds to 24 hours');
  if (marker !== undefined) {
    const interval = m.interval ?? MIRRORING_DEFAULTS.interval;
    const full = m.fullSyncInterval ?? MIRRORING_DEFAULTS.fullSyncInterval;
    if (full.toSeconds() < interval.toSeconds()) {
      throw propError(scope, 'mirroring.fullSyncInterval', `must be at least mirroring.interval (${interval.toHumanString()}), got ${full.toHumanString()}.`);
    }
  }
  if (m.size) {
    knownAtSynth(scope, 'mirroring.size', m.size);
    const mib = m.size.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(mib) || mib < 1 || mib > 16 * 1024 * 1024) {
      throw propError(scope, 'mirroring.size', `must be whole MiB from 1 MiB to 16 TiB, got ${mib} MiB.`);
    }
  }
}

/**
 * Throws `Invalid mirrors` for S3 mirrors that cannot work: a prefix or name that is not a literal, a prefix
 * outside the seeder's rule or with a `.` or `..` component, a bad name, the whole bucket without a name, and export
 * paths that meet another mirror's (the same, or one inside the other: clients mount them side by side).
 */
function validateS3Mirrors(scope: IConstruct, o: MirrorOptions, exportPath: string): void {
  const exports = pathMirrors(o).map((p) => ({ at: mirrorExportPath(exportPath, p), what: `the mirror of '${p}'` }));
  (o.mirrors ?? []).forEach((given, i) => {
    if (given._kind !== MirrorKind.S3) return;
    const m = s3Mirrors({ mirrors: [given] })[0];
    const at = `mirrors[${i}]`;
    knownAtSynth(scope, 'mirrors', m.givenPrefix, `${at}.prefix: the nodes' role may read only under it`);
    if (!S3_PREFIX_RE.test(m.prefix) || DOT_SEGMENT_RE.test(m.prefix)) {
      throw propError(scope, 'mirrors', `${at}: the S3 prefix '${m.givenPrefix}' may hold only letters, digits and . _ = + - / ` +
        '(no empty, . or .. component), e.g. \'site/\'.');
    }
    // S3 keys are at most 1,024 bytes: under a longer listed prefix no object can exist, and the mirror would stay empty.
    if (m.prefix.length > 1023) {
      throw propError(scope, 'mirrors', `${at}: the S3 prefix is ${m.prefix.length} characters with its trailing /; S3 keys ` +
        'are at most 1,024, so no object can be under it. Use a prefix of at most 1,022 characters.');
    }
    if (m.givenName === undefined && m.prefix === '') {
      throw propError(scope, 'mirrors', `${at}: a mirror of the whole bucket needs a name (Mirror.s3(bucket, '', { name: 'site' })): ` +
        'it is exported at /mirror/<name>.');
    }
    knownAtSynth(scope, 'mirrors', m.name, `${at}.name: each mirror is an export of its own`);
    if (!isChangeMarker(m.name)) {
      throw propError(scope, 'mirrors', `${at}: the name '${m.name}' is not a relative path (letters, digits, . _ - /, not empty, ` +
        'no leading or trailing /, no empty, . or .. component), e.g. \'site\'.');
    }
    const mine = m.exportPath;
    for (const other of exports) {
      const how = mine === other.at ? 'is' : other.at.startsWith(`${mine}/`) ? 'contains' : mine.startsWith(`${other.at}/`) ? 'is inside' : undefined;
      if (how) {
        throw propError(scope, 'mirrors', `${at}: its export '${mine}' ${how} ${how === 'is' ? 'the export of' : 'that of'} ${other.what}, ` +
          `'${other.at}': each mirror is exported apart from the others; give it another name.`);
      }
    }
    exports.push({ at: mine, what: `mirrors[${i}]` });
  });
}

/**
 * Lets `role` (the nodes') read each S3 mirror: `s3:ListBucket` on its bucket with an `s3:prefix` condition for its
 * prefix (none for the whole bucket), `s3:GetObject` on `<prefix>*`, and decrypt with the bucket's key if it has one;
 * nothing else. The objects' wildcard is acknowledged to cdk-nag: their keys are not known at synth.
 */
export function grantS3Mirrors(role: iam.IRole, o: MirrorOptions): void {
  for (const m of s3Mirrors(o)) {
    grantReadPrefix(role, m.bucket, m.prefix,
      // The reason is in the template (the cdk-nag acknowledgement): it keeps the 0.1 prop's name, so the template stays the same.
      'The nodes copy every object under the S3 mirror\'s prefix (mirrorSources); their keys are not known at synth time.');
  }
}

/** The fsid of an S3 mirror exported at `/mirror/<name>`: from the fleet's construct path and that export path. */
export function s3MirrorFsid(constructPath: string, m: S3Mirror): string {
  return mirrorFsid(constructPath, m.exportPath);
}

/** Whether the fleet has any mirror. */
export function hasMirrors(o: MirrorOptions): boolean {
  return (o.mirrors?.length ?? 0) > 0;
}

/** Where the mirrors of a fleet live: `mirroring.storage`, or its default. */
export function mirrorStorageOf(o: MirrorOptions, diskCache: boolean): MirrorStorage {
  return o.mirroring?.storage ?? (diskCache ? MirrorStorage.INSTANCE_STORE : MirrorStorage.MEMORY);
}

/**
 * The part of the instance store a node's file system loses to ext4 (inode tables: 1/64 of it; the journal, up to
 * 1 GiB; the RAID's metadata), at most: the boot check compares `mirroring.size` with half of the file system, which is
 * this much smaller than the disks AWS lists.
 */
const EXT4_OVERHEAD = 0.03;

/**
 * Checks `mirroring.size` (or its default) against the node type, where its name tells the memory or instance store
 * (`facts`): in memory (a tmpfs), refuses a size not below the type's RAM, which leaves nothing for the page cache
 * that is the cache (and the tmpfs, filled, would drive the node out of memory), and warns above half of it. On the
 * instance store, refuses what each node refuses at boot (assets/lib/mirror-storage.sh: more than half of the disk cache's
 * file system), where it is certain: more than half of the disks; and warns within `EXT4_OVERHEAD` of that.
 */
export function checkMirrorSizeFits(scope: IConstruct, o: MirrorOptions, diskCache: boolean, facts: InstanceTypeFacts, type: string): void {
  if (!hasMirrors(o)) return;
  const size = o.mirroring?.size ?? MIRRORING_DEFAULTS.size;
  const bytes = size.toBytes({ rounding: SizeRoundingBehavior.NONE });
  const gib = bytes / 2 ** 30;
  const shown = `${o.mirroring?.size ? '' : 'the default '}${+gib.toFixed(3)} GiB`;
  if (mirrorStorageOf(o, diskCache) === MirrorStorage.MEMORY) {
    if (facts.memoryGiB === undefined) return;
    if (gib >= facts.memoryGiB) {
      throw propError(scope, 'mirroring.size', `${shown} in memory (MirrorStorage.MEMORY) is not less than the ${facts.memoryGiB} GiB ` +
        `of RAM of ${type}: a tmpfs that size leaves nothing for the page cache, which is the cache, and filled it drives ` +
        `the node out of memory. Choose at most ${facts.memoryGiB / 2} GiB (half the RAM), a type with more memory, or ` +
        'MirrorStorage.INSTANCE_STORE on a type with NVMe instance store.');
    }
    if (gib > facts.memoryGiB / 2) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:mirrorSizeOverHalfMemory', `mirroring.size: ${shown} in memory is more than ` +
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
    throw propError(scope, 'mirroring.size', `${shown} on the instance store (MirrorStorage.INSTANCE_STORE) is more than half of ` +
      `the ${facts.instanceStoreGB} GB of ${type}: every node would refuse to serve at boot (the mirrors may take at most ` +
      `half of the disk cache's file system; the rest stays the disk cache). Choose at most ${most} GiB, or a type with ` +
      'more instance store.');
  }
  if (2 * bytes > store * (1 - EXT4_OVERHEAD)) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:mirrorSizeNearHalfInstanceStore', `mirroring.size: ${shown} is within ` +
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
export const MIRRORING_DEFAULTS = {
  interval: Duration.minutes(1),
  size: Size.gibibytes(1),
  syncTimeout: Duration.minutes(10),
  syncWorkers: 8,
  fullSyncInterval: Duration.hours(1),
} as const;
