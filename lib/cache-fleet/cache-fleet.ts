import { Annotations, Duration, Lazy } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { DiskCacheMetric } from '../fscache/metrics';
import { checkEnaExpressType, enableEnaExpress, ENA_EXPRESS_DOC } from '../instance/ena-express';
import { InstanceTypeFacts, instanceTypeFacts, warnUnknownNodeSize } from '../instance/instance-types';
import { autoScalingGroupMetric, groupMetric, METRIC_NAMESPACE, sumOfMetrics } from '../instance/metrics';
import { grantPutMetricData } from '../instance/metrics-grant';
import { ResolvedInstance, resolveInstance } from '../instance/resolve';
import { warnIfClientsBeyondVpc, warnIfNotEncryptedInTransit } from '../instance/transit';
import { RenderedScript, renderScript, validateUserCommands, withUserCommands } from '../instance/user-data';
import { checkEfsMount, MountHelper } from '../nfs/mount';
import { NfsVersion } from '../nfs/nfs-version';
import { NFS_MIRROR_PORT, NFS_MOUNTD_PORT } from '../nfs/ports';
import { allowNodesToOrigin, CacheOrigin, originFsidKey, resolveOrigin } from '../origin/cache-origin';
import { propError } from '../private/errors';
import { REMOVED_FLEET_PROPS, refuseRemovedProps } from '../private/removed-props';
import { defaultSubnets, ENDPOINT_NEEDS, s3Need, warnIfIsolated } from '../private/subnets';
import { ImportedCacheFleet } from './attributes';
import { CacheNode, ICacheNode } from './cache-node';
import { Capacity } from './capacity';
import { ElasticNodes, LIFECYCLE_HOOKS } from './elastic';
import { FanOut } from './fan-out';
import { FanOutResources } from './fan-out-resources';
import { MirrorMetric, namedMetric, NODE_GROUP_METRICS, NODE_METRICS } from './metrics';
import { pathMirrors, s3MirrorFsid, s3Mirrors } from './mirror';
import { grantS3Mirrors } from './mirror-grant';
import { mirrorExportPath, mirrorFsid } from './mirror-paths';
import { NodeDiskCache } from './node-disk-cache';
import { fsidFor, nodeParameters } from './node-parameters';
import { grantNodeRole, nodeRole } from './node-role';
import { CACHE_FLEET_DEFAULTS as DEFAULTS, CacheFleetAttributes, CacheFleetProps, ICacheFleet, MirrorExport } from './options';
import { defaultFanOut, validateCacheFleetOptions } from './validation';

// The fleet's parts, each in a module of its own, assembled by `CacheFleet` below: its options and how clients see
// a fleet (options.ts), a fleet of another stack (attributes.ts), the checks of the options (validation.ts), the
// nodes' bootstrap parameters and fsid (node-parameters.ts), the nodes' role (node-role.ts), the nodes (cache-node.ts),
// how many (capacity.ts; an elastic fleet's group: elastic.ts), the fan-out (fan-out.ts and fan-out-*.ts), the mirrors
// (mirror.ts, and mirror-*.ts: their paths, validation, size checks, grants and parameters), and the metric names and
// statistics (metrics.ts). The public types are importable from here too.
export {
  CacheFleetAttributes, MirrorExport, CacheFleetOptions, CacheFleetProps, ICacheFleet,
} from './options';
export { MirrorMetric } from './metrics';
export { fsidFor } from './node-parameters';

/**
 * A RAM cache tier: EC2 nodes that re-export an origin read-only over NFS, behind Route 53 names or an NLB.
 * Writes go to the origin directly, never through the cache tier.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
 */
export class CacheFleet extends Construct implements ICacheFleet, iam.IGrantable {
  /** The namespace of the metrics the nodes and clients publish through the CloudWatch agent. */
  public static readonly METRIC_NAMESPACE: string = METRIC_NAMESPACE;

  /**
   * The TCP port of the nodes' rpc.mountd, which clients other than `FsCacheClientLaunchTemplate`s need with NFSv3.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md#nfsv3-or-nfsv41-between-clients-and-nodes
   */
  public static readonly MOUNTD_PORT: number = NFS_MOUNTD_PORT;

  /**
   * The TCP port the nodes serve their mirrors on, beside the re-export's 2049.
   * A second nfsd of its own keeps the mirrors answering while the re-export waits on an unreachable origin.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/mirrors.md
   */
  public static readonly MIRROR_PORT: number = NFS_MIRROR_PORT;

