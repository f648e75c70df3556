import * as crypto from 'crypto';
import { Duration, Lazy, Size, Stack, Tags, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct, IConstruct } from 'constructs';
import { renderScript, validateUserCommands, withUserCommands } from '../bootstrap/render';
import { encryptedRootVolume, grantSignal, instanceRole } from '../private/instance';
import { CacheNode } from './cache-node';
import { DEFAULT_INSTANCE_TYPE, NODE_CACHE_DIR, nodeDiskCacheOn, validateCacheFleetOptions } from './validation';
import { DEFAULT_CULL, diskCacheParameters, INSTANCE_STORE_MODEL } from '../private/fscache';
import { propError } from '../private/errors';
import { allowFromConsumerSide } from '../private/connections';
import { acknowledgeWildcardResource } from '../private/nag';
import { exportClients } from '../private/cidr';
import { defaultSubnets, ENDPOINT_NEEDS, warnIfIsolated } from '../private/subnets';
import { checkInstanceTypeName, defaultImageArchitecture, instanceTypeFacts, warnIfDefaultTypeNotOffered, warnUnknownNodeSize } from '../private/instance-types';
import { amazonLinux2023, checkEfsMount, efsDnsName, MountHelper, RECOMMENDED_NFS_OPTIONS, seconds, systemdTimeSpan } from '../private/mount';
import { FanOut, FanOutMode, FanOutOptions } from './fan-out';
import { MirrorOptions, mirrorExportPath, mirrorFsid, mirrorParameters } from './mirror';
import { validateCacheFleetAttributes } from './attributes';
import { autoScalingGroupMetric, groupMetric, instanceMetrics, METRIC_NAMESPACE, NODE_METRICS, PUT_METRIC_DATA_REASON, sumOfMetrics } from '../monitoring/metrics';
import { NFS_MOUNTD_PORT, NFS_PORT } from '../private/constants';

/**
 * The NFS version clients mount a cache fleet with (`clientProtocol`). Either way the nodes mount the origin over
 * NFSv4.1 (EFS serves nothing else) and serve the mirrors over NFSv4.1 (their delegations).
 */
export enum ClientProtocol {
  /**
   * NFSv4.1 only. Every open of a file a client re-opens reaches the node as an OPEN, and through the re-export the
   * origin: the node spares the origin the reads, not the opens (docs/benchmarks.md, item 9).
   */
  NFS_V4_1 = 'nfs4.1',
  /**
   * NFSv3 (and NFSv4.1 for the mirrors). NFSv3 has no OPEN: a client that holds a file's attributes (the fleet's
   * timers, `nocto`) re-opens and re-reads it without asking the node, and the node reads it without asking the
   * origin (docs/benchmarks.md, item 9). An NFSv3 file handle holds at most 64 bytes and a re-export's is the origin's
   * plus about 22, so each node checks before it serves, with an NFSv3 mount of its own export, that the origin's
   * handles fit, and does not serve (one FATAL line, the node's FAILURE signal) if they do not. Clients mount with
   * `nolock` (the export is read-only) and fixed ports, NFS on 2049 and mountd on 20048 (`CacheFleet.MOUNTD_PORT`),
   * so the security groups open those two and nothing needs rpcbind. Route 53 fan-out only.
   */
  NFS_V3 = 'nfs3',
}

/**
 * Options of a cache fleet, shared by `CacheFleet` and `CachedFileSystem`'s `cacheFleet` prop.
 */
export interface CacheFleetOptions extends FanOutOptions, MirrorOptions {
  /**
   * Number of cache nodes, 1 to 128. Each node is its own Auto Scaling group of one, spread round robin over the
   * subnets, launched from the fleet's one launch template; 128 nodes with the dashboard make 440 of
   * CloudFormation's 500 resources per stack.
   *
   * @default 2
   */
  readonly nodeCount?: number;

  /**
   * Instance type of the nodes. Memory is the cache; network bandwidth is the throughput. arm64 or x86_64 follows
   * the type.
   *
   * @default c7gn.16xlarge (Graviton3, 64 vCPU, 128 GiB, 200 Gbps), which some regions do not offer (README lists
   * them; a stack in such a region gets a synth warning naming an alternative)
   */
  readonly instanceType?: ec2.InstanceType;

