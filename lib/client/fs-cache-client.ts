import { Annotations, Duration, Lazy, Resource, Size, Token, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import { MIRROR_ROOT, underMirrorRoot } from '../cache-fleet/mirror';
import { checkDiskCache, DiskCache } from '../fscache/disk-cache';
import { CullPercents, DEFAULT_CULL, diskCacheParameters } from '../fscache/fscache';
import { DiskCacheMetric, diskCacheMetric } from '../fscache/metrics';
import { checkCacheDevicesFindable, instanceTypeFacts } from '../instance/instance-types';
import { groupMetric, instanceMetrics } from '../instance/metrics';
import { grantPutMetricData, PUT_METRIC_DATA_REASON } from '../instance/metrics-grant';
import { CommonInstanceOptions } from '../instance/options';
import { resolveInstance } from '../instance/resolve';
import { instanceRole } from '../instance/role';
import { compactScript, renderScript, UserDataWrapping, validateUserCommands, withUserCommands } from '../instance/user-data';
import { encryptedVolume } from '../instance/volumes';
import { MOUNT_HELPER_TYPE } from '../nfs/enum-values';
import { checkEfsMount, EFS_UTILS_TLS_PORT, helperOptions, MountHelper, RECOMMENDED_NFS_OPTIONS, seconds } from '../nfs/mount';
import { NFS_MIRROR_PORT, NFS_MOUNTD_PORT, NFS_PORT } from '../nfs/ports';
import { readAsset } from '../private/assets';
import { allowFromConsumerSide } from '../private/connections';
import { describeValue, inUnitOf, knownAtSynth, propError } from '../private/errors';
import { checkNotSystemDirectory, DIR_RE, DOT_SEGMENT_RE, nesting, nestingInWords } from '../private/paths';
import { REMOVED_CLIENT_PROPS, refuseRemovedProps } from '../private/removed-props';
import { ENDPOINT_NEEDS, s3Need, warnIfIsolated } from '../private/subnets';
import { fleetMountOptions, mirrorExportOf, mirrorMountOptions, mountsNfsV3 } from './fleet-mount';
import { CLIENT_METRICS } from './metrics';
import { FLEET_SOURCE_DEFAULTS, MountSource } from './mount-source';
import { ClientWarmingOptions, clientWarmingParameters } from './warming';

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
   * How the client mounts EFS directly (a cache fleet is always mounted over plain NFSv4.1).
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

/**
 * A launch template for instances that keep a disk cache of EFS, or of a cache fleet, with FS-Cache.
 * The file system or fleet lets them in only on the ports their mounts use; they are reached by Session Manager,
 * not SSH.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
 */
export class FsCacheClientLaunchTemplate extends Construct implements ec2.IConnectable, iam.IGrantable {
  /** The launch template. */
  public readonly launchTemplate: ec2.LaunchTemplate;
  /** The instances' security group. */
  public readonly securityGroup: ec2.ISecurityGroup;
  /** The instances' role. */
  public readonly role: iam.IRole;
  /** The instances' role, to grant them more (`bucket.grantRead(clients)`). */
  public readonly grantPrincipal: iam.IPrincipal;
  /** The instances' connections. */
  public readonly connections: ec2.Connections;
  /** The NFS server the instances mount. */
  public readonly server: string;
  /** Estimated size of the user data in bytes (tokens counted generously), an EKS node's MIME document included. */
  public get userDataBytes(): number {
    return this.renderedBytes + (this.wrapping?.estimatedBytes ?? 0);
  }
  /**
   * Commands of your own, run once on an instance's first boot after the library's bootstrap succeeded.
   * By then the cache disk, cachefilesd and the `fsc` mount are up: add them with `clients.userData.addCommands(...)`.
   */
  public readonly userData: ec2.UserData = ec2.UserData.forLinux({ shebang: '' });
  /** The culling limits in force, defaults filled in. */
  public readonly cullLimits: CullLimits;
  /** The `Group` dimension of the metrics the instances publish (namespace CdkEfsCache): this construct's path. */
  public readonly metricsGroup: string;
  /**
   * The image given as `machineImage`, if any (for `EcsFleetCapacity`'s check).
   *
   * @internal
   */
  public readonly _machineImage?: ec2.IMachineImage;
  private readonly renderedUserData: RenderedUserData;
  /** The cluster the instances joined (`_claimForCluster`), if any. */
  private joined?: string;
  private readonly renderedBytes: number;
  /** An EKS node's MIME document around the bootstrap: its other parts' size (`_wrapUserData`). */
  private wrapping?: UserDataWrapping;

  constructor(scope: Construct, id: string, props: FsCacheClientLaunchTemplateProps) {
    super(scope, id);
    refuseRemovedProps(this, props, REMOVED_CLIENT_PROPS);
    const source = checkSource(this, props);
    const instance = resolveInstance(this, props, FS_CACHE_CLIENT_DEFAULTS);
    const diskCache = validateClientOptions(this, props, instance.instanceType, !!source.fleet);
    warnIfIsolated(this, 'vpc', props.vpc, undefined, [ENDPOINT_NEEDS.packages, s3Need(), ...(props.metrics ?? FS_CACHE_CLIENT_DEFAULTS.metrics ? [ENDPOINT_NEEDS.cloudWatch] : []),
      ...(props.role ? [] : [ENDPOINT_NEEDS.ssm])]);
    this.metricsGroup = this.node.path;
    const viaFleet = !!source.fleet;
    const helper = source.mountHelper ?? props.mountHelper ?? FS_CACHE_CLIENT_DEFAULTS.mountHelper;
    const readOnly = viaFleet ? true : (props.readOnly ?? false);

    this.securityGroup = props.securityGroup ?? new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'FS-Cache clients: no inbound rule; NFS out to the file system or cache fleet',
      allowAllOutbound: true,
    });
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup], defaultPort: ec2.Port.tcp(NFS_PORT) });
    this.role = props.role ?? instanceRole(this, 'FS-Cache clients: SSM Session Manager and EFS client access');
    this.grantPrincipal = this.role;

    this.server = source.server;
    const remotePath = source.remotePath;
    const fs = source.efsFileSystem;
    if (fs) checkEfsMount(this, fs, { helperProp: 'mountHelper', helper, optionsProp: 'mountOptions', options: props.mountOptions }, !!props.machineImage);
    // The rules (into the file system's or fleet's group) are made from the clients' side: in the clients' stack when
    // the source is of another, which then depends on the source's stack and never the other way round.
    allowFromConsumerSide(this, source, ec2.Port.tcp(NFS_PORT), 'NFS from FS-Cache clients');
    const v3 = !!source.fleet && mountsNfsV3(source.fleet);
    if (v3) allowFromConsumerSide(this, source, ec2.Port.tcp(NFS_MOUNTD_PORT), 'NFSv3 mountd from FS-Cache clients');
    // The mirrors are served by a second nfsd of each node, on a port of its own: opened only when they are mounted.
    if (source.fleet && source.mirrorPaths.length > 0) {
      allowFromConsumerSide(this, source, ec2.Port.tcp(NFS_MIRROR_PORT), 'NFS to the cache fleet\'s mirrors from FS-Cache clients');
    }
    if (fs && helper === MountHelper.EFS_UTILS) {
      const actions = ['elasticfilesystem:ClientMount', ...(readOnly ? [] : ['elasticfilesystem:ClientWrite'])];
      iam.Grant.addToPrincipal({ grantee: this.role, actions, resourceArns: [fs.fileSystemArn] });
    }

    const options = props.mountOptions ?? (source.fleet ? fleetMountOptions(source.fleet, true)
      : ['fsc', ...helperOptions(helper, props.tlsPort ?? FS_CACHE_CLIENT_DEFAULTS.tlsPort), ...RECOMMENDED_NFS_OPTIONS, ...(readOnly ? ['ro'] : [])]);
    const cull = props.cullLimits ?? {};
    const d = DEFAULT_CULL;
    const cullPercents: CullPercents = {
      blocksRun: cull.blocksRun ?? d.blocksRun, blocksCull: cull.blocksCull ?? d.blocksCull, blocksStop: cull.blocksStop ?? d.blocksStop,
      filesRun: cull.filesRun ?? d.filesRun, filesCull: cull.filesCull ?? d.filesCull, filesStop: cull.filesStop ?? d.filesStop,
    };
    this.cullLimits = cullPercents;

    const blockDevices = [instance.rootVolume];
    if (diskCache._volumeSize) blockDevices.push(encryptedVolume('/dev/sdf', diskCache._volumeSize));

    const metrics = props.metrics ?? FS_CACHE_CLIENT_DEFAULTS.metrics;
    if (metrics) grantPutMetricData(this.role);
    const mirrors = clientMirrorParameters(this, source, props);
    const rendered = renderScript({
      script: 'client/bootstrap.sh',
      description: `the FS-Cache client launch template ${this.node.path}`,
      scope: this,
      parameters: {
        EFSC_NFS_SERVER: this.server,
        EFSC_NFS_PATH: remotePath,
        EFSC_MOUNT_POINT: props.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint,
        EFSC_MOUNT_TYPE: v3 ? 'nfs' : MOUNT_HELPER_TYPE[helper],
        EFSC_MOUNT_OPTIONS: options.join(','),
        EFSC_MOUNT_TIMEOUT_SEC: seconds(props.mountTimeout ?? FS_CACHE_CLIENT_DEFAULTS.mountTimeout),
        ...diskCacheParameters({
          dir: props.cacheDirectory ?? FS_CACHE_CLIENT_DEFAULTS.cacheDirectory, label: 'fscache', tag: props.cacheTag ?? FS_CACHE_CLIENT_DEFAULTS.cacheTag,
          deviceModel: diskCache._deviceModel, initializeDevices: diskCache._initializeDevices, cull: cullPercents,
        }),
        EFSC_CACHE_SOURCE: diskCache._source,
        ...instanceMetrics(this, metrics),
        ...mirrors.parameters,
        ...clientWarmingParameters(this, props.warming, { mountPoint: props.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint, ...mirrors.mounts }),
      },
    });
    if (metrics) {
      Validations.of(this.role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: PUT_METRIC_DATA_REASON });
    }
    rendered.grantRead(this.role);
    this.renderedBytes = rendered.estimatedBytes;

    validateUserCommands(this, rendered, this.userData, `the FS-Cache client launch template ${this.node.path}`, () => this.wrapping);
    this.renderedUserData = new RenderedUserData(() => withUserCommands(rendered, this.userData, `the FS-Cache client launch template ${this.node.path}`), this.userData);
    this.launchTemplate = new ec2.LaunchTemplate(this, 'Resource', {
      instanceType: instance.instanceType,
      machineImage: instance.machineImage,
      role: this.role,
      securityGroup: this.securityGroup,
      requireImdsv2: true,
      httpPutResponseHopLimit: 1,
      blockDevices,
      userData: this.renderedUserData,
    });
    this._machineImage = props.machineImage;
    instance.checkOs(this.launchTemplate.osType);
  }

  /**
   * Replaces `command`, whenever it is added to the user data, by `lines` (an ECS cluster's `ECS_CLUSTER` line, whose
   * deploy-time name the lines carry as data).
   *
   * @internal
   */
  public _replaceUserDataCommand(command: string, lines: string[]): void {
    this.renderedUserData._replace(command, lines);
  }

  /**
   * Renders the user data as `wrap` makes it of the script (an EKS node's MIME document), `wrapping` being the size and
   * name of what `wrap` adds around it.
   *
   * @internal
   */
  public _wrapUserData(wrap: (script: string) => string, wrapping: UserDataWrapping): void {
    this.renderedUserData._wrap(wrap);
    this.wrapping = wrapping;
  }

  /**
   * Gives the instances to `cluster` (such as `ECS cluster App/Cluster`); refuses a second cluster, since their user
   * data joins one.
   *
   * @internal
   */
  public _claimForCluster(cluster: string): void {
    if (this.joined) {
      throw propError(this, 'hosts', `${this.node.path} already makes the instances of the ${this.joined}: it cannot give them to the ` +
        `${cluster} too. Give each cluster an FsCacheClientLaunchTemplate of its own.`);
    }
    this.joined = cluster;
  }

  /**
   * A metric of the instances' disk caches (`DiskCacheMetric`): the counters summed per period, the free space as its
   * minimum. `DiskCacheMetric.READ_BYTES` is what the caches served, on every kernel.
   */
  public metricDiskCache(metric: DiskCacheMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, diskCacheMetric(metric), props);
  }

  /**
   * FS-Cache's read count of the instances, `IO rd` (sum per period), which on kernel 6.1 counts misses too.
   * For what the caches served, `metricDiskCache(DiskCacheMetric.READ_BYTES)`.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
   */
  public metricFscacheReads(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, CLIENT_METRICS.fscacheReads, props);
  }

  /** Pages the instances wrote to their disk cache (sum per period): misses being filled. */
  public metricFscacheWrites(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, CLIENT_METRICS.fscacheWrites, props);
  }

  /** Cache objects culled (sum per period). */
  public metricFscacheCulled(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, CLIENT_METRICS.fscacheCulled, props);
  }

  /** Free space of the fullest instance's cache file system, percent (minimum). */
  public metricCacheDiskFreePercent(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, CLIENT_METRICS.cacheDiskFreePercent, props);
  }
}

