import { ArnFormat, Duration, Size, Stack, Tags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import { inUnitOf, knownAtSynth, propError } from '../private/errors';
import { acknowledgeWildcardResource } from '../private/nag';
import { nodeGroup } from './cache-node';
import { ElasticCapacityOptions } from './capacity';
import { FLEET_TAG } from './node-role';

/**
 * The lifecycle hooks of an elastic fleet's group, by name (unique within the group): the node completes the launch
 * hook once it serves (assets/lib/aws-signal.sh lifecycle_complete) and the drain hook once it stopped serving.
 */
export const LIFECYCLE_HOOKS = { launch: 'efs-cache-serving', drain: 'efs-cache-drained' } as const;

/** The defaults of `ElasticCapacityOptions` (test/defaults.test.ts). */
export const ELASTIC_DEFAULTS = {
  minNodes: 2,
  targetNetworkOutPerNode: Size.gibibytes(2),
  scaleInCooldown: Duration.minutes(30),
  drainTimeout: Duration.minutes(2),
} as const;

/**
 * Checks an elastic capacity (`Capacity.elastic()`, given as `capacity`) against the rest of the fleet's options;
 * throws `Invalid capacity.<option>:` (or `Invalid fanOut:`, `Invalid signalTimeout:`).
 */
export function validateElastic(
  scope: IConstruct, e: ElasticCapacityOptions | undefined, o: { nlb: boolean; signalTimeout?: Duration },
): void {
  if (!e) return;
  if (!o.nlb) {
    throw propError(scope, 'fanOut', 'FanOut.route53() cannot serve an elastic fleet (capacity: Capacity.elastic()): the ' +
      'load balancer is what adds and drains its nodes, clients reaching them through its one address, which the group ' +
      'keeps up to date as nodes come and go (Route 53 gives each node a record and an interface of its own, fixed at ' +
      'deploy time). Leave fanOut out (an elastic fleet defaults to FanOut.networkLoadBalancer()), or give ' +
      'capacity: Capacity.nodes(n) for a fixed fleet.');
  }
  const min = e.minNodes ?? ELASTIC_DEFAULTS.minNodes;
  for (const [k, v] of [['minNodes', e.minNodes], ['maxNodes', e.maxNodes]] as const) {
    knownAtSynth(scope, `capacity.${k}`, v, 'the scaling policies are made from it');
    if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > 10000)) {
      throw propError(scope, `capacity.${k}`, `must be a whole number from 1 to 10000, got ${v}.`);
    }
  }
  if (e.maxNodes < min) throw propError(scope, 'capacity.maxNodes', `must be at least minNodes (${min}), got ${e.maxNodes}.`);
  if (e.maxNodes === min) {
    throw propError(scope, 'capacity.maxNodes', `must be more than minNodes (${min}): a group that cannot grow has nothing to ` +
      'scale (AWS refuses target tracking on it); give Capacity.nodes(n) for a fleet of a fixed size.');
  }
  // The group's DefaultInstanceWarmup (AWS: at most 3,600 s) and the launch hook's heartbeat are this timeout.
  const boot = o.signalTimeout;
  if (boot !== undefined && !boot.isUnresolved() && boot.toSeconds() > 3600) {
    throw propError(scope, 'signalTimeout', `must be at most 60 minutes on an elastic fleet, got ${boot.toHumanString()}: it is ` +
      'also the group\'s instance warm-up, which AWS caps at 3,600 seconds. Shorten it, or give Capacity.nodes(n) for a fixed fleet.');
  }
  const range = (k: 'scaleInCooldown' | 'drainTimeout', d: Duration | undefined, lo: Duration, hi: Duration) => {
    if (d === undefined || d.isUnresolved()) return;
    const seconds = d.toSeconds({ integral: false });
    if (!Number.isInteger(seconds)) throw propError(scope, `capacity.${k}`, `must be whole seconds, got ${seconds} seconds.`);
    if (seconds < lo.toSeconds() || seconds > hi.toSeconds()) {
      throw propError(scope, `capacity.${k}`, `must be from ${lo.toHumanString()} to ${hi.toHumanString()}, got ${d.toHumanString()}.`);
    }
    if (d.toSeconds() % 60 !== 0 && k === 'scaleInCooldown') {
      throw propError(scope, `capacity.${k}`, `must be whole minutes (the alarm counts one-minute periods), got ${d.toHumanString()}.`);
    }
  };
  // The scale-in policy's cooldown is in seconds and its alarm counts one-minute periods: a token cannot be both.
  knownAtSynth(scope, 'capacity.scaleInCooldown', e.scaleInCooldown, 'the scale-in policy\'s cooldown, in seconds, and its ' +
    'alarm\'s count of one-minute periods are both made from it');
  range('scaleInCooldown', e.scaleInCooldown, Duration.minutes(5), Duration.days(1));
  // The drain hook's heartbeat is in seconds: a token given in seconds goes through, another unit cannot be converted.
  if (e.drainTimeout?.isUnresolved()) inUnitOf(scope, 'capacity.drainTimeout', () => e.drainTimeout!.toSeconds());
  range('drainTimeout', e.drainTimeout, Duration.seconds(30), Duration.hours(2));
  const target = e.targetNetworkOutPerNode;
  if (target !== undefined && target.isUnresolved()) {
    throw propError(scope, 'capacity.targetNetworkOutPerNode', 'must be known at synth (a Size of a number, not of a token): the ' +
      'scaling policy\'s target and the scale-in alarm\'s threshold are made from it.');
  }
  if (target !== undefined && target.toBytes() < 1024 * 1024) {
    throw propError(scope, 'capacity.targetNetworkOutPerNode', `must be at least 1 MiB (per second), got ${target.toBytes()} bytes.`);
  }
}

