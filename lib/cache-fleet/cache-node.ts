import { Duration, Tags, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct, IConstruct } from 'constructs';
import { autoScalingGroupMetric } from '../instance/metrics';
import { NODE_GROUP_METRICS } from './metrics';

/** The instance tags that tell a node which node it is (read at boot by assets/cache-node/bootstrap.sh node_identity). */
export const NODE_TAGS = { signalResource: 'cdk-efs-cache:signal-resource', stableEni: 'cdk-efs-cache:stable-eni' } as const;

/** What differs between the fleet's node groups: one group per node, or an elastic fleet's one group. */
export interface NodeGroupProps {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.ISubnet[];
  /** The fleet's one launch template. */
  readonly launchTemplate: ec2.LaunchTemplate;
  readonly minCapacity: number;
  readonly maxCapacity: number;
  /** Health checks of the group: EC2, or EC2 and the load balancer's (with `signalTimeout` as the grace period). */
  readonly loadBalancerHealthChecks: boolean;
  /** How long CloudFormation waits for the nodes' signals. */
  readonly signalTimeout: Duration;
  /** Nodes kept in service while a rolling update replaces them one at a time. */
  readonly minInstancesInService: number;
  /** Why the group has no scaling notification topic (cdk-nag AwsSolutions-AS3). */
  readonly noNotificationReason: string;
  readonly terminationPolicies?: autoscaling.TerminationPolicy[];
  readonly defaultInstanceWarmup?: Duration;
}

/**
 * The Auto Scaling group `Group` in `scope` that every node of a fleet is launched by, and what each instance learns
 * from it: CloudFormation waits for its nodes' signals, and each instance is tagged with the group's logical id, the
 * resource its bootstrap signals (`NODE_TAGS.signalResource`).
 */
export function nodeGroup(scope: Construct, props: NodeGroupProps): autoscaling.AutoScalingGroup {
  const group = new autoscaling.AutoScalingGroup(scope, 'Group', {
    vpc: props.vpc,
    vpcSubnets: { subnets: props.subnets },
    launchTemplate: props.launchTemplate,
    minCapacity: props.minCapacity,
    maxCapacity: props.maxCapacity,
    healthChecks: props.loadBalancerHealthChecks
      ? autoscaling.HealthChecks.withAdditionalChecks({
        additionalTypes: [autoscaling.AdditionalHealthCheckType.ELB],
        gracePeriod: props.signalTimeout,
      })
      : autoscaling.HealthChecks.ec2(),
    signals: autoscaling.Signals.waitForMinCapacity({ timeout: props.signalTimeout }),
    updatePolicy: autoscaling.UpdatePolicy.rollingUpdate({ maxBatchSize: 1, minInstancesInService: props.minInstancesInService }),
    terminationPolicies: props.terminationPolicies,
    defaultInstanceWarmup: props.defaultInstanceWarmup,
    groupMetrics: [new autoscaling.GroupMetrics(autoscaling.GroupMetric.IN_SERVICE_INSTANCES)],
  });
  Validations.of(group).acknowledge({ id: 'AwsSolutions-AS3', reason: props.noNotificationReason });
  const cfn = group.node.defaultChild as autoscaling.CfnAutoScalingGroup;
  Tags.of(group).add(NODE_TAGS.signalResource, cfn.logicalId, { applyToLaunchedInstances: true });
  return group;
}

/**
 * One node of a fixed-size cache fleet (`CacheFleet.nodes`): an Auto Scaling group of one instance.
 * It replaces a failed instance as the same node; an elastic fleet has no such nodes.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/operations.md
 */
export interface ICacheNode extends IConstruct {
  /** The node's number in its fleet, from 1: its construct id is `Node<number>`, and its own Route 53 name `node<number>.`. */
  readonly nodeNumber: number;
  /** The node's Auto Scaling group (minimum and maximum 1). */
  readonly autoScalingGroup: autoscaling.IAutoScalingGroup;
  /** The subnet, and so the Availability Zone, the node runs in. */
  readonly subnet: ec2.ISubnet;
  /**
   * The node's stable private address, kept across instance replacements.
   *
   * @default - none: behind a load balancer the node has no stable address
   */
  readonly address?: string;
  /**
   * The name that reaches this node alone (`node<number>.<recordName>.<zone>`), for a client that must stay on one node.
   *
   * @default - none: behind a load balancer the node has no name of its own
   */
  readonly endpoint?: string;