/**
 * Checks client options: throws `Invalid <prop>` for contradictions, warns for risky choices. Returns the disk cache,
 * `DiskCache.instanceStore()` when not given.
 */
export function validateClientOptions(scope: Construct, o: FsCacheClientOptions, instanceType: ec2.InstanceType, viaFleet: boolean): DiskCache {
  const diskCache = checkDiskCache(scope, 'diskCache', o.diskCache, FS_CACHE_CLIENT_DEFAULTS.diskCache);
  const facts = instanceTypeFacts(instanceType);
  checkCacheDevicesFindable(scope, instanceType, facts, diskCache._ebs);
  if (!diskCache._ebs) {
    if (facts.instanceStore === false) {
      throw propError(scope, 'instanceType', `${instanceType} has no instance store to hold the cache; choose a type with ` +
        'NVMe instance store (for example m6id, c6gd, i4i) or set diskCache: DiskCache.ebs().');
    }
    if (facts.instanceStore === undefined) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:unknownInstanceStore',
        `instanceType: whether ${describeValue(instanceType, scope, false)} has NVMe instance store is not known here` +
        `${facts.parsed ? '' : ' (the name does not read as family, generation and size, e.g. m6id.xlarge)'}; if it ` +
        'has none, the bootstrap fails. Set diskCache: DiskCache.ebs() for Nitro types without it.');
    }
  }
  if (o.mountTimeout) inUnitOf(scope, 'mountTimeout', () => o.mountTimeout!.toSeconds());
  knownAtSynth(scope, 'cacheDirectory', o.cacheDirectory, 'it is compared with mountPoint');
  knownAtSynth(scope, 'mountPoint', o.mountPoint, 'it is compared with cacheDirectory');
  knownAtSynth(scope, 'cacheTag', o.cacheTag);
  if (o.cacheDirectory !== undefined && (!DIR_RE.test(o.cacheDirectory) || DOT_SEGMENT_RE.test(o.cacheDirectory))) {
    throw propError(scope, 'cacheDirectory', `must be an absolute path other than /, got '${o.cacheDirectory}'.`);
  }
  if (o.mountPoint !== undefined && (!DIR_RE.test(o.mountPoint) || DOT_SEGMENT_RE.test(o.mountPoint))) {
    throw propError(scope, 'mountPoint', `must be an absolute path other than /, got '${o.mountPoint}'.`);
  }
  checkNotSystemDirectory(scope, 'cacheDirectory', o.cacheDirectory, 'the cache file system mounted there');
  checkNotSystemDirectory(scope, 'mountPoint', o.mountPoint, 'the mount of the file system');
  const mountPoint = o.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint;
  const cacheDir = o.cacheDirectory ?? FS_CACHE_CLIENT_DEFAULTS.cacheDirectory;
  const how = nesting(mountPoint, cacheDir);
  if (how === 'same') throw propError(scope, 'mountPoint', 'must differ from cacheDirectory.');
  if (how) {
    throw propError(scope, 'mountPoint', `${nestingInWords(mountPoint, how, 'cacheDirectory', cacheDir)}: the file system would be ` +
      `mounted ${how === 'inside' ? 'inside the cache file system, where cachefilesd culls' : 'over the cache file system'}. ` +
      'Choose a mountPoint and a cacheDirectory apart, e.g. \'/mnt/efs\' and \'/var/cache/fscache\'.');
  }
  if (o.cacheTag !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(o.cacheTag)) {
    throw propError(scope, 'cacheTag', `must be 1-32 letters, digits, _ or -, got '${o.cacheTag}'.`);
  }
  const c = o.cullLimits ?? {};
  for (const kind of ['blocks', 'files'] as const) {
    const run = c[`${kind}Run`] ?? CULL_LIMITS_DEFAULTS[`${kind}Run`];
    const cull = c[`${kind}Cull`] ?? CULL_LIMITS_DEFAULTS[`${kind}Cull`];
    const stop = c[`${kind}Stop`] ?? CULL_LIMITS_DEFAULTS[`${kind}Stop`];
    for (const [name, v] of [[`${kind}Run`, run], [`${kind}Cull`, cull], [`${kind}Stop`, stop]] as const) {
      knownAtSynth(scope, `cullLimits.${name}`, v, 'the limits are compared with each other');
      if (!Number.isInteger(v) || v < 0 || v >= 100) throw propError(scope, `cullLimits.${name}`, `must be a whole percentage from 0 to 99, got ${v}.`);
    }
    if (!(stop < cull && cull < run)) {
      throw propError(scope, `cullLimits.${kind}Cull`, `needs 0 <= ${kind}Stop < ${kind}Cull < ${kind}Run < 100, got stop ${stop}, cull ${cull}, run ${run}.`);
    }
  }
  if (o.mountOptions) {
    for (const opt of o.mountOptions) {
      knownAtSynth(scope, 'mountOptions', opt, 'the options are checked for fsc, hard and tls');
      if (!/^[A-Za-z0-9=._:/-]+$/.test(opt)) throw propError(scope, 'mountOptions', `'${opt}' is not a mount option (no spaces or commas inside one).`);
    }
    if (!o.mountOptions.includes('fsc')) throw propError(scope, 'mountOptions', 'must include fsc, which is what turns FS-Cache on.');
    if (!o.mountOptions.includes('hard')) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:softMount',
        'mountOptions: without hard, a slow or failed server returns I/O errors to applications, which can ' +
        'corrupt data they write. Keep hard unless the workload handles errors.');
    }
  }
  if (viaFleet && o.mountHelper === MountHelper.EFS_UTILS) {
    throw propError(scope, 'mountHelper', 'a cache fleet is mounted over plain NFSv4.1; amazon-efs-utils only mounts EFS.');
  }
  if (viaFleet && o.readOnly === false) {
    throw propError(scope, 'readOnly', 'a cache fleet exports read-only; write to EFS directly.');
  }
  if (viaFleet && o.tlsPort !== undefined) throw propError(scope, 'tlsPort', 'applies only when mounting EFS with amazon-efs-utils.');
  if (o.mountHelper === MountHelper.NFS && o.tlsPort !== undefined) throw propError(scope, 'tlsPort', 'applies only with mountHelper: MountHelper.EFS_UTILS.');
  if (o.tlsPort !== undefined && !Token.isUnresolved(o.tlsPort) && (!Number.isInteger(o.tlsPort) || o.tlsPort < 1024 || o.tlsPort > 65535)) {
    throw propError(scope, 'tlsPort', `must be a port from 1024 to 65535, got ${o.tlsPort}.`);
  }
  return diskCache;
}

