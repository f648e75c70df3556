import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { CacheFleet } from './cache-fleet/cache-fleet';
import { CacheFleetOptions } from './cache-fleet/options';
import { FsCacheClientLaunchTemplate } from './client/fs-cache-client';
import { MountSource } from './client/mount-source';
import { FsCacheClientOptions } from './client/options';
import { CacheDashboard, CacheDashboardOptions } from './monitoring/cache-dashboard';
import { CacheOrigin } from './origin/cache-origin';
import { checkMountTargetsCover, OriginFileSystem, OriginFileSystemOptions } from './origin/origin-file-system';
import { describeValue, propError } from './private/errors';
import { REMOVED_CACHED_FILE_SYSTEM_PROPS, refuseRemovedProps } from './private/removed-props';

/** Options of `CachedFileSystem.addClientLaunchTemplate`. */
export interface ClientLaunchTemplateOptions extends FsCacheClientOptions {
  /**
   * What the clients mount: this construct's cache fleet (with its mirrors, if asked) or its origin file system.
   *
   * @default - `MountSource.cacheFleet()` of the construct's cache fleet when it has one, else
   * `MountSource.fileSystem()` of its origin file system
   */
  readonly source?: MountSource;
}

/**
 * Properties of `CachedFileSystem`.
 */
export interface CachedFileSystemProps {
  /** The VPC of every tier. */
  readonly vpc: ec2.IVpc;

  /**
   * Subnets of the file system's mount targets, and the default subnets of the other tiers.
   *
   * @default - the VPC's private subnets with egress (or isolated, if it has none)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * The origin file system: options of a new one, or `{ fileSystem }` to use an existing one.
   *
   * @default - a new encrypted EFS file system with the defaults of `OriginFileSystemOptions`
   */
  readonly originFileSystem?: OriginFileSystemOptions;

  /**
   * A RAM cache tier in front of the origin: nodes that re-export it read-only from their page cache.
   *
   * @default - no cache fleet
   */
  readonly cacheFleet?: CacheFleetOptions;

  /**
   * Whether to create a CloudWatch dashboard with alarms (see `CacheDashboard`).
   *
   * @default true
   */
  readonly dashboard?: boolean;

  /**
   * Options of the dashboard and its alarms (an SNS topic, thresholds).
   *
   * @default - the defaults of `CacheDashboardOptions`
   */
  readonly monitoring?: CacheDashboardOptions;
}

/**
 * Amazon EFS with caches in front of it: the origin file system, a cache fleet, client templates and a dashboard.
 * Every tier has its own security group, and NFS is opened only between the tiers that talk to each other.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/getting-started.md
 */
export class CachedFileSystem extends Construct {
  /** The origin tier: the EFS file system every other tier reads. */
  public readonly originFileSystem: OriginFileSystem;

  /** The VPC of every tier. */
  public readonly vpc: ec2.IVpc;

  /** The RAM cache tier, when `cacheFleet` is given. */
  public readonly cacheFleet?: CacheFleet;

  /** The dashboard and alarms, unless `dashboard: false`. */
  public readonly dashboard?: CacheDashboard;

  constructor(scope: Construct, id: string, props: CachedFileSystemProps) {
    super(scope, id);
    refuseRemovedProps(this, props, REMOVED_CACHED_FILE_SYSTEM_PROPS);
    this.vpc = props.vpc;
    this.originFileSystem = new OriginFileSystem(this, 'Origin', {
      ...props.originFileSystem,
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
    });
    if (props.cacheFleet) {
      const fleetSubnets = props.cacheFleet.vpcSubnets ?? props.vpcSubnets;
      this.cacheFleet = new CacheFleet(this, 'CacheFleet', {
        ...props.cacheFleet,
        vpcSubnets: fleetSubnets,
        vpc: props.vpc,
        origin: CacheOrigin.efs(this.originFileSystem.fileSystem),
      });
      checkMountTargetsCover(this.originFileSystem, this.cacheFleet.nodes.map((n) => n.subnet), 'cacheFleet.vpcSubnets');
    }
    const dashboard = props.dashboard ?? CACHED_FILE_SYSTEM_DEFAULTS.dashboard;
    if (!dashboard && props.monitoring) {
      throw propError(this, 'monitoring', 'configures the dashboard and alarms, but dashboard is false. Remove one of them.');
    }
    if (dashboard) {
      this.dashboard = new CacheDashboard(this, 'Dashboard', { ...props.monitoring, originFileSystem: this.originFileSystem, cacheFleet: this.cacheFleet });
    }
  }

  /**
   * Adds a launch template for FS-Cache clients of this construct's cache fleet or origin file system, which lets
   * them in. Use it in an Auto Scaling group or with `ec2.Instance`.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/getting-started.md
   */
  public addClientLaunchTemplate(id: string, options: ClientLaunchTemplateOptions = {}): FsCacheClientLaunchTemplate {
    const source = checkClientSource(this, options.source)
      ?? (this.cacheFleet ? MountSource.cacheFleet(this.cacheFleet) : MountSource.fileSystem(this.originFileSystem.fileSystem));
    const clients = new FsCacheClientLaunchTemplate(this, id, { ...options, vpc: this.vpc, source });
    this.dashboard?.addClients(clients);
    return clients;
  }
}

/**
 * The `source` given to `addClientLaunchTemplate`, checked: a `MountSource` (from JavaScript, which has no types, any
 * other value is refused) that mounts this construct's own fleet or file system, whose dashboard the clients join.
 */
function checkClientSource(cfs: CachedFileSystem, source: MountSource | undefined): MountSource | undefined {
  if (source === undefined || source === null) return undefined;
  const fleet = 'MountSource.cacheFleet(cachedFileSystem.cacheFleet)';
  const fileSystem = 'MountSource.fileSystem(cachedFileSystem.originFileSystem.fileSystem)';
  if (!(source instanceof MountSource)) {
    throw propError(cfs, 'source', `must be ${fleet} or ${fileSystem}, got ${describeValue(source, cfs)}. ` +
      `ClientSource.CACHE_FLEET is ${fleet}, ClientSource.ORIGIN is ${fileSystem}.`);
  }
  if (source.fleet && !cfs.cacheFleet) {
    throw propError(cfs, 'source', 'mounts a cache fleet, but this CachedFileSystem has none: give the cacheFleet prop, ' +
      `or mount the origin file system (${fileSystem}). For a fleet of its own, use an FsCacheClientLaunchTemplate.`);
  }
  if (source.fleet && source.fleet !== cfs.cacheFleet) {
    throw propError(cfs, 'source', `mounts a cache fleet that is not this CachedFileSystem's: give ${fleet}. ` +
      'For another fleet, use an FsCacheClientLaunchTemplate.');
  }
  if (source.efsFileSystem && source.efsFileSystem !== cfs.originFileSystem.fileSystem) {
    throw propError(cfs, 'source', `mounts a file system that is not this CachedFileSystem's: give ${fileSystem}. ` +
      'For another file system, use an FsCacheClientLaunchTemplate.');
  }
  return source;
}

/** The defaults of `CachedFileSystemProps` (test/defaults.test.ts). */
export const CACHED_FILE_SYSTEM_DEFAULTS = {
  dashboard: true,
} as const;