  /**
   * The nodes' image. The bootstrap supports Amazon Linux 2023, Debian and Ubuntu. Where the image's architecture
   * shows at synth, it must match `instanceType`'s (EC2 refuses to launch the instances otherwise): in the name of
   * the SSM parameter that holds its id (`MachineImage.latestAmazonLinux2023({ cpuType })` and the other Amazon Linux
   * helpers, `fromSsmParameter`, `resolveSsmParameterAtLaunch`: `arm64`/`aarch64` or `x86_64`/`amd64`), or in the
   * `architecture` filter of `MachineImage.lookup`. Other images (an AMI map, a parameter name that is a token) are
   * not checked.
   *
   * @default - Amazon Linux 2023 with its default kernel, for the instance type's architecture, via SSM parameter
   */
  readonly machineImage?: ec2.IMachineImage;

  /**
   * Subnets of the nodes (round robin). Every AZ needs an origin mount target. In isolated subnets the nodes need
   * VPC endpoints (packages, CloudFormation, EC2, CloudWatch, SSM), which a synth warning names.
   *
   * @default - the VPC's private subnets with egress (or isolated, if it has none)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Path in the origin file system that the nodes mount and re-export.
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
   * own /mirror (with `mirrorPaths`) or /var/cache/fscache (with `nodeDiskCache`), inside them or containing them.
   *
   * @default '/efs'
   */
  readonly exportPath?: string;

  /**
   * Addresses allowed to mount the export (NFS export access list): IPv4 or IPv6 CIDR blocks (`10.0.0.0/16`,
   * `fd00::/64`) with no host bits set. A /0 in any spelling, and blocks that together cover every IPv4 or IPv6
   * address, are refused. Tokens are checked by the nodes at boot (prefix lengths 1-32 or 1-128). Network access is
   * governed separately by the security groups (`connections`).
   *
   * @default - the VPC's CIDR block
   */
  readonly clientCidrs?: string[];

  /**
   * How nodes mount the origin.
   *
   * @default MountHelper.EFS_UTILS (TLS, IAM), which a file system created by this library requires
   */
  readonly originMountHelper?: MountHelper;

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
   * The NFS version clients mount the fleet with (see `ClientProtocol`). NFSv3 lets a client re-open what it holds
   * without asking the node, where NFSv4.1 passes every open through to the origin; each node checks that the
   * origin's file handles fit NFSv3 before it serves.
   *
   * @default ClientProtocol.NFS_V4_1
   */
  readonly clientProtocol?: ClientProtocol;

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

  /**
   * A second cache level on each node: the node's origin mount keeps what it reads on a RAID 0 of the node type's
   * NVMe instance store too (FS-Cache), so a working set larger than RAM is still served from the node, and a file
   * the page cache evicted is read from local disk, not from EFS. Instance store is lost on stop/start (the cache
   * is rebuilt empty) and kept across reboots. A node that cannot build it does not serve.
   *
   * @default - on when `instanceType` has NVMe instance store (c7gd, c6gd, m6id, i4i and the like), off otherwise
   */
  readonly nodeDiskCache?: boolean;

  /**
   * The model string of the devices the nodes' disk cache is built on, as `/sys/block/<device>/device/model` shows
   * it: change it only for images or hardware that name instance store otherwise.
   *
   * @default 'Amazon EC2 NVMe Instance Storage'
   */
  readonly nodeDiskCacheDeviceModel?: string;

  /**
   * Paths under `exportPath` read in parallel before a node starts serving, so the first client read hits RAM.
   *
   * @default - no warming
   */
  readonly warmPaths?: string[];

  /**
   * Parallel readers when warming.
   *
   * @default 16
   */
  readonly warmWorkers?: number;

  /**
   * How often a node reads the warm paths again, bringing back what the page cache evicted. Whole minutes.
   *
   * @default Duration.hours(6) when warmPaths are given
   */
  readonly rewarmInterval?: Duration;

  /**
   * The data a node is expected to hold in RAM. A node type with less memory gets a synth-time warning.
   *
   * @default - not checked
   */
  readonly workingSetSize?: Size;

  /**
   * Longest time the first mount of the origin may take before the node gives up (and does not serve).
   *
   * @default Duration.minutes(3)
   */
  readonly originMountTimeout?: Duration;

  /**
   * How long CloudFormation waits for each node to report that it serves.
   *
   * @default Duration.minutes(20)
   */
  readonly bootstrapTimeout?: Duration;

  /**
   * Root volume size of the nodes (encrypted gp3).
   *
   * @default Size.gibibytes(16)
   */
  readonly rootVolumeSize?: Size;

  /**
   * Publish the nodes' nfsd and page cache metrics (namespace CdkEfsCache, dimension Group) through the CloudWatch
   * agent, which the nodes install on Amazon Linux 2023, with a collector that reads /proc every minute. Grants
   * `cloudwatch:PutMetricData` in that namespace only. Off: nothing is installed and the dashboard's node widgets
   * stay empty.
   *
   * @default true
   */
  readonly metrics?: boolean;
}

