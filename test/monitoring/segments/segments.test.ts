import { Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { OriginFileSystem } from '../../../lib';
import { originSegment } from '../../../lib/monitoring/segments/origin';
import { DashboardAlarms } from '../../../lib/monitoring/segments/segment';
import { nagFindings, newApp, stackWithVpc } from '../../util';

/*
 * The dashboard's parts on their own (lib/monitoring/segments/): the alarms registry every segment creates its
 * alarms through, and a segment's rows and alarms as the origin's options change them. The dashboard as a whole is
 * test/monitoring/monitoring.test.ts.
 */

const THRESHOLDS = { percentIoLimit: 90, throughputUtilization: 80, burstCreditBalance: Size.gibibytes(100) };
const metric = new cloudwatch.Metric({ namespace: 'Test', metricName: 'M' });

function titles(rows: cloudwatch.IWidget[][]): string[] {
  return rows.flat().map((w) => (w.toJson()[0] as { properties: { title: string } }).properties.title);
}

describe('DashboardAlarms', () => {
  test('keeps alarms by name in creation order; a composite is named too; an unknown name is undefined', () => {
    const stack = new Stack();
    const alarms = new DashboardAlarms(stack);
    const a = alarms.input('A', metric, { threshold: 1, evaluationPeriods: 1 }, 'an input of AB');
    const b = alarms.input('B', metric, { threshold: 2, evaluationPeriods: 1 }, 'an input of AB');
    const ab = alarms.allOf('AB', [a, b], 'both');
    const c = alarms.alarm('C', metric, { threshold: 3, evaluationPeriods: 1 });
    expect(alarms.names()).toEqual(['A', 'B', 'AB', 'C']);
    expect(alarms.alarms).toEqual([a, b, c]);
    expect(alarms.compositeAlarms).toEqual([ab]);
    expect(alarms.named('AB')).toBe(ab);
    expect(alarms.named('Nope')).toBeUndefined();
  });

  test('with a topic, alarms and composites notify it on ALARM and OK; inputs of a composite notify no one', () => {
    const stack = new Stack();
    const topic = new sns.Topic(stack, 'Topic');
    const alarms = new DashboardAlarms(stack, topic);
    const a = alarms.input('A', metric, { threshold: 1, evaluationPeriods: 1 }, 'an input of AB');
    alarms.allOf('AB', [a], 'only a');
    alarms.alarm('C', metric, { threshold: 3, evaluationPeriods: 1 });
    const t = Template.fromStack(stack);
    const topicRef = { Ref: stack.getLogicalId(topic.node.defaultChild as sns.CfnTopic) };
    const actions = (type: string) => Object.values(t.findResources(type)).map((r) => [r.Properties.AlarmActions, r.Properties.OKActions]);
    expect(actions('AWS::CloudWatch::Alarm')).toEqual([[undefined, undefined], [[topicRef], [topicRef]]]);
    expect(actions('AWS::CloudWatch::CompositeAlarm')).toEqual([[[topicRef], [topicRef]]]);
  });

  test('without a topic, alarms have no action, and the compliance packs are told why (NIST and HIPAA report nothing)', () => {
    const app = newApp();
    const stack = new Stack(app, 'Alarms');
    const alarms = new DashboardAlarms(stack);
    const a = alarms.input('A', metric, { threshold: 1, evaluationPeriods: 1 }, 'an input of AB');
    alarms.allOf('AB', [a], 'only a');
    alarms.alarm('C', metric, { threshold: 3, evaluationPeriods: 1 });
    const t = Template.fromStack(stack);
    expect(Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties.AlarmActions)).toEqual([undefined, undefined]);
    expect(nagFindings(app, ['NIST', 'HIPAA']).filter((f) => f.includes('CloudWatchAlarmAction'))).toEqual([]);
  });
});

describe('originSegment', () => {
  function origin(props: Partial<ConstructorParameters<typeof OriginFileSystem>[2]> = {}) {
    const { stack, vpc } = stackWithVpc();
    return { stack, o: new OriginFileSystem(stack, 'Origin', { vpc, ...props }) };
  }

  test('elastic throughput, General Purpose: no burst credits; PercentIoLimit and ThroughputNearLimit at the given thresholds', () => {
    const { stack, o } = origin();
    const segment = originSegment(o, THRESHOLDS);
    expect(titles(segment.rows)).not.toContain('EFS burst credits (bytes)');
    const alarms = new DashboardAlarms(stack);
    segment.addAlarms(alarms);
    expect(alarms.names()).toEqual(['PercentIoLimit', 'ThroughputNearLimit']);
    const threshold = (name: string) => (alarms.named(name)!.node.defaultChild as cloudwatch.CfnAlarm).threshold;
    expect([threshold('PercentIoLimit'), threshold('ThroughputNearLimit')]).toEqual([90, 80]);
  });

  test('bursting throughput adds the burst credits widget and BurstCreditsLow in bytes; Max I/O has no PercentIoLimit', () => {
    const { stack, o } = origin({ throughputMode: efs.ThroughputMode.BURSTING, performanceMode: efs.PerformanceMode.MAX_IO });
    const segment = originSegment(o, THRESHOLDS);
    expect(titles(segment.rows)).toContain('EFS burst credits (bytes)');
    const alarms = new DashboardAlarms(stack);
    segment.addAlarms(alarms);
    expect(alarms.names()).toEqual(['ThroughputNearLimit', 'BurstCreditsLow']);
    expect((alarms.named('BurstCreditsLow')!.node.defaultChild as cloudwatch.CfnAlarm).threshold).toBe(100 * 1024 ** 3);
  });
});