  /**
   * A fleet defined in another stack or app, for clients that mount it (`MountSource.cacheFleet(fleet)`).
   * They are let into its security group on TCP 2049, and on `MIRROR_PORT` when they mount its mirrors.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/getting-started.md#a-fleet-of-another-stack-or-app-and-stacks-apart
   */
  public static fromCacheFleetAttributes(scope: Construct, id: string, attrs: CacheFleetAttributes): ICacheFleet {
    return new ImportedCacheFleet(scope, id, attrs);
  }

  /**
   * Where clients connect: the nodes' security group (Route 53) or the load balancer's (NLB), port 2049 (the mirrors:
   * `MIRROR_PORT`).
   */
  public readonly connections: ec2.Connections;
  /** The nodes' security group. */
  public readonly securityGroup: ec2.SecurityGroup;
  /** What the nodes cache: the `origin` prop. */
  public readonly origin: CacheOrigin;
  /** The nodes' IAM role. */
  public readonly role: iam.Role;
  /** The nodes' role, to grant them more (`bucket.grantRead(fleet)`). */
  public readonly grantPrincipal: iam.IPrincipal;
  /** The nodes of a fixed fleet (`Capacity.nodes()`); empty for an elastic fleet (`autoScalingGroup`). */
  public readonly nodes: ICacheNode[];
  /** An elastic fleet's one Auto Scaling group (`Capacity.elastic()`); undefined for a fixed fleet, whose nodes each have one. */
  public readonly autoScalingGroup?: autoscaling.AutoScalingGroup;
  /** How many nodes the fleet has: the `capacity` prop, `Capacity.nodes(2)` unless given. */
  public readonly capacity: Capacity;
  /**
   * The one launch template of every node: IMDSv2 required, instance metadata tags on, an encrypted gp3 root volume.
   * Each node's group tags its instances with what makes them that node.
   */
  public readonly launchTemplate: ec2.LaunchTemplate;
  /**
   * Commands of your own for the nodes, run once on a node's first boot, after the library's bootstrap succeeded.
   * The node has then signalled CloudFormation, so they never decide whether it serves.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/getting-started.md#boot-steps-of-your-own-and-how-the-instances-get-their-code
   */
  public readonly userData: ec2.UserData;
  /** Estimated size of the nodes' user data in bytes (tokens counted generously), without commands added to `userData`. */
  public readonly userDataBytes: number;
  /** The nodes' second cache level: the `nodeDiskCache` prop, or its default for the node type. */
  public readonly nodeDiskCache: NodeDiskCache;
  /** The private hosted zone of the fleet's names (Route 53 fan-out): its own, or the `hostedZone` it was given. */
  public readonly hostedZone?: route53.IPrivateHostedZone;
  /** The internal Network Load Balancer in front of the nodes (NLB fan-out). */
  public readonly loadBalancer?: elbv2.NetworkLoadBalancer;
  /** The load balancer's target group of the nodes, port 2049 (NLB fan-out). */
  public readonly targetGroup?: elbv2.NetworkTargetGroup;
  /** The load balancer's target group of the nodes' mirrors, port 2050 (NLB fan-out, with mirrors). */
  public readonly mirrorTargetGroup?: elbv2.NetworkTargetGroup;
  /**
   * How clients reach the nodes: the `fanOut` prop, by default `FanOut.networkLoadBalancer()` for an elastic fleet and
   * `FanOut.route53()` otherwise.
   */
  public readonly fanOut: FanOut;
  /** The Route 53 records or the load balancer (construct id `FanOut`). */
  private readonly fanOutResources: FanOutResources;
  /** The name clients mount: every node (Route 53 round robin) or the load balancer. */
  public readonly endpoint: string;
  /** The path clients mount from the fleet. */
  public readonly exportPath: string;
  /**
   * The export's fsid, the same on every node: a UUID, or a number with NFSv3.
   * It is derived from this construct's path and the origin path (an NFS server's export path included).
   */
  public readonly fsid: string;
  /** nfsd threads per node (`tuning.nfsdThreads`, or its default for the node type). */
  public readonly nfsdThreads: number;
  /** The nodes' instance type. */
  public readonly instanceType: ec2.InstanceType;
  /** Whether the nodes' interfaces, the stable one included, have ENA Express on (`enaExpress`). */
  public readonly enaExpress: boolean;
  /** How long nodes cache the origin's file attributes: a change on EFS shows through a node after at most this. */
  public readonly attributeCacheTimeout: Duration;
  /** How long nodes cache the origin's directory attributes and listings. */
  public readonly directoryCacheTimeout: Duration;
  /** The `Group` dimension of the metrics the nodes publish (namespace CdkEfsCache): this construct's path. */
  public readonly metricsGroup: string;
  /** Where the fleet exports each of its mirrors (`mirrors`): the paths and fsids clients mount. */
  public readonly mirrorExports: MirrorExport[];
  /** The NFS version clients mount the fleet with (`clientNfsVersion`): `NfsVersion.NFS_V4_1` or `NfsVersion.NFS_V3`. */
  public readonly clientNfsVersion: NfsVersion;
  /**
   * With `warming`: an SSM Command document that warms the nodes on demand, for example after new data landed.
   * It runs the same warming as at boot and on the re-warm timer.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/data-loading.md
   */
  public readonly warmDocument?: ssm.CfnDocument;