/** A subtree that the nodes serve from a local copy (`mirrorPaths`). */
export interface CacheFleetMirror {
  /** The node path under `exportPath` that is mirrored, e.g. `/efs/app`. */
  readonly path: string;
  /** The path clients mount from the fleet, e.g. `/mirror/app`. */
  readonly exportPath: string;
  /** The mirror's fsid, the same on every node. */
  readonly fsid: string;
}

/** Properties of `CacheFleet`. */
export interface CacheFleetProps extends CacheFleetOptions {
  /** The VPC of the nodes. */
  readonly vpc: ec2.IVpc;

  /** The origin: an EFS file system, created anywhere or imported. */
  readonly fileSystem: efs.IFileSystem;
}


/**
 * A cache fleet as its clients see it: the name and path they mount, the security group they are let through, the
 * attribute caching the nodes apply, and the mirrors. A `CacheFleet`, or one defined elsewhere
 * (`CacheFleet.fromCacheFleetAttributes`).
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
  /** The subtrees served from a local copy on every node (`mirrorPaths`), with the paths clients mount. */
  readonly mirrors: CacheFleetMirror[];
  /** The NFS version clients mount the fleet with. */
  readonly clientProtocol: ClientProtocol;
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
   * The security group clients are let through on TCP 2049: the fleet's `connections.securityGroups[0]` (the nodes'
   * group with Route 53, the load balancer's with an NLB).
   */
  readonly securityGroup: ec2.ISecurityGroup;
  /**
   * The path clients mount: the fleet's `exportPath` (an absolute path other than /, without . or .. segments).
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
   * The fleet's `mirrors`, for clients that mount them (`mirrorPaths`), copied whole: each `path` under `exportPath`,
   * its `exportPath` where the fleet serves it (`/mirror/<path under exportPath>`), its `fsid` a UUID; no path twice
   * or inside another. Any of them may be a token: a client computes a mirror's mount point from its `exportPath`
   * at boot.
   *
   * @default - none
   */
  readonly mirrors?: CacheFleetMirror[];
  /**
   * The fleet's `clientProtocol`. With `ClientProtocol.NFS_V3` clients are let into `securityGroup` on TCP 2049 and
   * on `CacheFleet.MOUNTD_PORT`.
   *
   * @default ClientProtocol.NFS_V4_1
   */
  readonly clientProtocol?: ClientProtocol;
}

/** The mirror metrics the nodes publish (`mirrorPaths`), for `CacheFleet.metricMirror`. */
export enum MirrorMetric {
  /** Syncs of the mirrors that failed (sum per period): the node kept serving the last copy. */
  SYNC_FAILURES = 'MirrorSyncFailures',
  /** Seconds since the oldest mirror of a node was last synced (maximum over the nodes): the staleness a client may see. */
  AGE_SECONDS = 'MirrorAgeSeconds',
  /** Seconds the last sync of a node's mirrors took (maximum). */
  SYNC_SECONDS = 'MirrorSyncSeconds',
  /** Files and directories the last sync of a node's mirrors walked (maximum). */
  FILES_WALKED = 'MirrorFilesWalked',
  /** 1 when the last sync of a node's mirrors ran out of space in its mirrors' file system (maximum): raise mirrorSize. */
  FULL = 'MirrorFull',
  /** Bytes held by a node's mirrors (maximum). */
  BYTES = 'MirrorBytes',
  /** NFS requests the syncs of the mirrors sent to the origin (sum per period). */
  ORIGIN_OPS = 'MirrorOriginOps',
}

/** A fleet defined elsewhere, known by its attributes. */
class ImportedCacheFleet extends Construct implements ICacheFleet {
  public readonly endpoint: string;
  public readonly exportPath: string;
  public readonly attributeCacheTimeout: Duration;
  public readonly directoryCacheTimeout: Duration;
  public readonly mirrors: CacheFleetMirror[];
  public readonly clientProtocol: ClientProtocol;
  public readonly connections: ec2.Connections;

  constructor(scope: Construct, id: string, attrs: CacheFleetAttributes) {
    super(scope, id);
    validateCacheFleetAttributes(this, attrs);
    this.endpoint = attrs.endpoint;
    this.exportPath = attrs.exportPath ?? '/efs';
    this.attributeCacheTimeout = attrs.attributeCacheTimeout ?? Duration.minutes(10);
    this.directoryCacheTimeout = attrs.directoryCacheTimeout ?? Duration.minutes(10);
    this.mirrors = attrs.mirrors ?? [];
    this.clientProtocol = attrs.clientProtocol ?? ClientProtocol.NFS_V4_1;
    this.connections = new ec2.Connections({ securityGroups: [attrs.securityGroup], defaultPort: ec2.Port.tcp(NFS_PORT) });
  }
}

