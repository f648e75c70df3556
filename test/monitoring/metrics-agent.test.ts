import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { CacheFleet, CacheOrigin, Capacity, DiskCacheMetric, FsCacheClientLaunchTemplate, MountHelper, MountSource } from '../../lib';
import { compactScript } from '../../lib/instance/user-data';
import { CLIENT_METRICS, METRIC_NAMESPACE, NODE_METRICS } from '../../lib/monitoring/metrics';
import { readAsset } from '../../lib/private/assets';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters, expand } from '../util/user-data';

function setUp(metrics?: boolean) {
  const { app, stack, vpc } = stackWithVpc();
  const fileSystem = importedFs(stack);
  const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), metrics });
  const client = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(fleet), metrics });
  const ud = launchTemplateUserData(stack);
  const of = (prefix: string) => Object.entries(ud).find(([id]) => id.startsWith(prefix))![1];
  return { app, stack, fleet, client, t: Template.fromStack(stack), node: of('FleetLaunchTemplate'), clientUd: of('Client') };
}

function putMetricStatements(t: Template): any[] {
  // The roles' own statements are in a policy or a managed policy, depending on how the construct attaches them.
  return ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy'].flatMap((type) => Object.values<any>(t.findResources(type)))
    .flatMap((p) => p.Properties.PolicyDocument.Statement)
    .filter((s) => JSON.stringify(s.Action).includes('cloudwatch:'));
}