/**
 * The source of a template, checked: `Invalid source: is required` when it is missing (from JavaScript, which has no
 * types: a caller still giving the `fileSystem` or `cacheFleet` of 0.1). Its mirrors are checked in
 * `clientMirrorParameters`.
 */
function checkSource(scope: IConstruct, props: FsCacheClientLaunchTemplateProps): MountSource {
  const source = props.source;
  if (source === undefined || source === null) {
    throw propError(scope, 'source', 'is required: MountSource.fileSystem(fileSystem) mounts EFS directly, ' +
      'MountSource.cacheFleet(fleet) mounts the cache tier.');
  }
  return source;
}

/**
 * `EFSC_MIRROR_MOUNTS` (the mirrors' export paths, `/mirror/<path>`, space-separated; the server is the fleet's),
 * `EFSC_MIRROR_MOUNT_POINT` (each mirror is mounted there plus its path under /mirror, which the instance computes:
 * an export path may be a token) and their options: NFSv4.1, read-only, hard, no fsc (the page cache holds what a
 * delegation covers), default attribute caching, on the mirrors' own port (`NFS_MIRROR_PORT`). Mount paths that
 * are known here are checked here: none may be another's directory or lie inside it (the fsc mount, the cache
 * directory, the other mirrors); the instance checks them again at boot, with the tokens resolved.
 */