/**
 * A RAM cache tier: EC2 nodes that mount EFS and re-export it read-only over NFSv4.1, so their page cache serves
 * hot reads, reached through Route 53 names or an internal Network Load Balancer.
 *
 * ## Resources Deployed
 * - One launch template for every node (IMDSv2 required, instance metadata tags on, encrypted gp3 root volume, the
 *   bootstrap as user data, then any commands added to `userData`).
 * - Per node (`CacheNode`): an Auto Scaling group of one that replaces a failed instance and tags it with the node's
 *   identity; in Route 53 mode also a network interface whose address the node keeps across replacements.
 * - One security group for all nodes (no inbound rule until peers are allowed through `connections`; outbound
 *   HTTPS for packages, SSM and CloudFormation, and NFS to the origin), and one IAM role (SSM Session Manager,
 *   read-only EFS client access, attaching the nodes' own interfaces, signalling its own stack).
 * - The fan-out (see `FanOut`).
 *
 * ## Security Considerations
 * The export is read-only, NFSv4.1 only, `root_squash`, limited to `clientCidrs`, with the same `fsid` on every
 * node. There is no SSH: use Session Manager. Writes go to EFS directly, never through the cache tier.
 */
export class CacheFleet extends Construct implements ICacheFleet, iam.IGrantable {
  /** The namespace of the metrics the nodes and clients publish through the CloudWatch agent. */
  public static readonly METRIC_NAMESPACE: string = METRIC_NAMESPACE;

  /**
   * The TCP port of the nodes' rpc.mountd when the fleet serves NFSv3 (`ClientProtocol.NFS_V3`): clients other than
   * `FsCacheClientLaunchTemplate`s need it as well as 2049 (`peer.connections.allowTo(fleet, ec2.Port.tcp(CacheFleet.MOUNTD_PORT))`,
   * made from the peer's side so that a peer in a later stack than the fleet makes no dependency cycle).
   */
  public static readonly MOUNTD_PORT: number = NFS_MOUNTD_PORT;

  /**
   * A fleet defined in another stack or app, for clients (`FsCacheClientLaunchTemplate`'s
   * `source: MountSource.cacheFleet(fleet)`): they mount its endpoint and are let into its security group on TCP 2049.
   */
  public static fromCacheFleetAttributes(scope: Construct, id: string, attrs: CacheFleetAttributes): ICacheFleet {
    return new ImportedCacheFleet(scope, id, attrs);
  }

  /** Where clients connect: the nodes' security group (Route 53) or the load balancer's (NLB), port 2049. */
  public readonly connections: ec2.Connections;
  /** The nodes' security group. */
  public readonly securityGroup: ec2.SecurityGroup;
  /** The nodes' IAM role. */
  public readonly role: iam.Role;
  /** The nodes' role, to grant them more (`bucket.grantRead(fleet)`). */
  public readonly grantPrincipal: iam.IPrincipal;
  /** The nodes. */
  public readonly nodes: CacheNode[];
  /**
   * The one launch template of every node (IMDSv2 required, instance metadata tags on, encrypted gp3 root volume,
   * the bootstrap as user data). Each node's group tags its instances with what makes them that node.
   */
  public readonly launchTemplate: ec2.LaunchTemplate;
  /**
   * Commands of your own for the nodes: added here (`fleet.userData.addCommands(...)`), they run once, on a node's
   * first boot, after the library's bootstrap succeeded and the node signalled CloudFormation, so they never decide
   * whether a node serves. A failing command is in the instance's cloud-init log.
   */
  public readonly userData: ec2.UserData;
  /** Estimated size of the nodes' user data in bytes (tokens counted generously), without commands added to `userData`. */
  public readonly userDataBytes: number;
  /** Whether the nodes keep a second cache level on their instance store (`nodeDiskCache`). */
  public readonly diskCache: boolean;
  /** The fan-out in front of the nodes. */
  public readonly fanOut: FanOut;
  /** The name clients mount: every node (Route 53 round robin) or the load balancer. */
  public readonly endpoint: string;
  /** The path clients mount from the fleet. */
  public readonly exportPath: string;
  /** The export's fsid: derived from this construct's path, identical on every node (a UUID; a number with NFSv3). */
  public readonly fsid: string;
  /** nfsd threads per node. */
  public readonly nfsdThreads: number;
  /** The nodes' instance type. */
  public readonly instanceType: ec2.InstanceType;
  /** How long nodes cache the origin's file attributes: a change on EFS shows through a node after at most this. */
  public readonly attributeCacheTimeout: Duration;
  /** How long nodes cache the origin's directory attributes and listings. */
  public readonly directoryCacheTimeout: Duration;
  /** The `Group` dimension of the metrics the nodes publish (namespace CdkEfsCache): this construct's path. */
  public readonly metricsGroup: string;
  /** The subtrees served from a local copy on every node (`mirrorPaths`), with the paths clients mount. */
  public readonly mirrors: CacheFleetMirror[];
  /** The NFS version clients mount the fleet with (`clientProtocol`). */
  public readonly clientProtocol: ClientProtocol;
  /**
   * With `warmPaths`: an SSM Command document that warms the nodes on demand (it runs the nodes'
   * `/usr/local/sbin/efs-cache-warm`, the same warming as at boot and on the re-warm timer), for example after new
   * data landed: `aws ssm send-command --document-name <warmDocument.ref> --targets
   * Key=tag:cdk-efs-cache:fleet,Values=<fleet.node.addr>`.
   */
  public readonly warmDocument?: ssm.CfnDocument;

