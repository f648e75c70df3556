import { Annotations, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct, IConstruct } from 'constructs';
import { HOPS_DOC } from '../instance/transit';
import { NFS_MIRROR_PORT, NFS_PORT } from '../nfs/ports';
import { propError } from '../private/errors';
import { acknowledgeCompliance } from '../private/nag';
import { CacheNode } from './cache-node';
import { FanOut } from './fan-out';
import { claimName, idOrPath, normalName } from './fan-out-names';
import { AccessLogsOptions, NETWORK_LOAD_BALANCER_FAN_OUT_DEFAULTS, NetworkLoadBalancerFanOutOptions, ROUTE53_FAN_OUT_DEFAULTS, Route53FanOutOptions } from './fan-out-options';
import { AZ_NAME_MAX, bucketEncryption, checkRecordNameLengths } from './fan-out-validation';

/** Properties of `FanOutResources` (internal: a fleet makes its own). */
export interface FanOutProps {
  /** The fan-out, validated (`FanOut._validate`). */
  readonly fanOut: FanOut;
  /** The VPC. */
  readonly vpc: ec2.IVpc;
  /** The nodes behind the fan-out. */
  readonly nodes: CacheNode[];
  /**
   * An elastic fleet's one Auto Scaling group, the load balancer's target instead of `nodes` (which is then empty).
   *
   * @default - none: the targets are `nodes`
   */
  readonly autoScalingGroup?: autoscaling.AutoScalingGroup;
  /**
   * The subnets of an elastic fleet's group: the load balancer gets one in each of their Availability Zones.
   *
   * @default - the subnets of `nodes`
   */
  readonly subnets?: ec2.ISubnet[];
  /** The nodes' security group (NLB mode lets the load balancer in on 2049, and on 2050 with `mirrors`). */
  readonly nodeSecurityGroup: ec2.ISecurityGroup;
  /**
   * Whether the nodes serve mirrors (`mirrors`), on their own port (`CacheFleet.MIRROR_PORT`, 2050). NLB mode then
   * adds a listener on that port with a target group of its own, and lets the load balancer into the nodes' group on
   * it too; Route 53 mode needs nothing more (clients reach the nodes' addresses on any port their group lets in).
   *
   * @default false
   */
  readonly mirrors?: boolean;
}

/**
 * Turns on a Network Load Balancer's access logs to `bucket` the way NLBs deliver them: through the log delivery
 * service (`delivery.logs.amazonaws.com`), which the bucket's policy lets write under the prefix, for this account
 * only. (aws-cdk-lib's `logAccessLogs` also grants the regional ELB account, which Application Load Balancers use,
 * and so needs a stack with a concrete region.) A bucket of another app keeps its own policy: it must allow the same.
 * A bucket encrypted with a customer managed KMS key: the key's policy lets the log delivery service use it too (AWS,
 * "Access logs for your Network Load Balancer": SSE-S3, or SSE-KMS with a customer managed key whose policy lets
 * delivery.logs.amazonaws.com encrypt with it); an imported key keeps its own policy, and a warning says what it needs.
 */
function grantNlbAccessLogs(nlb: elbv2.NetworkLoadBalancer, bucket: s3.IBucket, prefix = ''): void {
  nlb.setAttribute('access_logs.s3.enabled', 'true');
  nlb.setAttribute('access_logs.s3.bucket', bucket.bucketName);
  nlb.setAttribute('access_logs.s3.prefix', prefix);
  const account = Stack.of(nlb).account;
  const delivery = new iam.ServicePrincipal('delivery.logs.amazonaws.com');
  const added = bucket.addToResourcePolicy(new iam.PolicyStatement({
    principals: [delivery],
    actions: ['s3:PutObject'],
    resources: [bucket.arnForObjects(`${prefix ? `${prefix}/` : ''}AWSLogs/${account}/*`)],
    conditions: { 'StringEquals': { 's3:x-amz-acl': 'bucket-owner-full-control', 'aws:SourceAccount': account } },
  }));
  bucket.addToResourcePolicy(new iam.PolicyStatement({
    principals: [delivery],
    actions: ['s3:GetBucketAcl'],
    resources: [bucket.bucketArn],
    conditions: { StringEquals: { 'aws:SourceAccount': account } },
  }));
  // The load balancer checks that it may write when it is created: after the policy that lets it.
  if (added.statementAdded && added.policyDependable) nlb.node.addDependency(added.policyDependable);
  const key = bucketEncryption(bucket).key;
  if (!key) return;
  const keyAdded = key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [delivery],
    actions: ['kms:Encrypt', 'kms:Decrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:DescribeKey'],
    resources: ['*'],
    conditions: { StringEquals: { 'aws:SourceAccount': account } },
  }));
  if (keyAdded.statementAdded) {
    // The key's policy is part of the key: the load balancer after it, as after the bucket's policy.
    if (key instanceof kms.Key) nlb.node.addDependency(key);
    return;
  }
  Annotations.of(nlb).addWarningV2('cdk-efs-cache:accessLogsKey', 'fanOut.accessLogs.bucket: the bucket is encrypted ' +
    'with a KMS key this app cannot change (imported): its key policy must let the service principal ' +
    'delivery.logs.amazonaws.com use it (kms:GenerateDataKey* and kms:Encrypt, for this account), or the load balancer ' +
    'cannot write its access logs. Add that statement to the key\'s policy, or give a bucket encrypted with SSE-S3.');
}

