import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { CachedFileSystem, Capacity, FanOut } from '../../lib';
import { nagFindings, stackWithVpc } from '../util';

/** Fleets past CloudWatch's 10 metrics per alarm, and past what one CloudFormation template holds. */
function build(nodeCount: number, fanOut = FanOut.route53()) {
  const { app, stack, vpc } = stackWithVpc();
  const masterKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const alarmTopic = new sns.Topic(stack, 'Alarms', { enforceSSL: true, masterKey });
  const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(nodeCount), fanOut }, monitoring: { alarmTopic } });
  return { app, stack, cfs, t: Template.fromStack(stack) };
}

describe('no healthy cache node, on a Route 53 fleet of more than 10 nodes', () => {
  const { app, cfs, t } = build(24);
  const alarms = t.findResources('AWS::CloudWatch::Alarm');
  const parts = Object.entries(alarms).filter(([id]) => id.includes('NoNodeInService'));

  test('one alarm per 10 nodes, none with more than 10 metrics', () => {
    expect(parts).toHaveLength(3);
    const counts = parts.map(([, a]) => (a.Properties.Metrics as Array<{ MetricStat?: unknown }>).filter((m) => m.MetricStat).length);
    expect(counts.sort()).toEqual([10, 10, 4]);
    for (const a of Object.values(alarms)) {
      expect((a.Properties.Metrics ?? []).filter((m: { MetricStat?: unknown }) => m.MetricStat).length).toBeLessThanOrEqual(10);
    }
  });

  test('a composite alarm when all of them are in alarm, and only it notifies', () => {
    const composites = Object.values(t.findResources('AWS::CloudWatch::CompositeAlarm'));
    expect(composites).toHaveLength(1);
    const rule = JSON.stringify(composites[0].Properties.AlarmRule);
    expect(rule.match(/ALARM\(/g)).toHaveLength(3);
    expect(rule).toContain(' AND ');
    expect(composites[0].Properties.AlarmActions).toHaveLength(1);
    for (const [, a] of parts) expect(a.Properties.AlarmActions).toBeUndefined();
    expect(cfs.dashboard!.compositeAlarms).toHaveLength(1);
    expect(cfs.dashboard!.alarm('NoHealthyCacheNode')).toBe(cfs.dashboard!.compositeAlarms[0]);
    expect(cfs.dashboard!.alarm('NoNodeInService1').alarmArn).toBeDefined();
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5: no unacknowledged finding', () => {
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});

test('10 nodes keep one plain alarm; an NLB fleet keeps one whatever its size', () => {
  for (const [n, fanOut] of [[10, FanOut.route53()], [12, FanOut.networkLoadBalancer()]] as const) {
    const { t } = build(n, fanOut);
    expect(Object.keys(t.findResources('AWS::CloudWatch::CompositeAlarm'))).toHaveLength(0);
    expect(Object.keys(t.findResources('AWS::CloudWatch::Alarm')).filter((id) => id.includes('NoHealthyCacheNode'))).toHaveLength(1);
  }
});

describe('one launch template per fleet', () => {
  test('128 nodes (the most one stack holds) synthesize with the dashboard: one launch template, under 500 resources and 1 MB', () => {
    const { stack, cfs, t } = build(128);
    t.resourceCountIs('AWS::EC2::LaunchTemplate', 1);
    t.resourceCountIs('AWS::AutoScaling::AutoScalingGroup', 128);
    const json = JSON.stringify(t.toJSON());
    expect(Object.keys(t.toJSON().Resources).length).toBeLessThan(500);
    expect(Buffer.byteLength(json)).toBeLessThan(1024 * 1024);
    // The user data does not grow with the fleet: the same as one node's.
    expect(cfs.cacheFleet!.userDataBytes).toBe(build(1).cfs.cacheFleet!.userDataBytes);
    // Every node's group launches from the fleet's one launch template.
    const templateId = stack.resolve(cfs.cacheFleet!.launchTemplate.launchTemplateId);
    const groups = t.findResources('AWS::AutoScaling::AutoScalingGroup');
    expect(Object.keys(groups)).toHaveLength(128);
    for (const g of Object.values(groups)) expect(g.Properties.LaunchTemplate.LaunchTemplateId).toEqual(templateId);
    expect(cfs.cacheFleet!.nodes.map((n) => n.nodeNumber)).toEqual(Array.from({ length: 128 }, (_x, i) => i + 1));
  });
});