  constructor(scope: Construct, id: string, props: CacheFleetProps) {
    super(scope, id);
    const stack = Stack.of(this);
    checkInstanceTypeName(this, props.instanceType);
    this.instanceType = props.instanceType ?? new ec2.InstanceType(DEFAULT_INSTANCE_TYPE);
    warnIfDefaultTypeNotOffered(this, DEFAULT_INSTANCE_TYPE, props.instanceType);
    const facts = instanceTypeFacts(this.instanceType);
    validateCacheFleetOptions(this, props, facts);

    const nodeCount = props.nodeCount ?? 2;
    this.attributeCacheTimeout = props.attributeCacheTimeout ?? Duration.minutes(10);
    this.directoryCacheTimeout = props.directoryCacheTimeout ?? Duration.minutes(10);
    this.exportPath = props.exportPath ?? '/efs';
    this.nfsdThreads = props.nfsdThreads ?? (facts.vcpus !== undefined ? Math.max(8, 2 * facts.vcpus) : 64);
    warnUnknownNodeSize(this, this.instanceType, facts, props.nfsdThreads === undefined ? this.nfsdThreads : undefined);
    this.clientProtocol = props.clientProtocol ?? ClientProtocol.NFS_V4_1;
    const v3 = this.clientProtocol === ClientProtocol.NFS_V3;
    // NFSv3: a number (4 bytes in every file handle) rather than a UUID (16), room for a longer origin handle in 64.
    this.fsid = fsidFor(this.node.path, props.originPath ?? '/', v3);
    this.diskCache = nodeDiskCacheOn(props, facts);
    this.metricsGroup = this.node.path;
    this.mirrors = (props.mirrorPaths ?? []).map((p) => ({ path: p, exportPath: mirrorExportPath(this.exportPath, p), fsid: mirrorFsid(this.node.path, p) }));
    const mode = props.fanOut ?? FanOutMode.ROUTE53;

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'EFS cache nodes: NFS (TCP 2049) from allowed clients only',
      allowAllOutbound: false,
    });
    this.securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS: packages, SSM, CloudFormation signal');
    // Both rules (out of the nodes, into the file system's group) in this fleet's stack when the file system is of
    // another: the fleet depends on the file system, never the other way round.
    allowFromConsumerSide(this.securityGroup, props.fileSystem, ec2.Port.tcp(NFS_PORT), 'NFS from the EFS cache nodes');

    this.role = instanceRole(this, 'EFS cache nodes: SSM Session Manager, read-only EFS client, own interface and stack signal');
    this.grantPrincipal = this.role;
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({
      actions: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientRootAccess'],
      resources: [props.fileSystem.fileSystemArn],
    }));

    const subnets = props.vpc.selectSubnets(props.vpcSubnets ?? defaultSubnets(props.vpc)).subnets;
    if (subnets.length === 0) throw propError(this, 'vpcSubnets', 'selects no subnet of the VPC.');
    warnIfIsolated(this, 'vpcSubnets', props.vpc, subnets, [ENDPOINT_NEEDS.packages, ENDPOINT_NEEDS.cloudFormation,
      ...(mode === FanOutMode.ROUTE53 ? [ENDPOINT_NEEDS.ec2] : []), ...(props.metrics ?? true ? [ENDPOINT_NEEDS.cloudWatch] : []), ENDPOINT_NEEDS.ssm]);
    const clientCidrs = props.clientCidrs ?? [props.vpc.vpcCidrBlock];
    const rewarm = props.warmPaths?.length ? (props.rewarmInterval ?? Duration.hours(6)) : undefined;
    const machineImage = props.machineImage ?? amazonLinux2023(defaultImageArchitecture(this, this.instanceType));
    const mountHelper = props.originMountHelper ?? MountHelper.EFS_UTILS;
    checkEfsMount(this, props.fileSystem, { helperProp: 'originMountHelper', helper: mountHelper }, !!props.machineImage);

    const common: Record<string, string> = {
      EFSC_ORIGIN_SERVER: efsDnsName(props.fileSystem),
      EFSC_ORIGIN_PATH: props.originPath ?? '/',
      EFSC_ORIGIN_MOUNT_TYPE: mountHelper,
      EFSC_ORIGIN_MOUNT_OPTIONS: originMountOptions(props, mountHelper, this.diskCache).join(','),
      EFSC_MOUNT_TIMEOUT_SEC: seconds(props.originMountTimeout ?? Duration.minutes(3)),
      EFSC_EXPORT_PATH: this.exportPath,
      EFSC_EXPORT_FSID: this.fsid,
      EFSC_EXPORT_CLIENTS: exportClients(clientCidrs),
      EFSC_NFSD_THREADS: String(this.nfsdThreads),
      EFSC_READ_AHEAD_KB: String((props.readAhead ?? Size.mebibytes(8)).toKibibytes()),
      EFSC_SUNRPC_SLOTS: String(props.sunrpcSlotTableEntries ?? 128),
      EFSC_VFS_CACHE_PRESSURE: String(props.vfsCachePressure ?? 1),
      EFSC_WARM_PATHS: (props.warmPaths ?? []).join(' '),
      EFSC_WARM_WORKERS: String(props.warmWorkers ?? 16),
      EFSC_REWARM_INTERVAL: rewarm ? systemdTimeSpan(rewarm) : '',
      ...instanceMetrics(this, this.role, props.metrics ?? true),
      ...mirrorParameters(this.node.path, props, mountHelper, this.diskCache),
      EFSC_NODE_DISK_CACHE: String(this.diskCache),
      ...(v3 ? { EFSC_NFS_V3: 'true' } : {}),
      ...(this.diskCache ? diskCacheParameters({
        dir: NODE_CACHE_DIR, label: 'efs-node-cache', tag: 'efsnode',
        deviceModel: props.nodeDiskCacheDeviceModel ?? INSTANCE_STORE_MODEL, initializeDevices: false, cull: DEFAULT_CULL,
      }) : {}),
    };

    // One launch template for every node: what differs between nodes (the stable interface to attach, the group
    // to signal) reaches each instance as tags its group propagates, read at boot through the metadata service.
    const rendered = renderScript({
      script: 'cache-node/bootstrap.sh',
      // lib/fscache.sh only with the disk cache (its functions run only then): it is a quarter of the packed code.
      // lib/mirror.sh only with mirrors: another quarter, the room an NFSv3 node with the disk cache needs.
      libraries: ['lib/common.sh', 'lib/metrics.sh', ...(this.mirrors.length ? ['lib/mirror.sh'] : []), ...(this.diskCache ? ['lib/fscache.sh'] : []),
        'lib/aws-signal.sh'],
      description: `the cache nodes of ${this.node.path}`,
      scope: this,
      // The NFSv3 code (mountd's port, the handle check) only in the user data of a fleet that serves NFSv3.
      drop: ['initialize-devices', ...(v3 ? [] : ['nfsv3']), ...(this.mirrors.length ? ['no-mirrors'] : [])],
      parameters: {
        ...common,
        EFSC_NODE_IDENTITY: 'tags',
        EFSC_SIGNAL_STACK: stack.stackName,
        EFSC_SIGNAL_REGION: stack.region,
      },
    });
    this.userData = ec2.UserData.forLinux({ shebang: '' });
    validateUserCommands(this, rendered, this.userData, `the cache nodes of ${this.node.path}`);
    this.launchTemplate = new ec2.LaunchTemplate(this, 'LaunchTemplate', {
      instanceType: this.instanceType,
      machineImage,
      role: this.role,
      securityGroup: this.securityGroup,
      requireImdsv2: true,
      httpPutResponseHopLimit: 1,
      instanceMetadataTags: true,
      blockDevices: [encryptedRootVolume(props.rootVolumeSize ?? Size.gibibytes(16))],
      userData: ec2.UserData.custom(Lazy.string({ produce: () => withUserCommands(rendered, this.userData, `the cache nodes of ${this.node.path}`) })),
    });
    this.userDataBytes = rendered.estimatedBytes;

    this.nodes = [];
    for (let i = 0; i < nodeCount; i++) {
      this.nodes.push(new CacheNode(this, `Node${i + 1}`, {
        vpc: props.vpc,
        subnet: subnets[i % subnets.length],
        launchTemplate: this.launchTemplate,
        securityGroup: this.securityGroup,
        stableAddress: mode === FanOutMode.ROUTE53,
        loadBalancerHealthChecks: mode === FanOutMode.NETWORK_LOAD_BALANCER,
        bootstrapTimeout: props.bootstrapTimeout ?? Duration.minutes(20),
        index: i + 1,
      }));
    }
    const interfaces = this.nodes.flatMap((n) => (n.networkInterface ? [n.networkInterface] : []));

    grantSignal(this.role, stack);
    if (interfaces.length > 0) {
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({
        actions: ['ec2:AttachNetworkInterface'],
        resources: interfaces.map((eni) => stack.formatArn({ service: 'ec2', resource: 'network-interface', resourceName: eni.ref })),
      }));
      // The attach step waits for the interface to show as attached; Describe* calls support no resource scoping.
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ec2:DescribeNetworkInterfaces'], resources: ['*'] }));
      const instanceArn = stack.formatArn({ service: 'ec2', resource: 'instance', resourceName: '*' });
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({
        actions: ['ec2:AttachNetworkInterface'],
        resources: [instanceArn],
        conditions: { StringEquals: { 'aws:ResourceTag/cdk-efs-cache:fleet': this.node.addr } },
      }));
      acknowledgeWildcardResource(this.role, instanceArn,
        'Instance ids exist only after launch; the statement is limited to instances tagged with this fleet.');
    }
    const onStar = [
      ...(interfaces.length > 0 ? ['ec2:DescribeNetworkInterfaces (read-only) does not support resource-level permissions.'] : []),
      ...(props.metrics ?? true ? [PUT_METRIC_DATA_REASON] : []),
    ];
    if (onStar.length > 0) {
      Validations.of(this.role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: `${onStar.join(' ')} Nothing else is on *.` });
    }
    // The tag that scopes the attach permission; groups copy it onto the instances they launch.
    for (const n of this.nodes) Tags.of(n.autoScalingGroup).add('cdk-efs-cache:fleet', this.node.addr);

    this.fanOut = new FanOut(this, 'FanOut', {
      ...props,
      vpc: props.vpc,
      nodes: this.nodes,
      nodeSecurityGroup: this.securityGroup,
    });
    this.endpoint = this.fanOut.endpoint;
    this.connections = this.fanOut.connections;

    if (props.warmPaths?.length) {
      this.warmDocument = new ssm.CfnDocument(this, 'WarmDocument', {
        documentType: 'Command',
        updateMethod: 'NewVersion',
        content: {
          schemaVersion: '2.2',
          description: `Warm the RAM cache of the EFS cache nodes of ${this.node.path}: read ${props.warmPaths.join(' ')} in parallel.`,
          mainSteps: [{
            action: 'aws:runShellScript',
            name: 'warm',
            inputs: { runCommand: ['/usr/local/sbin/efs-cache-warm'], timeoutSeconds: '21600' },
          }],
        },
      });
    }
  }

  /** Bytes sent by one node (AWS/EC2 NetworkOut of its group, sum per period); nodes count from 0. */
  public metricNodeNetworkOut(node: number, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.nodeMetric(node, 'NetworkOut', 'Sum', props);
  }

  /** CPU utilization of one node (average per period). */
  public metricNodeCpuUtilization(node: number, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.nodeMetric(node, 'CPUUtilization', 'Average', props);
  }

  /** Bytes sent by all nodes together (sum per period). */
  public metricNetworkOut(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    return this.sumOverNodes((i) => this.metricNodeNetworkOut(i), 'Cache tier NetworkOut', props);
  }

  /** Nodes in service (sum over the node groups' GroupInServiceInstances, minimum per period). */
  public metricNodesInService(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    return this.sumOverNodes((i) => this.metricNodeInService(i), 'Cache nodes in service', props);
  }

  /** Whether one node (0-based) is in service: its group's GroupInServiceInstances, minimum per period. */
  public metricNodeInService(node: number, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.nodeMetric(node, 'GroupInServiceInstances', 'Minimum', props, 'AWS/AutoScaling');
  }

  /**
   * Healthy nodes: the target group's HealthyHostCount (minimum) behind an NLB; nodes in service with Route 53 (a sum
   * over the nodes: CloudWatch alarms take it for up to 10 nodes; `CacheDashboard` splits larger fleets).
   */
  public metricHealthyNodes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric {
    const tg = this.fanOut.targetGroup;
    return tg ? tg.metrics.healthyHostCount({ statistic: 'Minimum', period: Duration.minutes(1), ...props }) : this.metricNodesInService(props);
  }

  /** NFS operations the nodes served (sum per period; published by the nodes). */
  public metricNfsdOps(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdOps, 'Sum', props);
  }

  /** Bytes clients read from the nodes (sum per period): what the cache tier served instead of EFS. */
  public metricNfsdBytesRead(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdBytesRead, 'Sum', props);
  }

  /** Requests that waited for a free nfsd thread (sum per period): more threads would help when nonzero. */
  public metricNfsdRequestsQueued(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdRequestsQueued, 'Sum', props);
  }

  /** nfsd threads running per node (average). */
  public metricNfsdThreads(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdThreads, 'Average', props);
  }

  /** Page cache per node, bytes (average): the RAM cache. */
  public metricPageCacheBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.pageCacheBytes, 'Average', props);
  }

  /**
   * A mirror metric of the nodes (`mirrorPaths`): `SYNC_FAILURES` and `ORIGIN_OPS` summed per period, the gauges
   * (`AGE_SECONDS`, `SYNC_SECONDS`, `FILES_WALKED`, `FULL`, `BYTES`) as their maximum over the nodes.
   */
  public metricMirror(metric: MirrorMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    const sums: string[] = [MirrorMetric.SYNC_FAILURES, MirrorMetric.ORIGIN_OPS];
    return groupMetric(this.metricsGroup, metric, sums.includes(metric) ? 'Sum' : 'Maximum', props);
  }

  /** A metric of one node's Auto Scaling group (EC2 metrics by group, or the group's own). */
  private nodeMetric(node: number, metricName: string, statistic: string, props?: cloudwatch.MetricOptions, namespace = 'AWS/EC2'): cloudwatch.Metric {
    const n = this.nodes[node];
    if (!n) throw new Error(`cdk-efs-cache: the fleet has ${this.nodes.length} nodes; there is no node ${node}`);
    return autoScalingGroupMetric(n.autoScalingGroup, metricName, statistic, props, namespace);
  }

  private sumOverNodes(metric: (i: number) => cloudwatch.IMetric, label: string, props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    return sumOfMetrics(this.nodes.map((_n, i) => metric(i)), label, props);
  }
}