/** What one mode of `FanOutResources` makes that a fleet shows: its endpoint and connections, and its resources. */
interface FanOutParts {
  readonly endpoint: string;
  readonly connections: ec2.Connections;
  readonly hostedZone?: route53.IPrivateHostedZone;
  readonly loadBalancer?: elbv2.NetworkLoadBalancer;
  readonly targetGroup?: elbv2.NetworkTargetGroup;
  readonly mirrorTargetGroup?: elbv2.NetworkTargetGroup;
}

/**
 * The way clients reach a cache fleet: Route 53 records over the nodes' stable addresses, or an internal NLB. Internal:
 * `CacheFleet` makes it (construct id `FanOut`) and shows what users need of it (`hostedZone`, `loadBalancer`,
 * `targetGroup`, `mirrorTargetGroup`, `endpointForAvailabilityZone`, each node's `endpoint`).
 */
export class FanOutResources extends Construct implements ec2.IConnectable {
  /** The name clients mount. */
  public readonly endpoint: string;
  /** Where clients connect, port 2049. */
  public readonly connections: ec2.Connections;
  /** The private hosted zone (Route 53 mode). */
  public readonly hostedZone?: route53.IPrivateHostedZone;
  /** The load balancer (NLB mode). */
  public readonly loadBalancer?: elbv2.NetworkLoadBalancer;
  /** The target group of the nodes (NLB mode). */
  public readonly targetGroup?: elbv2.NetworkTargetGroup;
  /** The target group of the nodes' mirrors, port 2050 (NLB mode, with `mirrors`). */
  public readonly mirrorTargetGroup?: elbv2.NetworkTargetGroup;
  private readonly zonal: Array<{ az: string; name: string }> = [];

  constructor(scope: Construct, id: string, props: FanOutProps) {
    super(scope, id);
    const r53 = props.fanOut._route53;
    const parts = r53
      ? this.route53(scope.node.path, props, r53)
      : this.networkLoadBalancer(props, props.fanOut._networkLoadBalancer ?? {});
    this.endpoint = parts.endpoint;
    this.connections = parts.connections;
    this.hostedZone = parts.hostedZone;
    this.loadBalancer = parts.loadBalancer;
    this.targetGroup = parts.targetGroup;
    this.mirrorTargetGroup = parts.mirrorTargetGroup;
  }

  /**
   * The name of the nodes in one AZ (Route 53 mode), so clients can stay in their AZ; the fleet-wide name for an
   * AZ without nodes, and always in NLB mode (cross-zone off already keeps flows in the AZ).
   */
  public endpointForAvailabilityZone(az: string): string {
    return this.zonal.find((z) => z.az === az)?.name ?? this.endpoint;
  }