  constructor(scope: Construct, id: string, props: CacheFleetProps) {
    super(scope, id);
    refuseRemovedProps(this, props, REMOVED_FLEET_PROPS);
    const instance = resolveInstance(this, props, DEFAULTS);
    this.instanceType = instance.instanceType;
    warnIfNotEncryptedInTransit(this, 'instanceType', 'cache nodes', this.instanceType);
    warnIfClientsBeyondVpc(this, 'clientCidrs', props.clientCidrs ?? [], props.vpc);
    const facts = instanceTypeFacts(this.instanceType);
    this.nodeDiskCache = validateCacheFleetOptions(this, props, facts);
    this.origin = resolveOrigin(this, props);

    this.capacity = props.capacity ?? DEFAULTS.capacity;
    this.attributeCacheTimeout = props.attributeCacheTimeout ?? DEFAULTS.attributeCacheTimeout;
    this.directoryCacheTimeout = props.directoryCacheTimeout ?? DEFAULTS.directoryCacheTimeout;
    this.exportPath = props.exportPath ?? DEFAULTS.exportPath;
    this.nfsdThreads = this.nfsdThreadsFor(props, facts);
    this.clientNfsVersion = props.clientNfsVersion ?? DEFAULTS.clientNfsVersion;
    // NFSv3: a number (4 bytes in every file handle) rather than a UUID (16), room for a longer origin handle in 64.
    const originKey = originFsidKey(this.origin, props.originPath ?? DEFAULTS.originPath);
    this.fsid = fsidFor(this.node.path, originKey, this.clientNfsVersion === NfsVersion.NFS_V3);
    this.metricsGroup = this.node.path;
    this.mirrorExports = this.mirrorExportsOf(props);
    this.fanOut = props.fanOut ?? defaultFanOut(this.capacity);
    this.enaExpress = this.enaExpressOf(props);

    this.securityGroup = this.nodeSecurityGroup(props);
    this.role = nodeRole(this, this.origin);
    grantS3Mirrors(this.role, props);
    this.grantPrincipal = this.role;
    const subnets = this.nodeSubnets(props);
    const rendered = this.renderBootstrap(props);
    this.userData = ec2.UserData.forLinux({ shebang: '' });
    validateUserCommands(this, rendered, this.userData, `the cache nodes of ${this.node.path}`);
    this.launchTemplate = this.nodeLaunchTemplate(instance, rendered);
    if (this.enaExpress) enableEnaExpress(this.launchTemplate);
    this.userDataBytes = rendered.estimatedBytes;

    this.autoScalingGroup = this.elasticNodes(props, subnets);
    const nodes = this.fixedNodes(props, subnets);
    this.nodes = nodes;
    grantNodeRole(this, this.role, nodes, props.metrics ?? DEFAULTS.metrics);
    this.fanOutResources = new FanOutResources(this, 'FanOut', {
      fanOut: this.fanOut,
      vpc: props.vpc,
      nodes,
      ...(this.autoScalingGroup ? { autoScalingGroup: this.autoScalingGroup, subnets } : {}),
      nodeSecurityGroup: this.securityGroup,
      mirrors: this.mirrorExports.length > 0,
    });
    this.endpoint = this.fanOutResources.endpoint;
    this.connections = this.fanOutResources.connections;
    this.hostedZone = this.fanOutResources.hostedZone;
    this.loadBalancer = this.fanOutResources.loadBalancer;
    this.targetGroup = this.fanOutResources.targetGroup;
    this.mirrorTargetGroup = this.fanOutResources.mirrorTargetGroup;
    this.warmDocument = this.warmDocumentOf(props);
  }