/** Properties of `ElasticNodes`. */
export interface ElasticNodesProps {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.ISubnet[];
  readonly launchTemplate: ec2.LaunchTemplate;
  readonly capacity: ElasticCapacityOptions;
  /** How long a node may take to serve: the launch hook's timeout, the creation signals' and the health check grace. */
  readonly signalTimeout: Duration;
  /** The fleet, whose construct address tags the group (the IAM condition of the node's lifecycle calls). */
  readonly fleet: IConstruct;
  /** The nodes' role: granted the lifecycle calls on groups tagged with this fleet. */
  readonly role: iam.Role;
}

/**
 * An elastic fleet's nodes: one Auto Scaling group from the fleet's launch template, its lifecycle hooks (in the
 * group itself, so that the first nodes pass through them too), a scale-out policy that tracks the nodes' average
 * NetworkOut, and a slow scale-in (one node after the average stayed below half the target for `scaleInCooldown`).
 */
export class ElasticNodes extends Construct {
  public readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  /** The alarm that removes one node: the nodes' average NetworkOut below half the target for `scaleInCooldown`. */
  public readonly scaleInAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: ElasticNodesProps) {
    super(scope, id);
    const c = props.capacity;
    const min = c.minNodes ?? ELASTIC_DEFAULTS.minNodes;
    const cooldown = c.scaleInCooldown ?? ELASTIC_DEFAULTS.scaleInCooldown;
    const bytesPerSecond = (c.targetNetworkOutPerNode ?? ELASTIC_DEFAULTS.targetNetworkOutPerNode).toBytes();
    this.autoScalingGroup = nodeGroup(this, {
      vpc: props.vpc,
      subnets: props.subnets,
      launchTemplate: props.launchTemplate,
      minCapacity: min,
      maxCapacity: c.maxNodes,
      loadBalancerHealthChecks: true,
      signalTimeout: props.signalTimeout,
      // One node at a time, the others serving: a rolling update replaces warm caches one by one.
      minInstancesInService: min - 1,
      // The newest node has served for the shortest time, so its page cache (and disk cache) holds the least.
      terminationPolicies: [autoscaling.TerminationPolicy.NEWEST_INSTANCE],
      defaultInstanceWarmup: props.signalTimeout,
      noNotificationReason: 'Nodes come and go by design in an elastic fleet; the fleet dashboard shows the nodes in service and ' +
        'CloudFormation and Auto Scaling keep each scaling activity, so no notification topic is created.',
    });
    addLifecycleHooks(this.autoScalingGroup, props);
    Tags.of(this.autoScalingGroup).add(FLEET_TAG, props.fleet.node.addr);
    this.scaleInAlarm = this.addScaling(props, bytesPerSecond, cooldown);
    grantCompleteLifecycleAction(this, props);
  }

  /**
   * Scale-out by target tracking on the nodes' average NetworkOut, and a slow scale-in: one node after the average
   * stayed below half the target for `cooldown`. Returns the scale-in alarm.
   */
  private addScaling(props: ElasticNodesProps, bytesPerSecond: number, cooldown: Duration): cloudwatch.Alarm {
    // Out: target tracking on EC2's NetworkOut, the group's average (bytes per minute: the launch template turns on
    // detailed monitoring), adding nodes only.
    new autoscaling.TargetTrackingScalingPolicy(this, 'ScaleOut', {
      autoScalingGroup: this.autoScalingGroup,
      predefinedMetric: autoscaling.PredefinedMetric.ASG_AVERAGE_NETWORK_OUT,
      targetValue: bytesPerSecond * 60,
      disableScaleIn: true,
    });
    // In: one node, after the average stayed below half the target for the whole cooldown, and not again before the
    // cooldown has passed.
    const scaleIn = new autoscaling.CfnScalingPolicy(this, 'ScaleIn', {
      autoScalingGroupName: this.autoScalingGroup.autoScalingGroupName,
      policyType: 'SimpleScaling',
      adjustmentType: 'ChangeInCapacity',
      scalingAdjustment: -1,
      cooldown: String(cooldown.toSeconds()),
    });
    const alarm = new cloudwatch.Alarm(this, 'LowDemand', {
      metric: new cloudwatch.Metric({
        namespace: 'AWS/EC2',
        metricName: 'NetworkOut',
        dimensionsMap: { AutoScalingGroupName: this.autoScalingGroup.autoScalingGroupName },
        statistic: 'Average',
        period: Duration.minutes(1),
      }),
      threshold: bytesPerSecond * 60 / 2,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: cooldown.toMinutes(),
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `The cache nodes of ${props.fleet.node.path} sent less than half their target for ` +
        `${cooldown.toHumanString()}: one node is removed (the newest).`,
    });
    alarm.addAlarmAction({ bind: () => ({ alarmActionArn: scaleIn.ref }) });
    return alarm;
  }
}