describe('on-instance metrics through the CloudWatch agent', () => {
  test('both tiers get EFSC_METRICS=cloudwatch-agent and their construct path as EFSC_METRICS_GROUP', () => {
    const { fleet, client, node, clientUd } = setUp();
    expect(parameters(node)).toEqual(expect.objectContaining({ EFSC_METRICS: 'cloudwatch-agent', EFSC_METRICS_GROUP: 'TestStack/Fleet' }));
    expect(parameters(clientUd)).toEqual(expect.objectContaining({ EFSC_METRICS: 'cloudwatch-agent', EFSC_METRICS_GROUP: 'TestStack/Client' }));
    expect(fleet.metricsGroup).toBe('TestStack/Fleet');
    expect(client.metricsGroup).toBe('TestStack/Client');
    // The library and the collector are in the user data; the collector is what the timer runs.
    for (const ud of [node, clientUd].map(expand)) {
      expect(ud).toContain('metrics_collect()');
      expect(ud).toContain('metrics_read()');
      expect(ud).toContain('ExecStart=$SELF --metrics');
    }
  });

  test('PutMetricData only, only in the CdkEfsCache namespace, for the nodes and the clients', () => {
    const { t } = setUp();
    const statements = putMetricStatements(t);
    expect(statements).toHaveLength(2);
    for (const s of statements) {
      expect(s).toEqual({
        Action: 'cloudwatch:PutMetricData',
        Effect: 'Allow',
        Resource: '*',
        Condition: { StringEquals: { 'cloudwatch:namespace': METRIC_NAMESPACE } },
      });
    }
  });

  test('metrics: false installs nothing and grants nothing', () => {
    const { t, node, clientUd } = setUp(false);
    expect(putMetricStatements(t)).toEqual([]);
    for (const ud of [node, clientUd]) expect(parameters(ud)).toEqual(expect.objectContaining({ EFSC_METRICS: 'off', EFSC_METRICS_GROUP: '' }));
  });

  test('cdk-nag AwsSolutions stays clean with metrics on and off', () => {
    for (const metrics of [true, false]) {
      const { app } = setUp(metrics);
      expect(nagFindings(app)).toEqual([]);
    }
  });

  test('a user-given role gets the permission too', () => {
    const { stack, vpc } = stackWithVpc();
    const fileSystem = importedFs(stack);
    const role = new iam.Role(stack, 'Mine', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
    new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS, role });
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Mine') }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'cloudwatch:PutMetricData' })]) },
    });
  });

  test('a construct path that cannot be a Group value is refused at synth, unless metrics are off', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0 });
    const fileSystem = importedFs(stack);
    expect(() => new FsCacheClientLaunchTemplate(stack, 'My Clients', { vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS }))
      .toThrow(/Invalid metrics.*S\/My Clients/);
    expect(() => new FsCacheClientLaunchTemplate(stack, 'Other Clients', { vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS, metrics: false }))
      .not.toThrow();
  });

  test('the agent configuration names the namespace, listens for StatsD on 127.0.0.1:8125 and adds no host dimension', () => {
    const lib = readAsset('lib', 'metrics.sh');
    const json = /<<'EOF'[^\n]*\n(\{.*\})\nEOF/.exec(lib);
    expect(json).not.toBeNull();
    expect(JSON.parse(json![1])).toEqual({
      agent: { omit_hostname: true },
      metrics: { namespace: METRIC_NAMESPACE, metrics_collected: { statsd: { service_address: '127.0.0.1:8125' } } },
    });
  });

  test('the collectors send every contract metric, counters as |c and gauges as |g', () => {
    // The node's collector reads its mirrors' metrics in lib/mirror-metrics.sh, and both read a disk cache's in lib/fscache.sh.
    const fscache = compactScript(readAsset('lib', 'fscache.sh'));
    const node = [...compactScript(readAsset('cache-node', 'bootstrap.sh')), ...compactScript(readAsset('lib', 'mirror-metrics.sh')), ...fscache].join('\n');
    const client = [...compactScript(readAsset('client', 'bootstrap.sh')), ...fscache].join('\n');
    expect(client).toMatch(/metrics_read\(\) \{ fscache_metrics_read; \}/);
    expect(node).toMatch(/if disk_cache; then fscache_metrics_read; fi/);
    // The gauges, named here apart from the table: the table's types must say the same, and the collectors send them so.
    const gauges = ['NfsdThreads', 'PageCacheBytes', 'CacheDiskFreePercent', 'MirrorAgeSeconds', 'MirrorSyncSeconds', 'MirrorFilesWalked',
      'MirrorFull', 'MirrorBytes'];
    // Nodes with a disk cache publish the clients' disk cache metrics too: each name once.
    const all = [...Object.values(NODE_METRICS), ...Object.values(CLIENT_METRICS)];
    expect([...new Set(all.filter((m) => m.type === 'gauge').map((m) => m.name))].sort()).toEqual([...gauges].sort());
    for (const [text, metrics] of [[node, Object.values(NODE_METRICS)], [client, Object.values(CLIENT_METRICS)]] as const) {
      for (const m of metrics) expect(text).toMatch(new RegExp(`${m.name} ${m.type === 'gauge' ? 'g' : 'c'}\\b`));
    }
  });

  test('dashboard metrics carry the dimensions the agent publishes: Group and metric_type', () => {
    const { fleet, client } = setUp();
    expect(fleet.metricNfsdOps().dimensions).toEqual({ Group: 'TestStack/Fleet', metric_type: 'counter' });
    expect(fleet.metricNfsdThreads().dimensions).toEqual({ Group: 'TestStack/Fleet', metric_type: 'gauge' });
    expect(client.metricCacheDiskFreePercent().dimensions).toEqual({ Group: 'TestStack/Client', metric_type: 'gauge' });
    expect(client.metricFscacheReads().dimensions).toEqual({ Group: 'TestStack/Client', metric_type: 'counter' });
    expect(client.metricDiskCache(DiskCacheMetric.READ_BYTES).dimensions).toEqual({ Group: 'TestStack/Client', metric_type: 'counter' });
    expect(client.metricDiskCache(DiskCacheMetric.READ_BYTES).metricName).toBe('CacheDiskReadBytes');
    expect(fleet.metricNodeDiskCache(DiskCacheMetric.GROWTH_BYTES).dimensions).toEqual({ Group: 'TestStack/Fleet', metric_type: 'counter' });
    expect(fleet.metricNodeDiskCache(DiskCacheMetric.FREE_PERCENT)).toMatchObject({ metricName: 'CacheDiskFreePercent', statistic: 'Minimum' });
  });
});