  /**
   * The name of the nodes in one Availability Zone (Route 53 fan-out), so that clients can stay in their zone.
   * It is the fleet-wide name for a zone without nodes, and always behind an NLB.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   */
  public endpointForAvailabilityZone(availabilityZone: string): string {
    return this.fanOutResources.endpointForAvailabilityZone(availabilityZone);
  }

  /** Bytes sent by all nodes together (sum per period). */
  public metricNetworkOut(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    if (this.autoScalingGroup) return autoScalingGroupMetric(this.autoScalingGroup, NODE_GROUP_METRICS.networkOut, { label: 'Cache tier NetworkOut', ...props });
    return sumOfMetrics(this.nodes.map((n) => n.metricNetworkOut()), 'Cache tier NetworkOut', props);
  }

  /**
   * Nodes in service (sum over the node groups' GroupInServiceInstances, minimum per period; an elastic fleet's group's
   * own).
   */
  public metricNodesInService(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    if (this.autoScalingGroup) return autoScalingGroupMetric(this.autoScalingGroup, NODE_GROUP_METRICS.inService, { label: 'Cache nodes in service', ...props });
    return sumOfMetrics(this.nodes.map((n) => n.metricInService()), 'Cache nodes in service', props);
  }

  /** CPU utilization of the nodes (average over the nodes per period): an elastic fleet's group, or every node's. */
  public metricCpuUtilization(props?: cloudwatch.MathExpressionOptions): cloudwatch.IMetric {
    if (this.autoScalingGroup) return autoScalingGroupMetric(this.autoScalingGroup, NODE_GROUP_METRICS.cpuUtilization, { label: 'Cache nodes CPU', ...props });
    return new cloudwatch.MathExpression({
      expression: `(${this.nodes.map((_n, i) => `n${i}`).join(' + ')}) / ${this.nodes.length}`,
      usingMetrics: Object.fromEntries(this.nodes.map((n, i) => [`n${i}`, n.metricCpuUtilization()])),
      label: 'Cache nodes CPU',
      period: Duration.minutes(1),
      ...props,
    });
  }

  /**
   * Healthy nodes: the target group's HealthyHostCount (minimum) behind an NLB, nodes in service with Route 53.
   * With Route 53 it is a sum over the nodes, which one CloudWatch alarm takes for up to 10 nodes: `CacheDashboard` splits larger fleets.
   */
  public metricHealthyNodes(props?: cloudwatch.MetricOptions): cloudwatch.IMetric {
    const tg = this.targetGroup;
    return tg ? tg.metrics.healthyHostCount({ statistic: 'Minimum', period: Duration.minutes(1), ...props }) : this.metricNodesInService(props);
  }

