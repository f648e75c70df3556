import { Annotations, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { DiskCache } from '../fscache/disk-cache';
import { CullPercents, DEFAULT_CULL, diskCacheParameters } from '../fscache/fscache';
import { DiskCacheMetric, diskCacheMetric } from '../fscache/metrics';
import { checkEnaExpressType, enableEnaExpress, ENA_EXPRESS_DOC } from '../instance/ena-express';
import { groupMetric, instanceMetrics } from '../instance/metrics';
import { grantPutMetricData, PUT_METRIC_DATA_REASON } from '../instance/metrics-grant';
import { resolveInstance } from '../instance/resolve';
import { instanceRole } from '../instance/role';
import { warnIfNotEncryptedInTransit } from '../instance/transit';
import { compactScript, RenderedScript, renderScript, UserDataWrapping, validateUserCommands, withUserCommands } from '../instance/user-data';
import { encryptedVolume } from '../instance/volumes';
import { MOUNT_HELPER_TYPE } from '../nfs/enum-values';
import { checkEfsMount, helperOptions, MountHelper, RECOMMENDED_NFS_OPTIONS, seconds } from '../nfs/mount';
import { NFS_MIRROR_PORT, NFS_MOUNTD_PORT, NFS_PORT } from '../nfs/ports';
import { readAsset } from '../private/assets';
import { allowFromConsumerSide } from '../private/connections';
import { propError } from '../private/errors';
import { REMOVED_CLIENT_PROPS, refuseRemovedProps } from '../private/removed-props';
import { ENDPOINT_NEEDS, s3Need, warnIfIsolated } from '../private/subnets';
import { fleetMountOptions, mountsNfsV3, nconnectOptions } from './fleet-mount';
import { CLIENT_METRICS } from './metrics';
import { clientMirrorParameters } from './mirror-mounts';
import { MountSource } from './mount-source';
import { CullLimits, FS_CACHE_CLIENT_DEFAULTS, FsCacheClientLaunchTemplateProps, FsCacheClientOptions } from './options';
import { RenderedUserData } from './rendered-user-data';
import { checkSource, validateClientOptions } from './validation';
import { clientWarmingParameters } from './warming';

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
    if (source.fleet) warnIfNotEncryptedInTransit(this, 'instanceType', 'clients', instance.instanceType);
    const diskCache = validateClientOptions(this, props, instance.instanceType, !!source.fleet);
    const enaExpress = this.enaExpressOf(props, source, instance.instanceType);
    warnIfIsolated(this, 'vpc', props.vpc, undefined, [ENDPOINT_NEEDS.packages, s3Need(), ...(props.metrics ?? FS_CACHE_CLIENT_DEFAULTS.metrics ? [ENDPOINT_NEEDS.cloudWatch] : []),
      ...(props.role ? [] : [ENDPOINT_NEEDS.ssm])]);
    this.metricsGroup = this.node.path;
    const mount = mountOf(source, props);

    this.securityGroup = props.securityGroup ?? new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'FS-Cache clients: no inbound rule; NFS out to the file system or cache fleet',
      allowAllOutbound: true,
    });
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup], defaultPort: ec2.Port.tcp(NFS_PORT) });
    this.role = props.role ?? instanceRole(this, 'FS-Cache clients: SSM Session Manager and EFS client access');
    this.grantPrincipal = this.role;
    this.server = source.server;
    this.allowToSource(source, props, mount);
    this.cullLimits = cullPercentsOf(props.cullLimits);

    const rendered = this.renderBootstrap(props, source, mount, diskCache);
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
      blockDevices: [instance.rootVolume, ...(diskCache._volumeSize ? [encryptedVolume('/dev/sdf', diskCache._volumeSize)] : [])],
      userData: this.renderedUserData,
    });
    if (enaExpress) enableEnaExpress(this.launchTemplate);
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

  /**
   * `enaExpress`, checked against the instance type; refused over EFS directly, which is no instance: ENA Express
   * works only between two instances that have it.
   */
  private enaExpressOf(props: FsCacheClientLaunchTemplateProps, source: MountSource, instanceType: ec2.InstanceType): boolean {
    if (!(props.enaExpress ?? FS_CACHE_CLIENT_DEFAULTS.enaExpress)) return false;
    if (!source.fleet) {
      throw propError(this, 'enaExpress', 'ENA Express works only between two instances that both have it, and EFS ' +
        '(MountSource.fileSystem) is no instance: it would change nothing. Give it with MountSource.cacheFleet(fleet), whose ' +
        `nodes have it on too, or leave it off; see ${ENA_EXPRESS_DOC}.`);
    }
    checkEnaExpressType(this, 'enaExpress', instanceType);
    if (!source.fleet.enaExpress) {
      Annotations.of(this).addWarningV2('cdk-efs-cache:enaExpressFleetWithout', `enaExpress: the nodes of ${source.fleet.node.path} do not ` +
        `have ENA Express on, and it works only between two instances that both have it: give the fleet enaExpress: true too; see ${ENA_EXPRESS_DOC}.`);
    }
    return true;
  }

  /**
   * Lets the instances reach what they mount, from their side (in the clients' stack when the source is of another,
   * which then depends on the source's stack and never the other way round): NFS, an NFSv3 fleet's mountd, a fleet's
   * mirrors' port when they are mounted, and EFS's client access with amazon-efs-utils.
   */
  private allowToSource(source: MountSource, props: FsCacheClientLaunchTemplateProps, mount: ClientMount): void {
    const fs = source.efsFileSystem;
    if (fs) checkEfsMount(this, fs, { helperProp: 'mountHelper', helper: mount.helper, optionsProp: 'mountOptions', options: props.mountOptions }, !!props.machineImage);
    allowFromConsumerSide(this, source, ec2.Port.tcp(NFS_PORT), 'NFS from FS-Cache clients');
    if (mount.v3) allowFromConsumerSide(this, source, ec2.Port.tcp(NFS_MOUNTD_PORT), 'NFSv3 mountd from FS-Cache clients');
    // The mirrors are served by a second nfsd of each node, on a port of its own: opened only when they are mounted.
    if (source.fleet && source.mirrorPaths.length > 0) {
      allowFromConsumerSide(this, source, ec2.Port.tcp(NFS_MIRROR_PORT), 'NFS to the cache fleet\'s mirrors from FS-Cache clients');
    }
    if (fs && mount.helper === MountHelper.EFS_UTILS) {
      const actions = ['elasticfilesystem:ClientMount', ...(mount.readOnly ? [] : ['elasticfilesystem:ClientWrite'])];
      iam.Grant.addToPrincipal({ grantee: this.role, actions, resourceArns: [fs.fileSystemArn] });
    }
  }

  /** The bootstrap (assets/client/bootstrap.sh) with its parameters, readable by the instances' role. */
  private renderBootstrap(props: FsCacheClientLaunchTemplateProps, source: MountSource, mount: ClientMount, diskCache: DiskCache): RenderedScript {
    const options = clientMountOptions(this, props, source, mount);
    const metrics = props.metrics ?? FS_CACHE_CLIENT_DEFAULTS.metrics;
    if (metrics) grantPutMetricData(this.role);
    const mountPoint = props.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint;
    const mirrors = clientMirrorParameters(this, source, props);
    const rendered = renderScript({
      script: 'client/bootstrap.sh',
      description: `the FS-Cache client launch template ${this.node.path}`,
      scope: this,
      parameters: {
        EFSC_NFS_SERVER: this.server,
        EFSC_NFS_PATH: source.remotePath,
        EFSC_MOUNT_POINT: mountPoint,
        EFSC_MOUNT_TYPE: mount.v3 ? 'nfs' : MOUNT_HELPER_TYPE[mount.helper],
        EFSC_MOUNT_OPTIONS: options.join(','),
        EFSC_MOUNT_TIMEOUT_SEC: seconds(props.mountTimeout ?? FS_CACHE_CLIENT_DEFAULTS.mountTimeout),
        ...diskCacheParameters({
          dir: props.cacheDirectory ?? FS_CACHE_CLIENT_DEFAULTS.cacheDirectory, label: 'fscache', tag: props.cacheTag ?? FS_CACHE_CLIENT_DEFAULTS.cacheTag,
          deviceModel: diskCache._deviceModel, initializeDevices: diskCache._initializeDevices, cull: cullPercentsOf(props.cullLimits),
        }),
        EFSC_CACHE_SOURCE: diskCache._source,
        ...instanceMetrics(this, metrics),
        ...mirrors.parameters,
        ...clientWarmingParameters(this, props.warming, { mountPoint, ...mirrors.mounts }),
      },
    });
    if (metrics) {
      Validations.of(this.role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: PUT_METRIC_DATA_REASON });
    }
    rendered.grantRead(this.role);
    return rendered;
  }
}

