import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { CacheFleet } from './cache-fleet/cache-fleet';
import { CacheOrigin } from './cache-fleet/cache-origin';
import { CacheFleetOptions } from './cache-fleet/options';
import { FsCacheClientLaunchTemplate, FsCacheClientOptions } from './client/fs-cache-client';
import { MountSource } from './client/mount-source';
import { CacheDashboard, CacheDashboardOptions } from './monitoring/cache-dashboard';
import { checkMountTargetsCover, OriginFileSystem, OriginFileSystemOptions } from './origin/origin-file-system';
import { propError } from './private/errors';
import { REMOVED_CACHED_FILE_SYSTEM_PROPS, refuseRemovedProps } from './private/removed-props';

/** What FS-Cache clients mount. */
export enum ClientSource {
  /** The cache fleet (read-only): the default when there is one. */
  CACHE_FLEET = 'cache-fleet',
  /** The EFS origin, directly. */
  ORIGIN = 'origin',
}

/** Options of `CachedFileSystem.addClientLaunchTemplate`. */
export interface ClientLaunchTemplateOptions extends FsCacheClientOptions {
  /**
   * What the clients mount.
   *
   * @default ClientSource.CACHE_FLEET when the construct has a cache fleet, else ClientSource.ORIGIN
   */
  readonly source?: ClientSource;
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
 * Amazon EFS with caches in front of it, in one construct.
 *
 * ## Resources Deployed
 * - The origin: an encrypted EFS file system with a TLS-only policy (see `OriginFileSystem`), or an imported one.
 * - With `cacheFleet`: the RAM cache tier (see `CacheFleet`), allowed to the origin on TCP 2049.
 * - With `addClientLaunchTemplate()`: FS-Cache client launch templates (see `FsCacheClientLaunchTemplate`).
 * - Unless `dashboard: false`: a CloudWatch dashboard and alarms (see `CacheDashboard`).
 *
 * ## Security Considerations
 * Every tier has its own security group; NFS (TCP 2049) is opened only between the tiers that talk to each other,
 * never to 0.0.0.0/0.
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
    if (props.dashboard === false && props.monitoring) {
      throw propError(this, 'monitoring', 'configures the dashboard and alarms, but dashboard is false. Remove one of them.');
    }
    if (props.dashboard !== false) {
      this.dashboard = new CacheDashboard(this, 'Dashboard', { ...props.monitoring, originFileSystem: this.originFileSystem, cacheFleet: this.cacheFleet });
    }
  }

  /**
   * Adds a launch template for FS-Cache clients that mount the cache fleet (default, when there is one) or the
   * origin, with TCP 2049 opened from them to it. Use it in an Auto Scaling group or with `ec2.Instance`.
   */
  public addClientLaunchTemplate(id: string, options: ClientLaunchTemplateOptions = {}): FsCacheClientLaunchTemplate {
    const source = options.source ?? (this.cacheFleet ? ClientSource.CACHE_FLEET : ClientSource.ORIGIN);
    if (source === ClientSource.CACHE_FLEET && !this.cacheFleet) {
      throw propError(this, 'source', 'ClientSource.CACHE_FLEET needs a cache fleet: give the cacheFleet prop, or mount the origin.');
    }
    const { source: _source, ...clientOptions } = options;
    void _source;
    const clients = new FsCacheClientLaunchTemplate(this, id, {
      ...clientOptions,
      vpc: this.vpc,
      source: source === ClientSource.CACHE_FLEET
        ? MountSource.cacheFleet(this.cacheFleet!)
        : MountSource.fileSystem(this.originFileSystem.fileSystem),
    });
    this.dashboard?.addClients(clients);
    return clients;
  }
}