  /** Bytes the node sent (AWS/EC2 NetworkOut of its group, sum per period). */
  metricNetworkOut(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** The node's CPU utilization (average per period). */
  metricCpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;

  /** Whether the node is in service: its group's GroupInServiceInstances (minimum per period), 1 or 0. */
  metricInService(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}

/** Properties of `CacheNode`. */
export interface CacheNodeProps {
  readonly vpc: ec2.IVpc;
  /** The subnet of the node. */
  readonly subnet: ec2.ISubnet;
  /** The fleet's launch template, shared by every node. */
  readonly launchTemplate: ec2.LaunchTemplate;
  /** The nodes' security group, for the stable interface. */
  readonly securityGroup: ec2.ISecurityGroup;
  /** A stable interface the node attaches at boot (Route 53 fan-out); none behind a load balancer. */
  readonly stableAddress: boolean;
  /** Health checks of the group: EC2, or EC2 and the load balancer's. */
  readonly loadBalancerHealthChecks: boolean;
  /** How long CloudFormation waits for the node's signal (also the load balancer's grace period). */
  readonly signalTimeout: Duration;
  /** The node's number in the fleet, from 1. */
  readonly nodeNumber: number;
}

/**
 * One cache node: an Auto Scaling group of one instance, launched from the fleet's launch template, and in Route 53
 * mode a network interface whose address the node keeps across replacements. The group tags each instance it
 * launches with the node's identity (`NODE_TAGS`): the resource to signal (the group itself, which waits for one
 * signal) and the interface to attach. A replaced instance reads the same tags and so becomes the same node.
 */
export class CacheNode extends Construct implements ICacheNode {
  public readonly nodeNumber: number;
  /** The node's Auto Scaling group (min = max = 1): a terminated or unhealthy instance is replaced. */
  public readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  /** The launch template of the node: the fleet's one launch template. */
  public readonly launchTemplate: ec2.LaunchTemplate;
  /** The subnet the node runs in. */
  public readonly subnet: ec2.ISubnet;
  /**
   * The network interface that carries the node's stable address (Route 53 mode): each instance that the group
   * launches attaches it at boot, as its last step, once it serves.
   */
  public readonly networkInterface?: ec2.CfnNetworkInterface;
  /** The node's stable private address (Route 53 mode). */
  public readonly address?: string;
  /** The node's own name (Route 53 mode), once the fleet's fan-out has made its record (`setEndpoint`). */
  private nodeEndpoint?: string;

  constructor(scope: Construct, id: string, props: CacheNodeProps) {
    super(scope, id);
    this.nodeNumber = props.nodeNumber;
    this.subnet = props.subnet;
    this.launchTemplate = props.launchTemplate;
    if (props.stableAddress) {
      this.networkInterface = new ec2.CfnNetworkInterface(this, 'StableAddress', {
        subnetId: props.subnet.subnetId,
        groupSet: [props.securityGroup.securityGroupId],
        description: `EFS cache node ${props.nodeNumber}: the address clients mount, kept across instance replacements`,
      });
      this.address = this.networkInterface.attrPrimaryPrivateIpAddress;
    }
    this.autoScalingGroup = nodeGroup(this, {
      vpc: props.vpc,
      subnets: [props.subnet],
      launchTemplate: props.launchTemplate,
      minCapacity: 1,
      maxCapacity: 1,
      loadBalancerHealthChecks: props.loadBalancerHealthChecks,
      signalTimeout: props.signalTimeout,
      minInstancesInService: 0,
      noNotificationReason: 'A cache node group always holds one instance; replacements are reported by the fleet dashboard and ' +
        'CloudFormation events, so no scaling notification topic is created.',
    });
    if (this.networkInterface) {
      Tags.of(this.autoScalingGroup).add(NODE_TAGS.stableEni, this.networkInterface.ref, { applyToLaunchedInstances: true });
    }
  }

  public get endpoint(): string | undefined {
    return this.nodeEndpoint;
  }

  /** Records the node's own name, which the fleet's fan-out makes after the node (Route 53 mode). */
  public setEndpoint(name: string): void {
    this.nodeEndpoint = name;
  }

  public metricNetworkOut(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return autoScalingGroupMetric(this.autoScalingGroup, NODE_GROUP_METRICS.networkOut, props);
  }

  public metricCpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return autoScalingGroupMetric(this.autoScalingGroup, NODE_GROUP_METRICS.cpuUtilization, props);
  }

  public metricInService(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return autoScalingGroupMetric(this.autoScalingGroup, NODE_GROUP_METRICS.inService, props);
  }
}