/**
 * The export's fsid: a UUID derived from the fleet's construct path and the re-exported origin path, so every node
 * of the fleet gets the same one without a database, and it stays the same across deployments. `numeric` (an NFSv3
 * fleet): a 32-bit number derived the same way, 12 bytes shorter in every file handle.
 */
export function fsidFor(constructPath: string, originPath: string, numeric = false): string {
  const h = crypto.createHash('sha256').update(`cdk-efs-cache:fsid:${constructPath}:${originPath}`).digest('hex');
  // A number from 1 to 2^31 - 1: exportfs keeps fsid=<number> in an int (it prints one above 2^31 - 1 as a negative
  // number), and 0 would make the export the NFSv4 pseudo-root.
  if (numeric) return String((parseInt(h.slice(0, 8), 16) % 0x7fffffff) + 1);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function originMountOptions(props: CacheFleetOptions, helper: MountHelper, diskCache: boolean): string[] {
  const ac = seconds(props.attributeCacheTimeout ?? Duration.minutes(10));
  const acdir = seconds(props.directoryCacheTimeout ?? Duration.minutes(10));
  return [
    // FS-Cache keys its cache on the server's address and port: with the disk cache, efs-utils' local TLS port is
    // pinned (as on clients), so a remount finds what the disk holds.
    ...(diskCache ? ['fsc'] : []),
    ...(helper === MountHelper.EFS_UTILS ? ['tls', 'iam', ...(diskCache ? ['tlsport=20049'] : [])] : []),
    ...RECOMMENDED_NFS_OPTIONS,
    'ro',
    props.closeToOpenConsistency ? 'cto' : 'nocto',
    'ac',
    'lookupcache=all',
    `acregmin=${ac}`, `acregmax=${ac}`, `acdirmin=${acdir}`, `acdirmax=${acdir}`,
  ];
}
