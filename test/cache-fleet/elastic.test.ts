import { CfnParameter, Duration, Size, Token } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { CachedFileSystem, CacheFleet, CacheOrigin, Capacity, ElasticCapacityOptions, FanOut, Mirror, NfsVersion, OriginFileSystem } from '../../lib';
import { nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters } from '../util/user-data';

/** An elastic fleet (issue: one Auto Scaling group that grows and shrinks), with the dashboard, as a user writes it. */
function build(elastic: ElasticCapacityOptions = { maxNodes: 8 }, mirrors = false) {
  const { app, stack, vpc } = stackWithVpc();
  const masterKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const alarmTopic = new sns.Topic(stack, 'Alarms', { enforceSSL: true, masterKey });
  const cfs = new CachedFileSystem(stack, 'Data', {
    vpc,
    cacheFleet: { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic(elastic), ...(mirrors ? { mirrors: [Mirror.path('/efs/site')] } : {}) },
    monitoring: { alarmTopic },
  });
  return { app, stack, cfs, t: Template.fromStack(stack) };
}

describe('an elastic fleet', () => {
  const { app, stack, cfs, t } = build();
  const fleet = cfs.cacheFleet!;

  test('one Auto Scaling group of minNodes to maxNodes from the fleet\'s one launch template, no per-node resources', () => {
    t.resourceCountIs('AWS::AutoScaling::AutoScalingGroup', 1);
    t.resourceCountIs('AWS::EC2::LaunchTemplate', 1);
    t.resourceCountIs('AWS::EC2::NetworkInterface', 0);
    t.resourceCountIs('AWS::Route53::RecordSet', 0);
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      MinSize: '2',
      MaxSize: '8',
      HealthCheckType: 'ELB',
      HealthCheckGracePeriod: 1200,
      TerminationPolicies: ['NewestInstance'],
      TargetGroupARNs: Match.anyValue(),
    });
    expect(fleet.nodes).toEqual([]);
    expect(fleet.autoScalingGroup).toBeDefined();
    // CloudFormation waits for the signals of minNodes nodes on creation.
    t.hasResource('AWS::AutoScaling::AutoScalingGroup', { CreationPolicy: { ResourceSignal: { Count: 2, Timeout: 'PT20M' } } });
  });

  test('the lifecycle hooks are part of the group, so the first nodes pass through them too', () => {
    t.resourceCountIs('AWS::AutoScaling::LifecycleHook', 0);
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      LifecycleHookSpecificationList: [
        { LifecycleHookName: 'efs-cache-serving', LifecycleTransition: 'autoscaling:EC2_INSTANCE_LAUNCHING', HeartbeatTimeout: 1200, DefaultResult: 'ABANDON' },
        { LifecycleHookName: 'efs-cache-drained', LifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING', HeartbeatTimeout: 120, DefaultResult: 'CONTINUE' },
      ],
    });
  });

  test('the nodes learn the hooks\' names; a fixed fleet\'s nodes do not', () => {
    const p = parameters(Object.values(launchTemplateUserData(stack))[0]);
    expect(p.EFSC_LIFECYCLE_LAUNCH_HOOK).toBe('efs-cache-serving');
    expect(p.EFSC_LIFECYCLE_DRAIN_HOOK).toBe('efs-cache-drained');
    const fixed = stackWithVpc();
    new CacheFleet(fixed.stack, 'Fleet', { vpc: fixed.vpc, origin: CacheOrigin.efs(new OriginFileSystem(fixed.stack, 'O', { vpc: fixed.vpc }).fileSystem) });
    const q = parameters(Object.values(launchTemplateUserData(fixed.stack))[0]);
    expect(q.EFSC_LIFECYCLE_LAUNCH_HOOK).toBeUndefined();
    expect(q.EFSC_NODE_IDENTITY).toBe('tags');
  });

  test('scale-out tracks the nodes\' average NetworkOut (per minute: detailed monitoring), and never scales in', () => {
    t.hasResourceProperties('AWS::AutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingConfiguration: {
        PredefinedMetricSpecification: { PredefinedMetricType: 'ASGAverageNetworkOut' },
        TargetValue: 2 * 1024 ** 3 * 60,
        DisableScaleIn: true,
      },
    });
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', { LaunchTemplateData: Match.objectLike({ Monitoring: { Enabled: true } }) });
  });

  test('scale-in: one node, after 30 minutes below half the target, at most one per 30 minutes', () => {
    t.hasResourceProperties('AWS::AutoScaling::ScalingPolicy', {
      PolicyType: 'SimpleScaling', AdjustmentType: 'ChangeInCapacity', ScalingAdjustment: -1, Cooldown: '1800',
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/EC2', MetricName: 'NetworkOut', Statistic: 'Average', Period: 60, EvaluationPeriods: 30,
      Threshold: 1024 ** 3 * 60, ComparisonOperator: 'LessThanThreshold',
      AlarmActions: [{ Ref: Match.stringLikeRegexp('ScaleIn') }],
    });
  });

  test('a node that goes is deregistered, its connections reset after the delay', () => {
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: 2049,
      TargetGroupAttributes: Match.arrayWith([
        { Key: 'deregistration_delay.timeout_seconds', Value: '30' },
        { Key: 'deregistration_delay.connection_termination.enabled', Value: 'true' },
      ]),
    });
  });

  test('the nodes may complete lifecycle actions only of groups tagged with their fleet', () => {
    const policies = JSON.stringify(t.toJSON().Resources);
    expect(policies).toContain('"Action":"autoscaling:CompleteLifecycleAction"');
    expect(policies).toContain(`"autoscaling:ResourceTag/cdk-efs-cache:fleet":"${fleet.node.addr}"`);
    expect(policies).toContain(':autoScalingGroup:*:autoScalingGroupName/*');
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      Tags: Match.arrayWith([{ Key: 'cdk-efs-cache:fleet', Value: fleet.node.addr, PropagateAtLaunch: true }]),
    });
  });

  test('the dashboard shows the fleet as a whole: an elastic fleet has no nodes of its own to show', () => {
    expect(fleet.nodes).toEqual([]);
    const body = JSON.stringify(t.findResources('AWS::CloudWatch::Dashboard'));
    expect(body).toContain('nodes in service');
    expect(body).toContain('average over the nodes');
  });

  test('cdk-nag clean (AwsSolutions, NIST 800-53 R5)', () => {
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});