/**
 * The group's launch and drain hooks, in the group's own definition rather than as separate resources: a separate hook
 * exists only after the group, and the nodes the group launches on creation would pass neither.
 */
function addLifecycleHooks(autoScalingGroup: autoscaling.AutoScalingGroup, props: ElasticNodesProps): void {
  const group = autoScalingGroup.node.defaultChild as autoscaling.CfnAutoScalingGroup;
  group.lifecycleHookSpecificationList = [
    {
      lifecycleHookName: LIFECYCLE_HOOKS.launch,
      lifecycleTransition: autoscaling.LifecycleTransition.INSTANCE_LAUNCHING,
      heartbeatTimeout: props.signalTimeout.toSeconds(),
      // A node that never said it serves is terminated and replaced, never put in service.
      defaultResult: autoscaling.DefaultResult.ABANDON,
    },
    {
      lifecycleHookName: LIFECYCLE_HOOKS.drain,
      lifecycleTransition: autoscaling.LifecycleTransition.INSTANCE_TERMINATING,
      heartbeatTimeout: (props.capacity.drainTimeout ?? ELASTIC_DEFAULTS.drainTimeout).toSeconds(),
      defaultResult: autoscaling.DefaultResult.CONTINUE,
    },
  ];
}

/**
 * Lets the nodes complete their own lifecycle actions. The group's name exists only once it is created, after the
 * nodes it waits for: the permission names the fleet's tag instead.
 */
function grantCompleteLifecycleAction(scope: Construct, props: ElasticNodesProps): void {
  const stack = Stack.of(scope);
  const groups = stack.formatArn({ service: 'autoscaling', resource: 'autoScalingGroup', resourceName: '*:autoScalingGroupName/*', arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  props.role.addToPrincipalPolicy(new iam.PolicyStatement({
    actions: ['autoscaling:CompleteLifecycleAction'],
    resources: [groups],
    conditions: { StringEquals: { [`autoscaling:ResourceTag/${FLEET_TAG}`]: props.fleet.node.addr } },
  }));
  acknowledgeWildcardResource(props.role, groups, 'The group\'s name exists only after its first nodes completed ' +
    'their launch hook; the statement is limited to groups tagged with this fleet.');
}
