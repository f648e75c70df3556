import { Size } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { CachedFileSystem, CachedFileSystemProps, Capacity, FanOut, NodeDiskCache } from '../../lib';
import { NOT_SERVING, notServing } from '../../lib/monitoring/metrics';
import { nagFindings, stackWithVpc } from '../util';
import { flatten } from '../util/user-data';

function build(props: Partial<CachedFileSystemProps> = {}, clients = 1) {
  const { app, stack, vpc } = stackWithVpc();
  const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(2) }, ...props });
  for (let i = 0; i < clients; i++) cfs.addClientLaunchTemplate(`Clients${i + 1}`);
  const t = Template.fromStack(stack);
  const [dash] = Object.values(t.findResources('AWS::CloudWatch::Dashboard'));
  const body = dash ? JSON.parse(flatten(dash.Properties.DashboardBody, (k) => `<${k.replace(/"/g, "'")}>`)) : undefined;
  const widgets: Array<{ type: string; properties: any }> = body?.widgets ?? [];
  const byTitle = (re: RegExp) => widgets.filter((w) => re.test(w.properties.title ?? ''));
  const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
  return { app, stack, cfs, t, widgets, byTitle, alarms };
}

/** The metric arrays of a widget, as [namespace, name, ...dimensions] or [{ expression }]. */
const metricsOf = (w: { properties: any }) => w.properties.metrics as any[];