/** How the instances mount their source: with which helper, whether read-only, and whether over NFSv3 (a fleet's). */
interface ClientMount {
  readonly helper: MountHelper;
  readonly readOnly: boolean;
  readonly v3: boolean;
}

function mountOf(source: MountSource, props: FsCacheClientOptions): ClientMount {
  return {
    helper: source.mountHelper ?? props.mountHelper ?? FS_CACHE_CLIENT_DEFAULTS.mountHelper,
    readOnly: source.fleet ? true : (props.readOnly ?? false),
    v3: !!source.fleet && mountsNfsV3(source.fleet),
  };
}

/**
 * The options of the main mount: `mountOptions` when given, else those of the source; for a fleet plus `nconnect=<n>`
 * when the source asks for it (`FleetSourceOptions.nconnect`). Throws `Invalid source.nconnect` for a bad value, or
 * when `mountOptions` already holds an nconnect option.
 */
function clientMountOptions(scope: Construct, props: FsCacheClientOptions, source: MountSource, mount: ClientMount): string[] {
  const nconnect = nconnectOptions(scope, 'source.nconnect', source.nconnect);
  if (nconnect.length > 0 && props.mountOptions?.some((o) => o.startsWith('nconnect='))) {
    throw propError(scope, 'source.nconnect', 'mountOptions already hold an nconnect option: give the number of connections in one place.');
  }
  if (props.mountOptions) return [...props.mountOptions, ...nconnect];
  if (source.fleet) return [...fleetMountOptions(source.fleet, true), ...nconnect];
  return ['fsc', ...helperOptions(mount.helper, props.tlsPort ?? FS_CACHE_CLIENT_DEFAULTS.tlsPort), ...RECOMMENDED_NFS_OPTIONS, ...(mount.readOnly ? ['ro'] : [])];
}

/** The culling limits in force: those given, cachefilesd's own for the rest. */
function cullPercentsOf(cull: CullLimits = {}): CullPercents {
  const d = DEFAULT_CULL;
  return {
    blocksRun: cull.blocksRun ?? d.blocksRun, blocksCull: cull.blocksCull ?? d.blocksCull, blocksStop: cull.blocksStop ?? d.blocksStop,
    filesRun: cull.filesRun ?? d.filesRun, filesCull: cull.filesCull ?? d.filesCull, filesStop: cull.filesStop ?? d.filesStop,
  };
}

/** The gate of an EKS node's user data: assets/client/eks-node-gate.sh without its comments (`compactScript`). */
export function eksNodeGate(): string {
  return ['#!/bin/bash', 'set -euo pipefail', '# cdk-efs-cache: assets/client/eks-node-gate.sh (comments left out).',
    ...compactScript(readAsset('client/eks-node-gate.sh'))].join('\n') + '\n';
}