  /** NFS operations the nodes served (sum per period; published by the nodes), the mirrors' included. */
  public metricNfsdOps(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdOps, props);
  }

  /** Bytes clients read from the nodes (sum per period): what the cache tier served instead of EFS, the mirrors' included. */
  public metricNfsdBytesRead(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdBytesRead, props);
  }

  /**
   * Requests that waited for a free thread of the nodes' re-export nfsd (sum per period).
   * More threads would help when it is nonzero.
   */
  public metricNfsdRequestsQueued(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdRequestsQueued, props);
  }

  /** Threads of the nodes' nfsd, the re-export's, per node (average); the mirrors' own nfsd runs as many. */
  public metricNfsdThreads(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.nfsdThreads, props);
  }

  /** Page cache per node, bytes (average): the RAM cache. */
  public metricPageCacheBytes(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, NODE_METRICS.pageCacheBytes, props);
  }

  /**
   * A metric of the nodes' disk caches (`nodeDiskCache`; `DiskCacheMetric`): the counters summed per period, the free
   * space as its minimum. Nothing is published without the disk cache.
   */
  public metricNodeDiskCache(metric: DiskCacheMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, namedMetric(metric), props);
  }

  /**
   * A mirror metric of the nodes: the counters summed per period, the gauges as their maximum over the nodes.
   * The counters are `SYNC_FAILURES` and `ORIGIN_OPS`; `AGE_SECONDS`, `SYNC_SECONDS`, `FILES_WALKED`, `FULL` and `BYTES` are gauges.
   */
  public metricMirror(metric: MirrorMetric, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return groupMetric(this.metricsGroup, namedMetric(metric), props);
  }

  /** nfsd's threads: `tuning.nfsdThreads`, or two per vCPU (at least 8; 64 for a type whose size is not known). */
  private nfsdThreadsFor(props: CacheFleetProps, facts: InstanceTypeFacts): number {
    const givenThreads = props.tuning?.nfsdThreads;
    const threads = givenThreads ?? (facts.vcpus !== undefined ? Math.max(8, 2 * facts.vcpus) : 64);
    warnUnknownNodeSize(this, this.instanceType, facts, givenThreads === undefined ? threads : undefined);
    return threads;
  }

  /**
   * `enaExpress`, checked against the node type; behind a load balancer a warning, since ENA Express works between
   * instances and clients' flows then end at the load balancer.
   */
  private enaExpressOf(props: CacheFleetProps): boolean {
    const on = props.enaExpress ?? DEFAULTS.enaExpress;
    if (!on) return false;
    checkEnaExpressType(this, 'enaExpress', this.instanceType);
    if (this.fanOut._networkLoadBalancer !== undefined) {
      Annotations.of(this).addWarningV2('cdk-efs-cache:enaExpressBehindLoadBalancer', 'enaExpress: clients reach the nodes ' +
        'through a Network Load Balancer, and ENA Express works only on flows between two instances that have it: the ' +
        `clients' flows to the nodes do not use it. Route 53 fan-out (FanOut.route53()) gives them direct flows; see ${ENA_EXPRESS_DOC}.`);
    }
    return true;
  }

  /** The mirrors' exports: the path mirrors, then the S3 mirrors, each in their order (their handles come from those orders). */
  private mirrorExportsOf(props: CacheFleetProps): MirrorExport[] {
    return [
      ...pathMirrors(props).map((p) => ({ path: p, exportPath: mirrorExportPath(this.exportPath, p), fsid: mirrorFsid(this.node.path, p) })),
      // An S3 mirror has no node path: clients name it by its export path.
      ...s3Mirrors(props).map((m) => ({ path: m.exportPath, exportPath: m.exportPath, fsid: s3MirrorFsid(this.node.path, m) })),
    ];
  }

  /** The nodes' security group: HTTPS out, and NFS out to the origin. */
  private nodeSecurityGroup(props: CacheFleetProps): ec2.SecurityGroup {
    const group = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: 'EFS cache nodes: NFS (TCP 2049) from allowed clients only',
      allowAllOutbound: false,
    });
    group.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'HTTPS: packages, SSM, CloudFormation signal');
    // Both rules (out of the nodes, into the origin's group) in this fleet's stack when the origin's group is of
    // another: the fleet depends on the origin, never the other way round.
    allowNodesToOrigin(group, this.origin);
    return group;
  }

  /** The subnets of the nodes, with a warning naming the VPC endpoints isolated subnets would need. */
  private nodeSubnets(props: CacheFleetProps): ec2.ISubnet[] {
    const subnets = props.vpc.selectSubnets(props.vpcSubnets ?? defaultSubnets(props.vpc)).subnets;
    if (subnets.length === 0) throw propError(this, 'vpcSubnets', 'selects no subnet of the VPC.');
    warnIfIsolated(this, 'vpcSubnets', props.vpc, subnets, [ENDPOINT_NEEDS.packages, s3Need(...(s3Mirrors(props).length ? ['the S3 mirrors'] : [])),
      ENDPOINT_NEEDS.cloudFormation, ...(this.fanOut._networkLoadBalancer !== undefined ? [] : [ENDPOINT_NEEDS.ec2]),
      ...(this.capacity._elastic ? [ENDPOINT_NEEDS.autoScaling] : []),
      ...(props.metrics ?? DEFAULTS.metrics ? [ENDPOINT_NEEDS.cloudWatch] : []), ENDPOINT_NEEDS.ssm]);
    return subnets;
  }

  /** The nodes' bootstrap (assets/cache-node/bootstrap.sh) with its parameters, readable by the nodes' role. */
  private renderBootstrap(props: CacheFleetProps): RenderedScript {
    // An NFS server's helper is unused: its mount type and options follow its version.
    const mountHelper = this.origin.mountHelper ?? MountHelper.EFS_UTILS;
    if (this.origin.fileSystem) {
      checkEfsMount(this, this.origin.fileSystem, { helperProp: 'origin.mountHelper', helper: mountHelper }, !!props.machineImage);
    }
    if (props.metrics ?? DEFAULTS.metrics) grantPutMetricData(this.role);
    const rendered = renderScript({
      script: 'cache-node/bootstrap.sh',
      description: `the cache nodes of ${this.node.path}`,
      scope: this,
      parameters: {
        ...nodeParameters(this, props, {
          origin: this.origin, exportPath: this.exportPath, fsid: this.fsid, nfsdThreads: this.nfsdThreads, diskCache: this.nodeDiskCache._enabled,
          clientNfsVersion: this.clientNfsVersion, mountHelper,
        }),
        // An elastic fleet's node completes the group's launch hook once it serves, and drains at its terminate hook.
        ...(this.capacity._elastic ? { EFSC_LIFECYCLE_LAUNCH_HOOK: LIFECYCLE_HOOKS.launch, EFSC_LIFECYCLE_DRAIN_HOOK: LIFECYCLE_HOOKS.drain } : {}),
      },
    });
    rendered.grantRead(this.role);
    return rendered;
  }

  /** The nodes' launch template: IMDSv2 with instance tags, the encrypted root volume, the bootstrap then `userData`. */
  private nodeLaunchTemplate(instance: ResolvedInstance, rendered: RenderedScript): ec2.LaunchTemplate {
    const template = new ec2.LaunchTemplate(this, 'LaunchTemplate', {
      instanceType: this.instanceType,
      machineImage: instance.machineImage,
      role: this.role,
      securityGroup: this.securityGroup,
      requireImdsv2: true,
      httpPutResponseHopLimit: 1,
      instanceMetadataTags: true,
      // An elastic fleet scales on the nodes' NetworkOut: per minute rather than per 5 minutes.
      ...(this.capacity._elastic ? { detailedMonitoring: true } : {}),
      blockDevices: [instance.rootVolume],
      userData: ec2.UserData.custom(Lazy.string({ produce: () => withUserCommands(rendered, this.userData, `the cache nodes of ${this.node.path}`) })),
    });
    instance.checkOs(template.osType);
    return template;
  }

  /** An elastic fleet's one Auto Scaling group of nodes (`Capacity.elastic()`); undefined for a fixed fleet. */
  private elasticNodes(props: CacheFleetProps, subnets: ec2.ISubnet[]): autoscaling.AutoScalingGroup | undefined {
    const elastic = this.capacity._elastic;
    if (!elastic) return undefined;
    return new ElasticNodes(this, 'Nodes', {
      vpc: props.vpc,
      subnets,
      launchTemplate: this.launchTemplate,
      capacity: elastic,
      signalTimeout: props.signalTimeout ?? DEFAULTS.signalTimeout,
      fleet: this,
      role: this.role,
    }).autoScalingGroup;
  }

  /** A fixed fleet's nodes (`Capacity.nodes(n)`), each a group of one, spread over the subnets in turn. */
  private fixedNodes(props: CacheFleetProps, subnets: ec2.ISubnet[]): CacheNode[] {
    const nlb = this.fanOut._networkLoadBalancer !== undefined;
    return Array.from({ length: this.capacity._nodeCount ?? 0 }, (_n, i) => new CacheNode(this, `Node${i + 1}`, {
      vpc: props.vpc,
      subnet: subnets[i % subnets.length],
      launchTemplate: this.launchTemplate,
      securityGroup: this.securityGroup,
      stableAddress: !nlb,
      loadBalancerHealthChecks: nlb,
      signalTimeout: props.signalTimeout ?? DEFAULTS.signalTimeout,
      nodeNumber: i + 1,
    }));
  }

  /** The SSM document that warms the nodes' RAM cache on demand, when `warming.paths` are given. */
  private warmDocumentOf(props: CacheFleetProps): ssm.CfnDocument | undefined {
    const warmPaths = props.warming?.paths ?? [];
    if (!warmPaths.length) return undefined;
    return new ssm.CfnDocument(this, 'WarmDocument', {
      documentType: 'Command',
      updateMethod: 'NewVersion',
      content: {
        schemaVersion: '2.2',
        description: `Warm the RAM cache of the EFS cache nodes of ${this.node.path}: read ${warmPaths.join(' ')} in parallel.`,
        mainSteps: [{
          action: 'aws:runShellScript',
          name: 'warm',
          inputs: { runCommand: ['/usr/local/sbin/efs-cache-warm'], timeoutSeconds: '21600' },
        }],
      },
    });
  }
}
