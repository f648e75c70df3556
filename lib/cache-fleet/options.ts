import { Duration, Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { CommonInstanceOptions } from '../instance/options';
import { NfsVersion } from '../nfs/nfs-version';
import { CacheOrigin } from '../origin/cache-origin';
import { Capacity } from './capacity';
import { FanOut } from './fan-out';
import { MirrorOptions } from './mirror';
import { NodeDiskCache } from './node-disk-cache';

/*
 * The options of a cache fleet and how clients see one (its own or one of another stack): the types a fleet, its
 * validation, its import and its clients share, and the defaults they apply, each written once.
 */

/** Settings of the cache nodes' nfsd and kernel (`CacheFleetOptions.tuning`). */
export interface TuningOptions {
  /**
   * nfsd threads per node.
   *
   * @default - 2 per vCPU, at least 8 (128 on a c7gn.16xlarge); 64 when the type's vCPU count is not known (with
   * a synth warning)
   */
  readonly nfsdThreads?: number;

  /**
   * Read-ahead of the origin mount on the nodes.
   *
   * @default Size.mebibytes(8)
   */
  readonly readAhead?: Size;

  /**
   * sunrpc TCP slot table entries (concurrent RPCs per connection to the origin).
   *
   * @default 128
   */
  readonly sunrpcSlotTableEntries?: number;

  /**
   * vm.vfs_cache_pressure: low values keep inodes and dentries cached, which metadata-heavy work wants.
   *
   * @default 1
   */
  readonly vfsCachePressure?: number;
}

/** Warming of the cache nodes (`CacheFleetOptions.warming`): what a node reads before it serves, and how often again. */
export interface WarmingOptions {
  /** Paths under `exportPath` read in parallel before a node starts serving, so the first client read hits RAM. */
  readonly paths: string[];

  /**
   * Parallel readers when warming.
   *
   * @default 16
   */
  readonly workers?: number;

  /**
   * How often a node reads the paths again, bringing back what the page cache evicted. Whole minutes, at least 5.
   *
   * @default Duration.hours(6)
   */
  readonly rewarmInterval?: Duration;
}

/**
 * Options of a cache fleet, shared by `CacheFleet` and `CachedFileSystem`'s `cacheFleet` prop.
 */
export interface CacheFleetOptions extends CommonInstanceOptions, MirrorOptions {
  /**
   * How many nodes the fleet has: a fixed number (`Capacity.nodes(n)`) or an elastic group (`Capacity.elastic()`).
   * An elastic group grows and shrinks with the bytes the nodes send, behind the load balancer.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/elastic-fleet.md
   * @default Capacity.nodes(2)
   */
  readonly capacity?: Capacity;

  /**
   * How clients reach the nodes: Route 53 names over the nodes' stable addresses, or an internal Network Load Balancer.
   * An elastic fleet (`Capacity.elastic()`) needs the load balancer, which adds and drains its nodes.
   *
   * @default - `FanOut.networkLoadBalancer()` with `Capacity.elastic()`, `FanOut.route53()` otherwise
   */
  readonly fanOut?: FanOut;

  /**
   * Subnets of the nodes, used round robin; every AZ needs a mount target of an EFS origin.
   * In isolated subnets the nodes need VPC endpoints, which a synth warning names.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md#isolated-subnets-the-vpc-endpoints-each-tier-needs
   *
   * @default - the VPC's private subnets with egress (or isolated, if it has none)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Path in the origin that the nodes mount and re-export: in EFS, or below an NFS server's `exportPath`.
   *
   * @default '/'
   */
  readonly originPath?: string;

  /**
   * Where nodes mount the origin, which is also the path clients mount from a node (`node:/efs`). Not a system
   * directory a mount would hide (/bin, /boot, /dev, /etc, /home, /lib, /lib64, /opt, /proc, /root, /run, /sbin, /snap,
   * /sys, /tmp, /usr and /var, /usr/bin, /usr/include, /usr/lib, /usr/lib64, /usr/libexec, /usr/local, /usr/sbin,
   * /usr/share, /var/cache, /var/lib, /var/lib/nfs, /var/lock, /var/log, /var/run, /var/spool, /var/tmp) or a parent
   * of one, nor inside /boot, /dev, /etc, /proc, /run, /sys, /var/lib/nfs, /var/lock or /var/run; nor the nodes'
   * own /mirror (with `mirrors`) or /var/cache/fscache (with `nodeDiskCache`), inside them or containing them.
   *
   * @default '/efs'
   */
  readonly exportPath?: string;

  /**
   * Addresses allowed to mount the export: IPv4 or IPv6 CIDR blocks with no host bits set.
   * Blocks that together cover every address are refused; network access is governed by the security groups.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   *
   * @default - the VPC's CIDR block
   */
  readonly clientCidrs?: string[];

  /**
   * How long nodes cache file attributes of the origin (acregmin = acregmax). Long timers suit read-mostly data:
   * a change on EFS shows through a node after at most this long.
   *
   * @default Duration.minutes(10)
   */
  readonly attributeCacheTimeout?: Duration;

  /**
   * How long nodes cache directory attributes and listings of the origin (acdirmin = acdirmax).
   *
   * @default Duration.minutes(10)
   */
  readonly directoryCacheTimeout?: Duration;

  /**
   * Whether nodes revalidate a file with the origin on every open (close-to-open consistency). Off (`nocto`) suits
   * read-only or rarely changing data, which is what a cache tier is for.
   *
   * @default false
   */
  readonly closeToOpenConsistency?: boolean;

  /**
   * The NFS version clients mount the fleet with: `NfsVersion.NFS_V4_1` or `NfsVersion.NFS_V3`.
   * NFSv3 lets a client re-open what it holds without asking the node; NFSv4.1 passes every open to the origin.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md#nfsv3-or-nfsv41-between-clients-and-nodes
   *
   * @default NfsVersion.NFS_V4_1
   */
  readonly clientNfsVersion?: NfsVersion;

  /**
   * Whether the nodes turn on ENA Express (AWS's SRD under TCP) on their network interfaces, the stable one included.
   * It raises one TCP flow's limit between instances that both support and enable it; `instanceType` must support it.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/sizing-and-cost.md#ena-express
   *
   * @default false
   */
  readonly enaExpress?: boolean;

  /**
   * A second cache level on each node's NVMe instance store, for working sets larger than RAM.
   *
   * @default - NodeDiskCache.instanceStore() when the node type has NVMe instance store, else NodeDiskCache.none()
   */
  readonly nodeDiskCache?: NodeDiskCache;

  /**
   * Settings of the nodes' nfsd and kernel: nfsd threads, the origin mount's read-ahead, sunrpc slots, and
   * vm.vfs_cache_pressure.
   *
   * @default - each setting's own default (`TuningOptions`)
   */
  readonly tuning?: TuningOptions;

  /**
   * Paths under `exportPath` that a node reads in parallel before it serves, and again on a timer.
   * The first client read then hits RAM.
   *
   * @default - no warming
   */
  readonly warming?: WarmingOptions;

  /**
   * The data a node is expected to hold in RAM. A node type with less memory gets a synth-time warning.
   *
   * @default - not checked
   */
  readonly workingSetSize?: Size;

  /**
   * Longest time the first mount of the origin may take before the node gives up and does not serve.
   * From 10 seconds to 60 minutes.
   *
   * @default Duration.minutes(3)
   */
  readonly mountTimeout?: Duration;

  /**
   * How long CloudFormation waits for each node's signal that it serves, from 5 minutes to 12 hours. On an elastic
   * fleet it is also the nodes' warm-up and launch lifecycle hook timeout, and at most 60 minutes.
   *
   * @default Duration.minutes(20)
   */
  readonly signalTimeout?: Duration;

  /**
   * Whether the nodes publish their nfsd, page cache and mirror metrics through the CloudWatch agent.
   * Off, nothing is installed and the dashboard's node widgets stay empty.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   *
   * @default true
   */
  readonly metrics?: boolean;
}

/** Where a fleet exports one of its mirrors (`Mirror.path` or `Mirror.s3`), as clients mount it: `mirrorExports`. */
export interface MirrorExport {
  /**
   * What clients name the mirror by: the mirrored node path under `exportPath`, or an S3 mirror's `exportPath`.
   * For example `/efs/app`, or `/mirror/site` for a `Mirror.s3`.
   */
  readonly path: string;
  /** The path clients mount from the fleet, e.g. `/mirror/app`. */
  readonly exportPath: string;
  /**
   * The mirror's fsid, the same on every node. A `CacheFleet` always sets it; clients never use it, so a fleet
   * imported with `fromCacheFleetAttributes` may leave it out.
   *
   * @default - not known (an imported fleet's mirror given without it)
   */
  readonly fsid?: string;
}

/** Properties of `CacheFleet`. */
export interface CacheFleetProps extends CacheFleetOptions {
  /** The VPC of the nodes. */
  readonly vpc: ec2.IVpc;

  /**
   * What the nodes cache: an EFS file system (`CacheOrigin.efs()`) or an NFS server (`CacheOrigin.nfsServer()`).
   * The file system may be created anywhere or imported.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/origins.md
   */
  readonly origin: CacheOrigin;
}

/**
 * A cache fleet as its clients see it: the name and path they mount, their security group, timers and mirrors.
 * A `CacheFleet`, or one defined elsewhere (`CacheFleet.fromCacheFleetAttributes`).
 */
export interface ICacheFleet extends IConstruct, ec2.IConnectable {
  /** The name clients mount: every node (Route 53 round robin) or the load balancer. */
  readonly endpoint: string;
  /** The path clients mount from the fleet. */
  readonly exportPath: string;
  /** How long nodes cache the origin's file attributes: a change on EFS shows through a node after at most this. */
  readonly attributeCacheTimeout: Duration;
  /** How long nodes cache the origin's directory attributes and listings. */
  readonly directoryCacheTimeout: Duration;
  /** Where the fleet exports each of its mirrors (`mirrors`): the paths and fsids clients mount. */
  readonly mirrorExports: MirrorExport[];
  /** The NFS version clients mount the fleet with: `NfsVersion.NFS_V4_1` or `NfsVersion.NFS_V3`. */
  readonly clientNfsVersion: NfsVersion;
  /** Whether the nodes have ENA Express on (`enaExpress`), which clients with it need too. */
  readonly enaExpress: boolean;
}

/**
 * What a client needs to know of a cache fleet defined in another stack or app (`CacheFleet.fromCacheFleetAttributes`).
 * Values known at synth are checked with the rules a `CacheFleet` applies to its own (`Invalid <attribute>: ...`);
 * tokens (an import of the fleet stack's outputs, an SSM parameter) are checked by the clients at boot.
 */
export interface CacheFleetAttributes {
  /** The name clients mount: the fleet's `endpoint`, a DNS name or an IPv4 address. */
  readonly endpoint: string;
  /**
   * The security group clients are let through: the fleet's `connections.securityGroups[0]`.
   * It is the nodes' group with Route 53, the load balancer's with an NLB.
   */
  readonly securityGroup: ec2.ISecurityGroup;
  /**
   * The path clients mount: the fleet's `exportPath`, an absolute path other than `/`, without `.` or `..` segments.
   *
   * @default '/efs'
   */
  readonly exportPath?: string;
  /**
   * The fleet's `attributeCacheTimeout`.
   *
   * @default Duration.minutes(10)
   */
  readonly attributeCacheTimeout?: Duration;
  /**
   * The fleet's `directoryCacheTimeout`.
   *
   * @default Duration.minutes(10)
   */
  readonly directoryCacheTimeout?: Duration;
  /**
   * The fleet's `mirrorExports`, copied whole, for clients that mount its mirrors.
   * Any of them may be a token: a client computes a mirror's mount point from its `exportPath` at boot.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/getting-started.md#a-fleet-of-another-stack-or-app-and-stacks-apart
   *
   * @default - none
   */
  readonly mirrorExports?: MirrorExport[];
  /**
   * The fleet's `clientNfsVersion`: `NfsVersion.NFS_V4_1` or `NfsVersion.NFS_V3`. With `NfsVersion.NFS_V3` clients
   * are let into `securityGroup` on TCP 2049 and on `CacheFleet.MOUNTD_PORT`.
   *
   * @default NfsVersion.NFS_V4_1
   */
  readonly clientNfsVersion?: NfsVersion;
  /**
   * The fleet's `enaExpress`: whether its nodes have ENA Express on. Clients with `enaExpress` of a fleet without it
   * get a synth warning.
   *
   * @default false
   */
  readonly enaExpress?: boolean;
}

/**
 * The defaults of a fleet's options, in one table: a `CacheFleet` applies them to what its props leave out, and a
 * fleet imported by its attributes (`CacheFleet.fromCacheFleetAttributes`) to what the attributes leave out, so
 * that clients of either mount the same path with the same timers. Each entry is the `@default` of the option of
 * the same name.
 */
export const CACHE_FLEET_DEFAULTS = {
  capacity: Capacity.nodes(2),
  fanOut: FanOut.route53(),
  /** The `fanOut` of an elastic fleet (`Capacity.elastic()`). */
  elasticFanOut: FanOut.networkLoadBalancer(),
  originPath: '/',
  exportPath: '/efs',
  attributeCacheTimeout: Duration.minutes(10),
  directoryCacheTimeout: Duration.minutes(10),
  clientNfsVersion: NfsVersion.NFS_V4_1,
  enaExpress: false,
  closeToOpenConsistency: false,
  tuning: { readAhead: Size.mebibytes(8), sunrpcSlotTableEntries: 128, vfsCachePressure: 1 },
  warming: { workers: 16, rewarmInterval: Duration.hours(6) },
  mountTimeout: Duration.minutes(3),
  signalTimeout: Duration.minutes(20),
  instanceType: 'c7gn.16xlarge',
  rootVolumeSize: Size.gibibytes(16),
  metrics: true,
} as const;