describe('CacheDashboard', () => {
  test('the headline sets bytes served by the caches against bytes read from EFS', () => {
    const { byTitle } = build();
    const [headline] = byTitle(/^Reads served by the cache tiers vs read from EFS/);
    const m = metricsOf(headline);
    expect(m).toEqual(expect.arrayContaining([
      expect.arrayContaining(['AWS/EFS', 'DataReadIOBytes', 'FileSystemId']),
      expect.arrayContaining(['CdkEfsCache', 'NfsdBytesRead', 'Group', 'TestStack/Data/CacheFleet']),
      // What the clients' disk caches served: their devices' reads, which mean the same on every kernel.
      expect.arrayContaining(['CdkEfsCache', 'CacheDiskReadBytes', 'Group', 'TestStack/Data/Clients1']),
    ]));
    const [share] = byTitle(/^Share of reads served by caches/);
    expect(metricsOf(share)[0][0].expression).toBe('100 * (FILL(c0, 0) + FILL(c1, 0)) / ((FILL(c0, 0) + FILL(c1, 0)) + FILL(efs, 0))');
  });

  test('EFS widgets cover the metrics users watch', () => {
    const { widgets } = build();
    const names = new Set(widgets.flatMap((w) => (metricsOf(w) ?? []).flat()).filter((x) => typeof x === 'string'));
    for (const n of ['TotalIOBytes', 'DataReadIOBytes', 'MeteredIOBytes', 'PercentIOLimit', 'ClientConnections', 'PermittedThroughput', 'StorageBytes']) {
      expect(names).toContain(n);
    }
    // Elastic throughput: no burst credits to show.
    expect(names).not.toContain('BurstCreditBalance');
  });

  test('cache node widgets: NetworkOut per node and total, CPU, nfsd, page cache, health', () => {
    const { byTitle } = build();
    const [net] = byTitle(/NetworkOut per node and total/);
    const m = metricsOf(net);
    expect(m.filter((x) => x.includes('NetworkOut'))).toHaveLength(2);
    expect(m.some((x) => x[0]?.expression === 'n0 + n1')).toBe(true);
    expect(byTitle(/Cache nodes: CPU/)).toHaveLength(1);
    const nfsd = metricsOf(byTitle(/NFS operations and queued requests/)[0]).flat();
    expect(nfsd).toEqual(expect.arrayContaining(['NfsdOps', 'NfsdRequestsQueued']));
    const pc = metricsOf(byTitle(/page cache \(bytes\) and nfsd threads/)[0]).flat();
    expect(pc).toEqual(expect.arrayContaining(['PageCacheBytes', 'NfsdThreads']));
  });

  test('FS-Cache client widgets per client group', () => {
    const { byTitle } = build({}, 2);
    const served = byTitle(/^FS-Cache Clients\d: disk cache bytes served, written and held anew/);
    expect(served).toHaveLength(2);
    expect(metricsOf(served[1]).flat()).toEqual(expect.arrayContaining(['CacheDiskReadBytes', 'CacheDiskWriteBytes', 'CacheDiskGrowthBytes', 'FscacheCulled', 'TestStack/Data/Clients2']));
    const free = metricsOf(byTitle(/^FS-Cache Clients1: cache disk free/)[0]).flat();
    expect(free).toEqual(expect.arrayContaining(['CdkEfsCache', 'CacheDiskFreePercent', 'Group', 'TestStack/Data/Clients1']));
  });

  test('NLB widgets appear with an NLB fan-out', () => {
    const { byTitle } = build({ cacheFleet: { fanOut: FanOut.networkLoadBalancer() } });
    expect(metricsOf(byTitle(/^NLB: healthy hosts/)[0]).flat()).toContain('HealthyHostCount');
    expect(metricsOf(byTitle(/^NLB: processed bytes/)[0]).flat()).toContain('ProcessedBytes');
    expect(metricsOf(byTitle(/^NLB: active flows/)[0]).flat()).toContain('ActiveFlowCount');
  });

  test('alarms and their thresholds', () => {
    const { alarms } = build();
    const by = (re: RegExp) => alarms.filter((a) => re.test(a.AlarmDescription));
    expect(by(/General Purpose I\/O limit/)[0]).toMatchObject({ MetricName: 'PercentIOLimit', Threshold: 90, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 5 });
    expect(by(/near its permitted throughput/)[0]).toMatchObject({ Threshold: 90, ComparisonOperator: 'GreaterThanThreshold' });
    expect(by(/near its permitted throughput/)[0].Metrics.find((m: any) => m.Expression).Expression).toBe('100 * (m / 60) / p');
    expect(by(/No cache node is healthy/)[0]).toMatchObject({ Threshold: 1, ComparisonOperator: 'LessThanThreshold', TreatMissingData: 'breaching' });
    expect(by(/stayed below its cull limit \(7% free\)/)[0]).toMatchObject({
      MetricName: 'CacheDiskFreePercent', Threshold: 7, ComparisonOperator: 'LessThanThreshold', EvaluationPeriods: 3, Period: 300,
    });
    expect(by(/burst credits/)).toHaveLength(0);
    expect(alarms.every((a) => a.AlarmActions === undefined)).toBe(true);
  });

  test('each alarm is reachable by the name the docs give it; an unknown name says which there are', () => {
    const { cfs } = build({}, 2);
    const d = cfs.dashboard!;
    for (const name of ['PercentIoLimit', 'ThroughputNearLimit', 'NoHealthyCacheNode', 'CullingStalled1', 'CacheNotServing1', 'CullingStalled2', 'CacheNotServing2']) {
      expect(d.alarm(name)).toBe(d.alarms.find((a) => a.node.id === name));
    }
    expect(d.alarms).toHaveLength(7);
    expect(() => d.alarm('MirrorFull')).toThrow(/has no alarm named 'MirrorFull'; its alarms are PercentIoLimit, ThroughputNearLimit, NoHealthyCacheNode, CullingStalled1/);
  });

  test('a disk cache written but not serving: one alarm per client group, and one for nodes with nodeDiskCache', () => {
    const expression = 'IF(w >= 268435456 AND w - g >= 0.5 * w AND r < 0.1 * w, 1, 0)';
    const check = (alarm: any, group: string) => {
      expect(alarm).toMatchObject({ Threshold: 1, EvaluationPeriods: 4, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
      expect(alarm.Metrics.find((m: any) => m.Expression).Expression).toBe(expression);
      const inputs = Object.fromEntries(alarm.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [m.Id, m.MetricStat]));
      expect(Object.keys(inputs).sort()).toEqual(['g', 'r', 'w']);
      for (const [id, name] of [['r', 'CacheDiskReadBytes'], ['w', 'CacheDiskWriteBytes'], ['g', 'CacheDiskGrowthBytes']]) {
        expect(inputs[id]).toMatchObject({ Metric: { Namespace: 'CdkEfsCache', MetricName: name }, Period: 900, Stat: 'Sum' });
        expect(inputs[id].Metric.Dimensions).toEqual(expect.arrayContaining([{ Name: 'Group', Value: group }]));
      }
    };
    const { alarms } = build({}, 2);
    const notServing = alarms.filter((a) => /was written but did not serve for an hour/.test(a.AlarmDescription));
    expect(notServing.map((a) => /^The disk cache of the FS-Cache clients of (\S+) was written/.exec(a.AlarmDescription)?.[1])).toEqual(['TestStack/Data/Clients1', 'TestStack/Data/Clients2']);
    check(notServing[0], 'TestStack/Data/Clients1');
    check(notServing[1], 'TestStack/Data/Clients2');
    // The fleet's nodes have no disk cache by default (c7gn has no instance store): no node alarm or widget.
    expect(notServing.some((a) => /cache nodes/.test(a.AlarmDescription))).toBe(false);
    const withDisk = build({ cacheFleet: { capacity: Capacity.nodes(2), instanceType: new ec2.InstanceType('c6gd.16xlarge'), nodeDiskCache: NodeDiskCache.instanceStore() } }, 0);
    const [node] = withDisk.alarms.filter((a) => /the cache nodes of TestStack\/Data\/CacheFleet was written but did not serve/.test(a.AlarmDescription));
    check(node, 'TestStack/Data/CacheFleet');
    expect(metricsOf(withDisk.byTitle(/^Cache nodes: disk cache bytes served/)[0]).flat()).toEqual(expect.arrayContaining(['CacheDiskReadBytes', 'TestStack/Data/CacheFleet']));
    expect(withDisk.byTitle(/^Cache nodes: disk cache free/)).toHaveLength(1);
  });

  test('the "not serving" rule: a warm-up, a cache held in RAM and a serving cache do not trip it; a cache that stores again what it held and serves nothing does', () => {
    const GiB = 1024 ** 3;
    expect(NOT_SERVING).toEqual({ minWriteBytes: 256 * 1024 ** 2, rewriteShare: 0.5, readShare: 0.1 });
    expect(notServing(0, 4 * GiB, 4 * GiB)).toBe(false); // warm-up: every byte written grows the cache
    expect(notServing(0, 0, 0)).toBe(false); // warm, held in RAM: nothing written
    expect(notServing(2 * GiB, 4 * GiB, 0)).toBe(false); // full, culling and serving
    expect(notServing(0, 100 * 1024 ** 2, 0)).toBe(false); // below the floor
    expect(notServing(0, 4 * GiB, 0)).toBe(true); // written again, nothing served
    expect(notServing(0.08 * 4 * GiB, 4 * GiB, 1 * GiB)).toBe(true); // some 8 % read back while storing again (the lab's kernels)
    expect(notServing(0.2 * 4 * GiB, 4 * GiB, 0)).toBe(false); // a cache that serves a fifth of what it stores
  });

  test('Bursting throughput adds the burst credit widget and alarm; thresholds and the topic follow the props', () => {
    const { stack, vpc } = stackWithVpc();
    const topic = new sns.Topic(stack, 'Alerts', { enforceSSL: true });
    new CachedFileSystem(stack, 'Data', {
      vpc,
      originFileSystem: { throughputMode: efs.ThroughputMode.BURSTING },
      monitoring: { alarmTopic: topic, percentIoLimitThreshold: 75, burstCreditBalanceThreshold: Size.gibibytes(100) },
    });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'BurstCreditBalance', Threshold: 100 * 1024 ** 3, ComparisonOperator: 'LessThanThreshold',
      AlarmActions: [{ Ref: Match.stringLikeRegexp('^Alerts') }], OKActions: [{ Ref: Match.stringLikeRegexp('^Alerts') }],
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'PercentIOLimit', Threshold: 75 });
    t.resourceCountIs('AWS::CloudWatch::Alarm', 3);
  });

  test('dashboard: false creates none; contradictions name the prop', () => {
    const { t } = build({ dashboard: false });
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    t.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    const { stack, vpc } = stackWithVpc();
    expect(() => new CachedFileSystem(stack, 'A', { vpc, dashboard: false, monitoring: {} })).toThrow(/Invalid monitoring: .*dashboard is false/);
    expect(() => new CachedFileSystem(stack, 'B', { vpc, monitoring: { percentIoLimitThreshold: 150 } })).toThrow(/Invalid percentIoLimitThreshold: is a percentage/);
  });

  test('metric helpers on the tiers return the metrics users alarm on', () => {
    const { cfs, stack } = build();
    const f = cfs.cacheFleet!;
    expect(f.metricNfsdBytesRead().metricName).toBe('NfsdBytesRead');
    expect(f.metricNfsdBytesRead().namespace).toBe('CdkEfsCache');
    // Nodes are numbered from 1, as their construct ids (Node2) and their Route 53 names (node2.) are.
    const node2 = f.nodes.find((n) => n.nodeNumber === 2)!;
    expect(node2.node.id).toBe('Node2');
    expect(node2.metricNetworkOut().metricName).toBe('NetworkOut');
    expect(stack.resolve(node2.metricNetworkOut().dimensions?.AutoScalingGroupName)).toEqual({ Ref: expect.stringMatching(/^DataCacheFleetNode2GroupASG/) });
    expect(node2.metricCpuUtilization().metricName).toBe('CPUUtilization');
    expect(node2.metricInService().metricName).toBe('GroupInServiceInstances');
    expect(stack.resolve(node2.endpoint)).toMatch(/^node2\.cache\.efs-cache\.internal$/);
  });

  test('cdk-nag AwsSolutions finds nothing unacknowledged', () => {
    const { app } = build();
    expect(nagFindings(app)).toEqual([]);
  });

  test('without alarmTopic (the quick start): NIST 800-53 R5 and HIPAA report nothing; the rule acknowledged on each alarm with why it has no action', () => {
    const { app, alarms } = build({}, 2);
    expect(alarms.length).toBeGreaterThan(4);
    expect(alarms.every((a) => a.AlarmActions === undefined)).toBe(true);
    expect(nagFindings(app, ['NIST', 'HIPAA'])).toEqual([]);
  });

  test('with alarmTopic, every alarm has the topic as its ALARM and OK action', () => {
    const { app, stack, vpc } = stackWithVpc();
    const alarmTopic = new sns.Topic(stack, 'Alarms');
    const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(2) }, monitoring: { alarmTopic } });
    cfs.addClientLaunchTemplate('Clients1');
    const t = Template.fromStack(stack);
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(4);
    for (const a of alarms) {
      expect(a.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^Alarms/) }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: expect.stringMatching(/^Alarms/) }]);
    }
    expect(nagFindings(app, ['NIST']).filter((f) => /CloudWatchAlarmAction/.test(f))).toEqual([]);
  });
});