test('with mirrors, both target groups are the group\'s and reset connections on deregistration', () => {
  const { t } = build({ maxNodes: 4 }, true);
  const groups = Object.values(t.findResources('AWS::ElasticLoadBalancingV2::TargetGroup'));
  expect(groups.map((g) => g.Properties.Port).sort()).toEqual([2049, 2050]);
  for (const g of groups) {
    expect(g.Properties.TargetGroupAttributes).toContainEqual({ Key: 'deregistration_delay.connection_termination.enabled', Value: 'true' });
  }
  const asg = Object.values(t.findResources('AWS::AutoScaling::AutoScalingGroup'))[0];
  expect(asg.Properties.TargetGroupARNs).toHaveLength(2);
});

test('1,000 nodes in one stack: the same resources as 8, with the dashboard', () => {
  const small = build({ maxNodes: 8 });
  const large = build({ minNodes: 10, maxNodes: 1000, targetNetworkOutPerNode: Size.gibibytes(4), scaleInCooldown: Duration.hours(1) });
  const count = (x: Template) => Object.keys(x.toJSON().Resources).length;
  expect(count(large.t)).toBe(count(small.t));
  large.t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', { MinSize: '10', MaxSize: '1000' });
  large.t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'NetworkOut', EvaluationPeriods: 60 });
  expect(nagFindings(large.app, ['AwsSolutions', 'NIST'])).toEqual([]);
});

test('an elastic fleet is behind the load balancer by default: the same template as with FanOut.networkLoadBalancer() given', () => {
  const given = build();
  const { stack, vpc } = stackWithVpc();
  const masterKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const alarmTopic = new sns.Topic(stack, 'Alarms', { enforceSSL: true, masterKey });
  const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.elastic({ maxNodes: 8 }) }, monitoring: { alarmTopic } });
  expect(cfs.cacheFleet!.fanOut._networkLoadBalancer).toBeDefined();
  expect(cfs.cacheFleet!.capacity._elastic).toEqual({ maxNodes: 8 });
  expect(Template.fromStack(stack).toJSON()).toEqual(given.t.toJSON());
});

