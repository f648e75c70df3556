import { Duration, Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { DiskCache } from '../fscache/disk-cache';
import { DEFAULT_CULL } from '../fscache/fscache';
import { CommonInstanceOptions } from '../instance/options';
import { EFS_UTILS_TLS_PORT, MountHelper } from '../nfs/mount';
import { MountSource } from './mount-source';
import { ClientWarmingOptions } from './warming';

/**
 * cachefilesd's culling limits, in percent of the cache file system's blocks and files that are free.
 * Culling starts below `cull` and stops at `run`; caching stops below `stop` (0 <= stop < cull < run < 100).
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
 */
export interface CullLimits {
  /**
   * Free blocks, in percent, at which culling stops (cachefilesd's `brun`).
   *
   * @default 10
   */
  readonly blocksRun?: number;
  /**
   * Free blocks, in percent, below which culling starts (cachefilesd's `bcull`).
   *
   * @default 7
   */
  readonly blocksCull?: number;
  /**
   * Free blocks, in percent, below which caching stops until culling frees more (cachefilesd's `bstop`).
   *
   * @default 3
   */
  readonly blocksStop?: number;
  /**
   * Free files, in percent, at which culling stops (cachefilesd's `frun`).
   *
   * @default 10
   */
  readonly filesRun?: number;
  /**
   * Free files, in percent, below which culling starts (cachefilesd's `fcull`).
   *
   * @default 7
   */
  readonly filesCull?: number;
  /**
   * Free files, in percent, below which caching stops until culling frees more (cachefilesd's `fstop`).
   *
   * @default 3
   */
  readonly filesStop?: number;
}

/**
 * The defaults of `FsCacheClientOptions`, in one table: what a client launch template applies to what its props leave
 * out. Each entry is the `@default` of the option of the same name (test/defaults.test.ts).
 */
export const FS_CACHE_CLIENT_DEFAULTS = {
  diskCache: DiskCache.instanceStore(),
  cacheDirectory: '/var/cache/fscache',
  cacheTag: 'efscache',
  mountPoint: '/mnt/efs',
  mountHelper: MountHelper.EFS_UTILS,
  tlsPort: EFS_UTILS_TLS_PORT,
  mountTimeout: Duration.minutes(3),
  metrics: true,
  enaExpress: false,
  instanceType: 'm6id.xlarge',
  rootVolumeSize: Size.gibibytes(16),
} as const;

/** The defaults of `CullLimits` (cachefilesd's own), in percent. */
export const CULL_LIMITS_DEFAULTS: Readonly<Required<CullLimits>> = DEFAULT_CULL;

/** Options of an FS-Cache client launch template, shared with `CachedFileSystem.addClientLaunchTemplate`. */
export interface FsCacheClientOptions extends CommonInstanceOptions {
  /**
   * Where the disk cache lives: a RAID 0 of the instance store, or an EBS volume the template adds.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
   * @default DiskCache.instanceStore()
   */
  readonly diskCache?: DiskCache;

  /**
   * Where the cache file system is mounted (cachefilesd's `dir`), apart from `mountPoint` and not a system directory.
   * It is not mounted `noatime`, since cachefilesd culls by atime.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
   * @default '/var/cache/fscache'
   */
  readonly cacheDirectory?: string;

  /**
   * cachefilesd's cache tag.
   *
   * @default 'efscache'
   */
  readonly cacheTag?: string;

  /**
   * cachefilesd's culling limits.
   *
   * @default - 10/7/3 percent for blocks and files
   */
  readonly cullLimits?: CullLimits;

  /**
   * Where the file system is mounted on the client, apart from `cacheDirectory` and not a system directory.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
   * @default '/mnt/efs'
   */
  readonly mountPoint?: string;

  /**
   * NFS mount options. `fsc` is what turns FS-Cache on; dropping `hard` risks silent data errors and is warned.
   *
   * @default - fsc,nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport (plus tls,iam,tlsport
   * for amazon-efs-utils; for a cache fleet plus ro,nocto and the fleet's attribute and directory cache timers as
   * acregmin/acregmax/acdirmin/acdirmax, so a change on EFS shows after at most twice those timers; for a fleet that
   * serves NFSv3 (`clientNfsVersion: NfsVersion.NFS_V3`) nfsvers=3 instead of 4.1, plus nolock,proto=tcp,port=2049,mountproto=tcp,mountport=20048,mountvers=3)
   */
  readonly mountOptions?: string[];

  /**
   * How the client mounts EFS directly (a cache fleet is mounted over plain NFS, of the fleet's `clientNfsVersion`).
   *
   * @default MountHelper.EFS_UTILS
   */
  readonly mountHelper?: MountHelper;

  /**
   * The local port amazon-efs-utils' TLS proxy listens on (`MountHelper.EFS_UTILS` only).
   * FS-Cache keys its cache on the server address and port, so a fixed port keeps the cache across
   * remounts and reboots.
   *
   * @default 20049
   */
  readonly tlsPort?: number;

  /**
   * Longest time the first mount may take before the bootstrap gives up. Until then a refused or failed mount is
   * tried again (clients that boot beside a fleet whose nodes are still booting wait for them).
   *
   * @default Duration.minutes(3)
   */
  readonly mountTimeout?: Duration;

  /**
   * Mount read-only. Always true over a cache fleet (its export is read-only).
   *
   * @default - false for EFS, true for a cache fleet
   */
  readonly readOnly?: boolean;

  /**
   * Security group of the instances. Port 2049 to the file system or fleet is opened from it (and 20048 to an NFSv3
   * fleet, 2050 to a fleet whose mirrors are mounted).
   *
   * @default - a new security group with all outbound traffic allowed and no inbound rule
   */
  readonly securityGroup?: ec2.ISecurityGroup;

  /**
   * Whether the instances turn on ENA Express (AWS's SRD under TCP) for their flows to a cache fleet.
   * The fleet's nodes need it too (`CacheFleet`'s `enaExpress`), and `instanceType` must support it.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/sizing-and-cost.md#ena-express
   *
   * @default false
   */
  readonly enaExpress?: boolean;

  /**
   * Role of the instances. Granted EFS client access when mounting EFS directly.
   *
   * @default - a new role with SSM Session Manager access
   */
  readonly role?: iam.IRole;

  /**
   * Whether the instances publish FS-Cache and cache disk metrics through the CloudWatch agent, namespace CdkEfsCache.
   * They are granted `cloudwatch:PutMetricData` in that namespace only.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   * @default true
   */
  readonly metrics?: boolean;

  /**
   * Trees the first boot reads through before the instance counts as ready, bounded in time and size.
   * For a web server's code, through a mirror or the `fsc` mount.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md#warming-web-servers-that-start-warm
   * @default - no warming
   */
  readonly warming?: ClientWarmingOptions;
}

/** Properties of `FsCacheClientLaunchTemplate`. */
export interface FsCacheClientLaunchTemplateProps extends FsCacheClientOptions {
  /** The VPC of the instances. */
  readonly vpc: ec2.IVpc;
  /**
   * What the instances mount: `MountSource.fileSystem(fs)` (EFS directly) or
   * `MountSource.cacheFleet(fleet)` (and its mirrors).
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
   */
  readonly source: MountSource;
}