  /** Route 53 mode: a private hosted zone (unless given), a record of every node, one per AZ and one per node. */
  private route53(fleet: string, props: FanOutProps, r53: Route53FanOutOptions): FanOutParts {
    if (!r53.hostedZone) this.claimZoneName(fleet, props.vpc, r53.zoneName ?? ROUTE53_FAN_OUT_DEFAULTS.zoneName);
    const zone = r53.hostedZone ?? new route53.PrivateHostedZone(this, 'Zone', {
      zoneName: r53.zoneName ?? ROUTE53_FAN_OUT_DEFAULTS.zoneName,
      vpc: props.vpc,
      comment: 'cdk-efs-cache: names of the cache nodes',
    });
    const recordName = r53.recordName ?? ROUTE53_FAN_OUT_DEFAULTS.recordName;
    checkRecordNameLengths(this, r53.zoneName !== undefined || r53.hostedZone !== undefined, props.nodes.flatMap((n) => {
      const az = n.subnet.availabilityZone;
      const azKnown = !Token.isUnresolved(az);
      return [
        { name: `node${n.nodeNumber}.${recordName}.${zone.zoneName}` },
        { name: `${azKnown ? az : '<az>'}.${recordName}.${zone.zoneName}`, extra: azKnown ? 0 : AZ_NAME_MAX - '<az>'.length },
      ];
    }));
    for (const name of [recordName, ...props.nodes.map((n) => `node${n.nodeNumber}.${recordName}`)]) {
      if (Token.isUnresolved(name)) continue;
      claimName(this, fleet, `zone ${idOrPath(zone.hostedZoneId, zone)} record ${normalName(name)}`, 'fanOut.recordName',
        `the record '${name}' in this hosted zone already belongs to the fleet`, 'two fleets would write the same ' +
        'record set, which Route 53 refuses. Give each fleet that shares a zone its own recordName.');
    }
    const ttl = r53.recordTtl ?? ROUTE53_FAN_OUT_DEFAULTS.recordTtl;
    const addresses = props.nodes.map((n) => n.address!);
    new route53.ARecord(this, 'All', {
      zone,
      recordName,
      target: route53.RecordTarget.fromIpAddresses(...addresses),
      ttl,
      comment: 'every cache node (DNS round robin)',
    });
    const endpoint = `${recordName}.${zone.zoneName}`;
    this.zoneRecords(zone, recordName, ttl, props.nodes);
    this.nodeRecords(zone, recordName, ttl, props.nodes);
    return { endpoint, connections: nfsConnections(props.nodeSecurityGroup), hostedZone: zone };
  }

  /**
   * Claims a new private zone's name on the VPC for the fleet. Refused when another fleet's zone, or a private hosted
   * zone of the app's, has that name there, now or when the app is synthesized.
   */
  private claimZoneName(fleet: string, vpc: ec2.IVpc, zoneName: string): void {
    claimName(this, fleet, `vpc ${idOrPath(vpc.vpcId, vpc)} zone ${normalName(zoneName)}`,
      'fanOut.zoneName', `a private hosted zone named '${zoneName}' on this VPC already belongs to ` +
      'the fleet', 'Route 53 refuses a second private zone of the same name on one VPC. Give this fleet another ' +
      'zoneName, or put its records in the other fleet\'s zone: FanOut.route53({ hostedZone: other.hostedZone }) with a ' +
      'recordName of its own.');
    const userZoneError = () => {
      const other = userZoneOfName(this, normalName(zoneName), vpc.vpcId);
      return other === undefined ? undefined : propError(this, 'fanOut.zoneName', `the private hosted zone ${other} is also ` +
        `named '${zoneName}' and is associated with this VPC: Route 53 refuses a second private zone of one name on a ` +
        'VPC, at deploy time. Give the fleet another zoneName, or put its records in that zone (hostedZone, with a ' +
        'recordName of its own).');
    };
    const now = userZoneError();
    if (now) throw now;
    // A zone of the user's made after the fleet: found when the app is synthesized.
    this.node.addValidation({ validate: () => { const later = userZoneError(); return later ? [later.message] : []; } });
  }

  /** One record per AZ that has nodes (`Zone1`, `Zone2`, ...: in the order of the nodes), each AZ's name kept. */
  private zoneRecords(zone: route53.IPrivateHostedZone, recordName: string, ttl: Duration, nodes: CacheNode[]): void {
    const byAz: Array<{ az: string; addresses: string[] }> = [];
    for (const n of nodes) {
      const az = n.subnet.availabilityZone;
      const group = byAz.find((g) => g.az === az);
      if (group) group.addresses.push(n.address!);
      else byAz.push({ az, addresses: [n.address!] });
    }
    byAz.forEach((g, i) => {
      new route53.ARecord(this, `Zone${i + 1}`, {
        zone,
        recordName: `${g.az}.${recordName}`,
        target: route53.RecordTarget.fromIpAddresses(...g.addresses),
        ttl,
        comment: 'the cache nodes of one AZ',
      });
      this.zonal.push({ az: g.az, name: `${g.az}.${recordName}.${zone.zoneName}` });
    });
  }