function clientMirrorParameters(scope: IConstruct, source: MountSource, o: FsCacheClientOptions): {
  parameters: Record<string, string>; mounts: { mirrors: string[]; mirrorRoot?: string };
} {
  const paths = source.mirrorPaths;
  const root = source.mirrorMountPoint ?? FLEET_SOURCE_DEFAULTS.mirrorMountPoint;
  const pathsProp = 'source.mirrorPaths';
  const rootProp = 'source.mirrorMountPoint';
  if (source.mirrorMountPoint !== undefined && paths.length === 0) throw propError(scope, rootProp, 'needs mirrorPaths: there is nothing to mount.');
  // Only a fleet has mirrors: MountSource.fileSystem takes none.
  const fleet = source.fleet;
  if (paths.length === 0 || !fleet) return { parameters: { EFSC_MIRROR_MOUNTS: '', EFSC_MIRROR_ROOT: MIRROR_ROOT }, mounts: { mirrors: [] } };
  if (!DIR_RE.test(root) || DOT_SEGMENT_RE.test(root)) throw propError(scope, rootProp, `must be an absolute path other than /, got ${describeValue(root, scope)}.`);
  const twice = paths.find((p, i) => paths.indexOf(p) !== i);
  if (twice !== undefined) throw propError(scope, pathsProp, `lists '${twice}' twice: each mirror is mounted once.`);
  const mirrors = paths.map((p) => mirrorExportOf(scope, pathsProp, fleet, p));
  // Where each mirror lands, for those whose export path is known here (the rest are checked at boot).
  const known = mirrors.flatMap((m, i) => (Token.isUnresolved(m.exportPath) ? [] : [{ path: paths[i], at: `${root}${underMirrorRoot(m.exportPath)}` }]));
  const others: [string, string][] = [['mountPoint', o.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint], ['cacheDirectory', o.cacheDirectory ?? FS_CACHE_CLIENT_DEFAULTS.cacheDirectory]];
  for (const m of known) {
    for (const [name, dir] of others) {
      const how = nesting(m.at, dir);
      if (!how) continue;
      const where = { same: 'on the very directory of', inside: 'inside', around: 'over' }[how];
      const apart = ['/mnt/mirror', '/srv/mirror', '/opt/mirror'].find((x) => x !== root && others.every(([, d]) => !nesting(x, d)));
      throw propError(scope, rootProp, `the mirror '${m.path}' would be mounted at '${m.at}', ${where} ${name} '${dir}' ` +
        `(${name === 'mountPoint' ? 'the fsc mount of the fleet\'s export' : 'cachefilesd\'s cache'}): choose a ${rootProp} ` +
        `apart from it${apart ? `, e.g. '${apart}'` : ''}, or another ${name}.`);
    }
  }
  known.forEach((m, i) => known.slice(0, i).forEach((n) => {
    const how = nesting(m.at, n.at);
    if (how === 'same') {
      throw propError(scope, pathsProp, `'${n.path}' and '${m.path}' would both be mounted at '${m.at}': mount one of them.`);
    }
    if (how) {
      const [inner, outer] = how === 'inside' ? [m, n] : [n, m];
      throw propError(scope, pathsProp, `the mirror '${inner.path}' would be mounted at '${inner.at}', inside the mount of '${outer.path}' ` +
        `at '${outer.at}': mount one of them.`);
    }
  }));
  return {
    parameters: {
      EFSC_MIRROR_MOUNTS: mirrors.map((m) => m.exportPath).join(' '),
      EFSC_MIRROR_ROOT: MIRROR_ROOT,
      EFSC_MIRROR_MOUNT_POINT: root,
      EFSC_MIRROR_MOUNT_OPTIONS: mirrorMountOptions().join(','),
    },
    // What warming may read: the mirrors whose mount points are known, and their root when some are not.
    mounts: { mirrors: known.map((m) => m.at), mirrorRoot: known.length < mirrors.length ? root : undefined },
  };
}