describe('bad elastic options are refused', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['with Route 53', { fanOut: FanOut.route53(), capacity: Capacity.elastic({ maxNodes: 4 }) },
      /Invalid fanOut: FanOut\.route53\(\) cannot serve an elastic fleet \(capacity: Capacity\.elastic\(\)\): the load balancer is what adds and drains its nodes/],
    ['maxNodes below minNodes', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ minNodes: 5, maxNodes: 4 }) },
      /Invalid capacity.maxNodes: must be at least minNodes \(5\), got 4/],
    ['maxNodes equal to minNodes', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ minNodes: 3, maxNodes: 3 }) },
      /Invalid capacity.maxNodes: must be more than minNodes \(3\): .*give Capacity\.nodes\(n\)/],
    ['maxNodes equal to the default minNodes', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 2 }) }, /Invalid capacity.maxNodes: must be more than minNodes \(2\)/],
    ['a signal timeout past the warm-up\'s 3,600 s', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4 }), signalTimeout: Duration.minutes(61) },
      /Invalid signalTimeout: must be at most 60 minutes on an elastic fleet, got 1 hour 1 minute: .*3,600 seconds/],
    ['no node', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ minNodes: 0, maxNodes: 4 }) }, /Invalid capacity.minNodes: must be a whole number from 1 to 10000, got 0/],
    ['a fraction', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4.5 }) }, /Invalid capacity.maxNodes: must be a whole number/],
    ['a short cooldown', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, scaleInCooldown: Duration.minutes(1) }) },
      /Invalid capacity.scaleInCooldown: must be from 5 minutes to 1 day/],
    ['a cooldown of seconds', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, scaleInCooldown: Duration.seconds(450) }) },
      /Invalid capacity.scaleInCooldown: must be whole minutes/],
    ['a long drain', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, drainTimeout: Duration.hours(3) }) },
      /Invalid capacity.drainTimeout: must be from 30 seconds to 2 hours/],
    ['a drain of a fraction of a second', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, drainTimeout: Duration.seconds(90.5) }) },
      /Invalid capacity.drainTimeout: must be whole seconds, got 90.5 seconds/],
    ['a cooldown from a token (the policy counts seconds, the alarm minutes)',
      { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, scaleInCooldown: Duration.minutes(Token.asNumber({ Ref: 'Cool' })) }) },
      new RegExp('^Invalid capacity\\.scaleInCooldown: must be known at synth \\(the scale-in policy\'s cooldown, in seconds, and its alarm\'s ' +
        'count of one-minute periods are both made from it\\), got .*in Python: capacity\\.scale_in_cooldown\\)$')],
    ['a cooldown from a token in seconds', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, scaleInCooldown: Duration.seconds(Token.asNumber({ Ref: 'Cool' })) }) },
      /^Invalid capacity\.scaleInCooldown: must be known at synth/],
    ['a drain from a token in minutes', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, drainTimeout: Duration.minutes(Token.asNumber({ Ref: 'Drain' })) }) },
      /^Invalid capacity\.drainTimeout: is a token \(known at deploy time\) given as Duration\.minutes\(\), which cannot be converted at synth: give it as Duration\.seconds\(\.\.\.\)\./],
    ['a target from a token', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, targetNetworkOutPerNode: Size.mebibytes(Token.asNumber({ Ref: 'Target' })) }) },
      /Invalid capacity.targetNetworkOutPerNode: must be known at synth/],
    ['a tiny target', { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 4, targetNetworkOutPerNode: Size.kibibytes(1) }) },
      /Invalid capacity.targetNetworkOutPerNode: must be at least 1 MiB/],
    ['NFSv3, which the load balancer cannot serve', { capacity: Capacity.elastic({ maxNodes: 4 }), clientNfsVersion: NfsVersion.NFS_V3 },
      new RegExp('Invalid clientNfsVersion: NfsVersion.NFS_V3 needs fanOut: FanOut.route53\\(\\): .* An elastic fleet \\(Capacity.elastic\\(\\)\\) ' +
        'is always behind the load balancer: give Capacity.nodes\\(n\\) for NFSv3\\.')],
  ];
  test.each(cases)('%s', (_name, options, message) => {
    const { stack, vpc } = stackWithVpc();
    const fileSystem = new OriginFileSystem(stack, 'O', { vpc }).fileSystem;
    expect(() => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fileSystem), ...options })).toThrow(message);
  });
  test('a drain from a token in seconds is taken: the drain hook\'s heartbeat is that token', () => {
    const { stack, vpc } = stackWithVpc();
    const drain = new CfnParameter(stack, 'Drain', { type: 'Number' }).valueAsNumber;
    new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(new OriginFileSystem(stack, 'O', { vpc }).fileSystem),
      capacity: Capacity.elastic({ maxNodes: 4, drainTimeout: Duration.seconds(drain) }),
    });
    const group = Object.values(Template.fromStack(stack).findResources('AWS::AutoScaling::AutoScalingGroup'))[0];
    const hook = group.Properties.LifecycleHookSpecificationList.find((h: any) => h.LifecycleTransition === 'autoscaling:EC2_INSTANCE_TERMINATING');
    expect(hook.HeartbeatTimeout).toEqual({ Ref: 'Drain' });
  });
});
