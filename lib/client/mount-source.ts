import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import { ICacheFleet } from '../cache-fleet/options';
import { efsDnsName, MountHelper } from '../nfs/mount';

/** Options of a cache fleet as a mount source (`MountSource.cacheFleet`): the fleet's mirrors to mount as well. */
export interface FleetSourceOptions {
  /**
   * Mirrors of the fleet to mount as well, read-only below `mirrorMountPoint`: a `Mirror.path` path or an S3 mirror's `/mirror/<name>`.
   * Applications read hot, rarely changing trees there, and everything else (and every write) through the main mount.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md
   * @default - no mirror is mounted
   */
  readonly mirrorPaths?: string[];

  /**
   * Where the mirrors are mounted: each at this path plus its path under the fleet's export. No mirror may be mounted
   * on or inside the client's `mountPoint` or `cacheDirectory`, or over them, or on or inside another mirror: synth
   * refuses what it can see, the instance checks again at boot (and refuses a `.` or `..` segment in any mount path).
   *
   * @default '/mnt/mirror'
   */
  readonly mirrorMountPoint?: string;

  /**
   * TCP connections per mount of the fleet's export and mirrors (Linux's `nconnect`, a whole number from 1 to 16).
   * One flow between two instances carries about 5 Gbit/s: raise it for clients with more bandwidth than that.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md#per-flow-limits
   * @default - no nconnect option (one connection): measured at only 1.2x for nconnect=4 so far, in an emulated lab
   */
  readonly nconnect?: number;
}

/** The defaults of `FleetSourceOptions` (test/defaults.test.ts). */
export const FLEET_SOURCE_DEFAULTS = {
  mirrorMountPoint: '/mnt/mirror',
} as const;

/**
 * What FS-Cache clients mount (`FsCacheClientLaunchTemplateProps.source`, `ClientLaunchTemplateOptions.source`): an EFS
 * file system directly, or a cache fleet (with its mirrors, if asked). One value, so a template cannot name both, or
 * neither, and mirrors can only be asked of a fleet.
 */
export class MountSource implements ec2.IConnectable {
  /**
   * Mount this EFS file system directly, read-write unless `readOnly`, with the clients' `mountHelper`.
   * The clients' role is granted EFS client access.
   */
  public static fileSystem(fileSystem: efs.IFileSystem): MountSource {
    return new MountSource(efsDnsName(fileSystem), '/', fileSystem.connections, fileSystem, undefined, {});
  }

  /**
   * Mount this cache fleet, read-only over plain NFS of the fleet's `clientNfsVersion` (NFSv4.1, or NFSv3).
   * The fleet is a `CacheFleet`, or one of another stack or app (`CacheFleet.fromCacheFleetAttributes`).
   */
  public static cacheFleet(fleet: ICacheFleet, options: FleetSourceOptions = {}): MountSource {
    return new MountSource(fleet.endpoint, fleet.exportPath, fleet.connections, undefined, fleet, options);
  }

  /** The NFS server the clients mount: the file system's DNS name, or the fleet's endpoint. */
  public readonly server: string;
  /** The path the clients mount from the server: `/` on EFS, the fleet's `exportPath`. */
  public readonly remotePath: string;
  /**
   * The file system's or the fleet's connections, which the clients are let into on the ports they use.
   * That is TCP 2049, and on a fleet mountd's 20048 for NFSv3 and the mirrors' 2050 when they mount them.
   */
  public readonly connections: ec2.Connections;
  /** The file system, when mounted directly. */
  public readonly efsFileSystem?: efs.IFileSystem;
  /** The cache fleet, when mounted through it. */
  public readonly fleet?: ICacheFleet;
  /**
   * The mount helper the source requires: `MountHelper.NFS` for a cache fleet; undefined for EFS, where the
   * client's `mountHelper` chooses.
   */
  public readonly mountHelper?: MountHelper;
  /** The fleet's mirrors to mount as well (`FleetSourceOptions.mirrorPaths`); empty for EFS. */
  public readonly mirrorPaths: string[];
  /**
   * Where the mirrors are mounted, as given (`FleetSourceOptions.mirrorMountPoint`); undefined when none was given.
   * The client then mounts them at '/mnt/mirror'.
   */
  public readonly mirrorMountPoint?: string;
  /**
   * TCP connections per mount of the fleet (`FleetSourceOptions.nconnect`), as given.
   *
   * @default - none: one connection (always so for EFS, which does not support nconnect)
   */
  public readonly nconnect?: number;

  private constructor(server: string, remotePath: string, connections: ec2.Connections, fileSystem: efs.IFileSystem | undefined,
    fleet: ICacheFleet | undefined, options: FleetSourceOptions) {
    this.server = server;
    this.remotePath = remotePath;
    this.connections = connections;
    this.efsFileSystem = fileSystem;
    this.fleet = fleet;
    this.mountHelper = fleet ? MountHelper.NFS : undefined;
    this.mirrorPaths = [...options.mirrorPaths ?? []];
    this.mirrorMountPoint = options.mirrorMountPoint;
    this.nconnect = options.nconnect;
  }
}