/**
 * The launch template's user data: the rendered bootstrap, then the commands added to it. Commands added to it (by you,
 * or by aws-cdk-lib: an ECS cluster that takes the instances as capacity adds its `ECS_CLUSTER` line) join the
 * commands of `FsCacheClientLaunchTemplate.userData`, run on the first boot after the bootstrap succeeded.
 */
class RenderedUserData extends ec2.UserData {
  /** Commands that arrive with a deploy-time value spliced in, and the lines that add them with the value as data. */
  private readonly replacements = new Map<string, string[]>();
  private wrapper?: (script: string) => string;

  constructor(private readonly produce: () => string, private readonly commands: ec2.UserData) {
    super();
  }

  /** Adds `lines` instead of `command` whenever `command` is added. */
  public _replace(command: string, lines: string[]): void {
    this.replacements.set(command, lines);
  }

  /** Renders the user data as `wrap` makes it of the script (an EKS node's MIME document). */
  public _wrap(wrap: (script: string) => string): void {
    this.wrapper = wrap;
  }

  public render(): string {
    return Lazy.string({ produce: () => (this.wrapper ? this.wrapper(this.produce()) : this.produce()) });
  }

  public addCommands(...commands: string[]): void {
    this.commands.addCommands(...commands.flatMap((c) => this.replacements.get(c) ?? [c]));
  }

  public addOnExitCommands(...commands: string[]): void {
    this.commands.addOnExitCommands(...commands);
  }

  public addExecuteFileCommand(params: ec2.ExecuteFileOptions): void {
    this.commands.addExecuteFileCommand(params);
  }

  public addS3DownloadCommand(params: ec2.S3DownloadOptions): string {
    return this.commands.addS3DownloadCommand(params);
  }

  public addSignalOnExitCommand(resource: Resource): void {
    this.commands.addSignalOnExitCommand(resource);
  }
}

/** The gate of an EKS node's user data: assets/client/eks-node-gate.sh without its comments (`compactScript`). */
export function eksNodeGate(): string {
  return ['#!/bin/bash', 'set -euo pipefail', '# cdk-efs-cache: assets/client/eks-node-gate.sh (comments left out).',
    ...compactScript(readAsset('client/eks-node-gate.sh'))].join('\n') + '\n';
}