  /** One record per node (`node<N>.<recordName>`), which becomes the node's endpoint. */
  private nodeRecords(zone: route53.IPrivateHostedZone, recordName: string, ttl: Duration, nodes: CacheNode[]): void {
    for (const n of nodes) {
      new route53.ARecord(this, `Node${n.nodeNumber}`, {
        zone,
        recordName: `node${n.nodeNumber}.${recordName}`,
        target: route53.RecordTarget.fromIpAddresses(n.address!),
        ttl,
        comment: `cache node ${n.nodeNumber}`,
      });
      n.setEndpoint(`node${n.nodeNumber}.${recordName}.${zone.zoneName}`);
    }
  }

  /** NLB mode: an internal load balancer in its own security group, one listener and target group per port served. */
  private networkLoadBalancer(props: FanOutProps, options: NetworkLoadBalancerFanOutOptions): FanOutParts {
    const securityGroup = new ec2.SecurityGroup(this, 'LoadBalancerSecurityGroup', {
      vpc: props.vpc,
      description: 'EFS cache load balancer: NFS (TCP 2049) from allowed clients only',
      allowAllOutbound: false,
    });
    const subnets = uniqueBy(props.subnets ?? props.nodes.map((n) => n.subnet), (s) => s.availabilityZone);
    const nlb = new elbv2.NetworkLoadBalancer(this, 'LoadBalancer', {
      vpc: props.vpc,
      internetFacing: false,
      vpcSubnets: { subnets },
      crossZoneEnabled: options.crossZone ?? NETWORK_LOAD_BALANCER_FAN_OUT_DEFAULTS.crossZone,
      securityGroups: [securityGroup],
    });
    nlbAccessLogs(nlb, options.accessLogs);
    Annotations.of(this).addWarningV2('cdk-efs-cache:nlbNotEncryptedInTransit', 'fanOut: the clients\' NFS through the ' +
      'Network Load Balancer travels in clear: the Nitro hardware encrypts traffic between instances only when no load ' +
      `balancer is on its path. Where it must be encrypted in transit, use FanOut.route53(); see ${HOPS_DOC}.`);
    acknowledgeCompliance(nlb, 'ELBDeletionProtectionEnabled', 'The load balancer holds no data and is recreated ' +
      'with the fleet; deletion protection would make every stack deletion fail until it is turned off by hand.');
    const targetGroup = this.forward(nlb, props, options, NFS_PORT, { targetGroup: 'Nodes', listener: 'Nfs' });
    props.nodeSecurityGroup.connections.allowFrom(securityGroup, ec2.Port.tcp(NFS_PORT), 'NFS and health checks from the cache load balancer');
    let mirrorTargetGroup: elbv2.NetworkTargetGroup | undefined;
    if (props.mirrors) {
      mirrorTargetGroup = this.forward(nlb, props, options, NFS_MIRROR_PORT, { targetGroup: 'MirrorNodes', listener: 'MirrorNfs' });
      props.nodeSecurityGroup.connections.allowFrom(securityGroup, ec2.Port.tcp(NFS_MIRROR_PORT),
        'NFS to the mirrors and health checks from the cache load balancer');
    }
    return {
      endpoint: nlb.loadBalancerDnsName,
      connections: nfsConnections(securityGroup),
      loadBalancer: nlb,
      targetGroup,
      mirrorTargetGroup,
    };
  }

