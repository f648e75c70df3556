import { CfnResource, Reference, Tokenization } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { ICacheFleet } from '../cache-fleet/options';
import { fleetMountOptions, fleetPorts, mirrorExportOf, mirrorMountOptions, nconnectOptions } from '../client/fleet-mount';
import { NFS_MIRROR_PORT } from '../nfs/ports';
import { propError } from '../private/errors';

/** Options of a cache fleet's export as a container volume (`FleetExport.cacheFleet`). */
export interface CacheFleetExportOptions {
  /**
   * Mount with `fsc`, so that the host keeps a disk cache of what its containers read through the fleet.
   * Only the host's cachefilesd makes it work: without one running, the kernel mounts the export uncached.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
   * @default false
   */
  readonly fsCache?: boolean;
}

/** The defaults of `CacheFleetExportOptions` (test/defaults.test.ts). */
export const CACHE_FLEET_EXPORT_DEFAULTS = {
  fsCache: false,
} as const;

/** What a container volume mounts, resolved for one construct: the server, path, options and ports. */
export interface ResolvedFleetExport {
  readonly server: string;
  readonly remotePath: string;
  readonly mountOptions: string[];
  readonly ports: number[];
}

/**
 * What a container volume mounts from a cache fleet: its read-only export, or one of its mirrors.
 * The mount options are those of the fleet's EC2 clients (`FsCacheClientLaunchTemplate`).
 */
export class FleetExport implements ec2.IConnectable {
  /**
   * The fleet's export (`exportPath`), read-only, with the options and timers of the fleet's EC2 clients.
   * A fleet that serves NFSv3 is mounted over NFSv3, with mountd's port named.
   */
  public static cacheFleet(fleet: ICacheFleet, options: CacheFleetExportOptions = {}): FleetExport {
    return new FleetExport(fleet, undefined, options.fsCache ?? CACHE_FLEET_EXPORT_DEFAULTS.fsCache);
  }

  /**
   * One of the fleet's mirrors, read-only over NFSv4.1 on the mirrors' port (2050), without `fsc`.
   * `mirrorPath` names it as `FleetSourceOptions.mirrorPaths` does: a `Mirror.path` path or an S3 mirror's `/mirror/<name>`.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md
   */
  public static mirror(fleet: ICacheFleet, mirrorPath: string): FleetExport {
    return new FleetExport(fleet, mirrorPath, false);
  }

  /** The cache fleet mounted. */
  public readonly fleet: ICacheFleet;
  /**
   * The mirror mounted, as `FleetExport.mirror` named it.
   *
   * @default - none: the fleet's export is mounted
   */
  public readonly mirrorPath?: string;
  /** Whether the export is mounted with `fsc`. */
  public readonly fsCache: boolean;
  /** The fleet's connections, which the volume's clients are let into on the ports the mount uses. */
  public readonly connections: ec2.Connections;

  private constructor(fleet: ICacheFleet, mirrorPath: string | undefined, fsCache: boolean) {
    this.fleet = fleet;
    this.mirrorPath = mirrorPath;
    this.fsCache = fsCache;
    this.connections = fleet.connections;
  }

  /**
   * The server, path, options and ports of the mount, checked for the construct that mounts it (`prop` names the
   * construct's prop that holds this export, for errors).
   *
   * @internal
   */
  public _resolve(scope: IConstruct, prop: string): ResolvedFleetExport {
    const fleet = this.fleet;
    if (this.mirrorPath === undefined) {
      return { server: fleet.endpoint, remotePath: fleet.exportPath, mountOptions: fleetMountOptions(fleet, this.fsCache), ports: fleetPorts(fleet) };
    }
    const m = mirrorExportOf(scope, prop, fleet, this.mirrorPath);
    return { server: fleet.endpoint, remotePath: m.exportPath, mountOptions: mirrorMountOptions(), ports: [NFS_MIRROR_PORT] };
  }
}

/**
 * A source as given, checked: `Invalid <prop>` when it is missing or not a `FleetExport` (from JavaScript). Its mount
 * options end with `nconnect=<n>` when the construct's `nconnect` prop gives one (`Invalid nconnect` for a bad value).
 */
export function checkFleetExport(scope: IConstruct, prop: string, source: FleetExport | undefined, nconnect?: number): ResolvedFleetExport {
  if (!(source instanceof FleetExport)) {
    throw propError(scope, prop, 'must be FleetExport.cacheFleet(fleet) or FleetExport.mirror(fleet, mirrorPath).');
  }
  const resolved = source._resolve(scope, prop);
  return { ...resolved, mountOptions: [...resolved.mountOptions, ...nconnectOptions(scope, 'nconnect', nconnect)] };
}

/** A resource of the app and one of its attributes (`Ref` for its reference). */
export interface ResourceAttribute {
  readonly resourceType: string;
  readonly attribute: string;
  readonly resource: CfnResource;
}

/**
 * The resource of the app and the attribute a deploy-time value is, when it is wholly one (`Ref` for a resource's own
 * reference, else the `Fn::GetAtt` attribute's name), even across stacks; undefined for a literal, for a parameter, an
 * import, an SSM value or any other intrinsic, and for a string of which a token is only a part. Such an attribute is
 * written by the service that makes the resource, so its format is that service's (an EKS cluster's endpoint, a load
 * balancer's DNS name), whatever the template's parameters hold.
 */
export function resourceAttributeOf(value: string): ResourceAttribute | undefined {
  const fragments = Tokenization.reverseString(value);
  if (fragments.length !== 1 || fragments.tokens.length !== 1) return undefined;
  const token = fragments.tokens[0];
  if (!(token instanceof Reference) || !(token.target instanceof CfnResource)) return undefined;
  return { resourceType: token.target.cfnResourceType, attribute: token.displayName, resource: token.target };
}
