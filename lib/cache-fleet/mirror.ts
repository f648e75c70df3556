import { Duration, Size, Token } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { normalS3Prefix } from '../private/paths';
import { MIRROR_ROOT, mirrorFsid } from './mirror-paths';

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
export enum MirrorKind {
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

export const MIRRORING_DEFAULTS = {
  interval: Duration.minutes(1),
  size: Size.gibibytes(1),
  syncTimeout: Duration.minutes(10),
  syncWorkers: 8,
  fullSyncInterval: Duration.hours(1),
} as const;