  /**
   * Adds a listener and its target group for one port the nodes serve: the re-export's 2049, or the mirrors' 2050.
   * Both are set alike. Each checks its own port: a node that does not answer on one leaves that rotation, and its Auto
   * Scaling group (ELB health checks) replaces it, as it does for 2049 alone without mirrors.
   */
  private forward(nlb: elbv2.NetworkLoadBalancer, props: FanOutProps, options: NetworkLoadBalancerFanOutOptions, port: number,
    ids: { targetGroup: string; listener: string }): elbv2.NetworkTargetGroup {
    const targetGroup = new elbv2.NetworkTargetGroup(this, ids.targetGroup, {
      vpc: props.vpc,
      port,
      protocol: elbv2.Protocol.TCP,
      targetType: elbv2.TargetType.INSTANCE,
      preserveClientIp: true,
      targets: props.autoScalingGroup ? [props.autoScalingGroup] : props.nodes.map((n) => n.autoScalingGroup),
      healthCheck: {
        protocol: elbv2.Protocol.TCP,
        port: String(port),
        interval: Duration.seconds(10),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 2,
      },
      deregistrationDelay: Duration.seconds(30),
    });
    // An elastic fleet's node that goes is deregistered first: at the end of the delay the load balancer resets
    // the connections it still holds, and their clients reconnect through it to another node.
    if (props.autoScalingGroup) targetGroup.setAttribute('deregistration_delay.connection_termination.enabled', 'true');
    targetGroup.setAttribute('stickiness.enabled', 'true');
    targetGroup.setAttribute('stickiness.type', 'source_ip');
    const listener = nlb.addListener(ids.listener, {
      port,
      protocol: elbv2.Protocol.TCP,
      defaultTargetGroups: [targetGroup],
      tcpIdleTimeout: options.idleTimeout ?? NETWORK_LOAD_BALANCER_FAN_OUT_DEFAULTS.idleTimeout,
    });
    acknowledgeCompliance(listener, 'ELBv2ACMCertificateRequired', 'A TCP listener for NFS: NFS clients speak no TLS ' +
      'to a load balancer, so a TLS listener with an ACM certificate would break every mount. The traffic stays ' +
      `inside the VPC, between security groups that allow only TCP ${props.mirrors ? `${NFS_PORT} and ${NFS_MIRROR_PORT}` : NFS_PORT}.`);
    return targetGroup;
  }
}

/** Where clients connect to a fan-out: the security group they are let into, NFS (TCP 2049) by default. */
function nfsConnections(securityGroup: ec2.ISecurityGroup): ec2.Connections {
  return new ec2.Connections({ securityGroups: [securityGroup], defaultPort: ec2.Port.tcp(NFS_PORT) });
}

/** Turns on a load balancer's access logs to the bucket of `accessLogs`; without it, acknowledges the checks that want them. */
function nlbAccessLogs(nlb: elbv2.NetworkLoadBalancer, accessLogs: AccessLogsOptions | undefined): void {
  if (accessLogs) {
    grantNlbAccessLogs(nlb, accessLogs.bucket, accessLogs.prefix);
    return;
  }
  const noAccessLogs = 'Network Load Balancers write access logs only for TLS listeners; this one forwards plain ' +
    'TCP 2049 (NFS), so there is nothing to log. Flows show in VPC flow logs. (The accessLogs option sets the ' +
    'attribute for policies that require it.)';
  Validations.of(nlb).acknowledge({ id: 'AwsSolutions-ELB2', reason: noAccessLogs });
  acknowledgeCompliance(nlb, 'ELBLoggingEnabled', noAccessLogs);
}

function uniqueBy<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((i) => (seen.has(key(i)) ? false : (seen.add(key(i)), true)));
}

/**
 * The path of a private hosted zone of the app's (a `route53.PrivateHostedZone`, or a `CfnHostedZone` with `vpcs`)
 * named `name` (normalized) and associated with the VPC whose id is `vpcId` (the same token, or the same literal id),
 * other than the fleets' own zones (which `claimName` checks): undefined if there is none.
 */
export function userZoneOfName(scope: IConstruct, name: string, vpcId: string): string | undefined {
  for (const c of scope.node.root.node.findAll()) {
    if (!(c instanceof route53.CfnHostedZone) || c.node.scopes.some((s) => s instanceof FanOutResources)) continue;
    if (typeof c.name !== 'string' || Token.isUnresolved(c.name) || normalName(c.name) !== name) continue;
    // A HostedZone keeps the VPCs it is associated with (addVpc too) in `vpcs`, rendered through a Lazy.
    const owner = c.node.scope;
    const vpcs: unknown = owner instanceof route53.HostedZone ? (owner as unknown as { vpcs?: unknown }).vpcs : c.vpcs;
    if (!Array.isArray(vpcs)) continue;
    if (vpcs.some((v) => typeof v === 'object' && v !== null && (v as { vpcId?: unknown }).vpcId === vpcId)) {
      return (owner instanceof route53.HostedZone ? owner : c).node.path;
    }
  }
  return undefined;
}
