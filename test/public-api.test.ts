// The public API as jsii carries it to every language (issue 17): what index.ts exports, fleets of other stacks,
// grants to the instances' roles, mirror metrics by enum, and validation errors bound to their construct.
import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as lib from '../lib';
import {
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  DiskCacheMetric,
  FsCacheClientLaunchTemplate,
  FsCacheClientLaunchTemplateProps,
  MirrorMetric,
  MountHelper,
  MountSource,
  SeedSource,
} from '../lib';
import { importedFs, stackWithVpc } from './util';
import { launchTemplateUserData, parameters } from './util/user-data';

describe('exports', () => {
  test('only classes and enums leave at run time: no validators, fsid helper, metric tables or the fleet\'s inner constructs', () => {
    // Names with a value: jest compiles each file alone, where a re-exported interface stays as a name bound to
    // undefined (the build, with the whole program, drops it).
    const values = Object.keys(lib).filter((k) => (lib as Record<string, unknown>)[k] !== undefined);
    expect(values.sort()).toEqual([
      'AmazonLinux2023KernelLine', 'CacheDashboard', 'CacheFleet', 'CacheOrigin', 'CachedFileSystem', 'Capacity',
      'DataSeeder', 'DiskCache', 'DiskCacheMetric', 'EcsFleetCapacity', 'EcsFleetVolume', 'EksFleetNodes', 'EksFleetVolume', 'FanOut', 'FleetExport',
      'FsCacheClientLaunchTemplate', 'Mirror', 'MirrorMetric', 'MirrorStorage', 'MountHelper', 'MountSource', 'NfsVersion', 'NodeDiskCache', 'OriginFileSystem', 'SeedSource',
    ]);
  });

  test('the metric namespace is a static member', () => {
    expect(CacheFleet.METRIC_NAMESPACE).toBe('CdkEfsCache');
  });
});

describe('CacheFleet.fromCacheFleetAttributes', () => {
  function fleetAndClients(attrs: Partial<lib.CacheFleetAttributes> = {}) {
    const { app, stack: fleetStack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(fleetStack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(fleetStack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1) });
    const clientStack = new Stack(app, 'ClientStack');
    const clientVpc = new ec2.Vpc(clientStack, 'Vpc', { maxAzs: 1 });
    const imported = CacheFleet.fromCacheFleetAttributes(clientStack, 'Fleet', {
      endpoint: 'cache.efs-cache.internal',
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(clientStack, 'FleetSg', 'sg-0123456789abcdef1'),
      ...attrs,
    });
    const clients = new FsCacheClientLaunchTemplate(clientStack, 'Clients', {
      vpc: clientVpc, source: MountSource.cacheFleet(imported, { mirrorPaths: attrs.mirrorExports ? ['/efs/app'] : undefined }),
    });
    const params = parameters(Object.values(launchTemplateUserData(clientStack))[0]);
    return { fleet, imported, clients, clientStack, params };
  }

  test('clients in another stack mount the imported fleet with its attribute caching, and are let into its group', () => {
    const { params, clientStack } = fleetAndClients({ exportPath: '/data', attributeCacheTimeout: Duration.minutes(2) });
    expect(params.EFSC_NFS_SERVER).toBe('cache.efs-cache.internal');
    expect(params.EFSC_NFS_PATH).toBe('/data');
    expect(params.EFSC_MOUNT_OPTIONS).toContain('acregmin=120,acregmax=120,acdirmin=600,acdirmax=600');
    Template.fromStack(clientStack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: 'sg-0123456789abcdef1', FromPort: 2049, ToPort: 2049, IpProtocol: 'tcp',
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ClientsSecurityGroup'), 'GroupId'] },
    });
  });

  test('defaults: /efs and ten-minute timers, as a CacheFleet has them', () => {
    const { imported, fleet, params } = fleetAndClients();
    expect(imported.exportPath).toBe(fleet.exportPath);
    expect(imported.attributeCacheTimeout.toSeconds()).toBe(fleet.attributeCacheTimeout.toSeconds());
    expect(imported.directoryCacheTimeout.toSeconds()).toBe(fleet.directoryCacheTimeout.toSeconds());
    expect(imported.mirrorExports).toEqual([]);
    expect(params.EFSC_NFS_PATH).toBe('/efs');
  });

  test('mirrors given as attributes can be mounted; others are refused with the imported fleet named', () => {
    const mirrorExports = [{ path: '/efs/app', exportPath: '/mirror/app', fsid: '0f6a1b2c-3d4e-5f60-8172-93a4b5c6d7e8' }];
    expect(() => fleetAndClients({ mirrorExports })).not.toThrow();
    const { stack, vpc } = stackWithVpc();
    const imported = CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
      endpoint: 'x', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef1'),
    });
    expect(() => new FsCacheClientLaunchTemplate(stack, 'C', { vpc, source: MountSource.cacheFleet(imported, { mirrorPaths: ['/efs/app'] }) }))
      .toThrow(/^Invalid source\.mirrorPaths: '\/efs\/app' is not a mirror of TestStack\/Imported/);
  });
});

describe('grants to the instances\' roles (IGrantable)', () => {
  test.each([
    ['fleet', (stack: Stack, vpc: ec2.IVpc) => new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1),
    }), /^FleetRole/],
    ['clients', (stack: Stack, vpc: ec2.IVpc) => new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.fileSystem(importedFs(stack)) }), /^ClientsRole/],
    ['seeder', (stack: Stack, vpc: ec2.IVpc) => new DataSeeder(stack, 'Seeder', {
      vpc, fileSystem: importedFs(stack), source: SeedSource.instanceDirectory('/opt/data'), mountHelper: MountHelper.NFS,
    }), /^SeederRole/],
  ])('bucket.grantRead(%s) lands on its role', (_name, build, role) => {
    const { stack, vpc } = stackWithVpc();
    const grantee = build(stack, vpc);
    const bucket = new s3.Bucket(stack, 'Extra');
    bucket.grantRead(grantee);
    // The roles keep their statements in one customer managed policy each (<role>/Policy).
    const policies = Template.fromStack(stack).findResources('AWS::IAM::ManagedPolicy', {
      Properties: { PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: Match.arrayWith(['s3:GetObject*']) })]) } },
    });
    expect(Object.keys(policies)).toHaveLength(1);
    expect(Object.keys(policies)[0]).toMatch(role);
  });
});

describe('MirrorMetric', () => {
  test.each([
    [MirrorMetric.SYNC_FAILURES, 'Sum'], [MirrorMetric.ORIGIN_OPS, 'Sum'],
    [MirrorMetric.AGE_SECONDS, 'Maximum'], [MirrorMetric.FULL, 'Maximum'], [MirrorMetric.BYTES, 'Maximum'],
  ])('%s: %s over the nodes', (metric, statistic) => {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1) });
    const m = fleet.metricMirror(metric);
    expect(m.metricName).toBe(metric);
    expect(m.statistic).toBe(statistic);
    expect(m.namespace).toBe(CacheFleet.METRIC_NAMESPACE);
  });
});

describe('DiskCacheMetric', () => {
  test.each(Object.values(DiskCacheMetric).map((m) => [m, m === DiskCacheMetric.FREE_PERCENT ? 'Minimum' : 'Sum']))('%s: %s over the instances, on clients and on nodes', (metric, statistic) => {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1) });
    const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet) });
    for (const [m, group] of [[fleet.metricNodeDiskCache(metric as DiskCacheMetric), 'TestStack/Fleet'], [clients.metricDiskCache(metric as DiskCacheMetric), 'TestStack/Clients']] as const) {
      expect([m.metricName, m.statistic, m.namespace, m.dimensions?.Group]).toEqual([metric, statistic, CacheFleet.METRIC_NAMESPACE, group]);
    }
  });
});

describe('validation errors are bound to their construct', () => {
  test.each([
    ['a fleet', (stack: Stack, vpc: ec2.IVpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.elastic({ minNodes: 0, maxNodes: 4 }) }),
      'TestStack/Fleet; in Python: capacity.min_nodes', /^Invalid capacity.minNodes: /],
    ['a fleet inside CachedFileSystem', (stack: Stack, vpc: ec2.IVpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.elastic({ minNodes: 0, maxNodes: 4 }) } }),
      'TestStack/Data/CacheFleet; in Python: capacity.min_nodes', /^Invalid capacity.minNodes: /],
    ['a client\'s CIDR check', (stack: Stack, vpc: ec2.IVpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), clientCidrs: ['0.0.0.0/0'] }),
      'TestStack/Fleet; in Python: client_cidrs', /^Invalid clientCidrs: /],
    ['a client template', (stack: Stack, vpc: ec2.IVpc) => new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc } as unknown as FsCacheClientLaunchTemplateProps),
      'TestStack/Clients', /^Invalid source: /],
    ['a seeder', (stack: Stack, vpc: ec2.IVpc) => new DataSeeder(stack, 'Seeder', {
      vpc, fileSystem: importedFs(stack), source: SeedSource.instanceDirectory('/opt/data'), targetPath: 'relative',
    }), 'TestStack/Seeder; in Python: target_path', /^Invalid targetPath: /],
  ])('%s: the message ends with the construct path (and the prop\'s Python name), which the error also carries', (_name, build, where, message) => {
    const { stack, vpc } = stackWithVpc();
    let error: Error & { constructPath?: string } = new Error('nothing thrown');
    try {
      build(stack, vpc);
    } catch (e) {
      error = e as Error;
    }
    expect(error.message).toMatch(message);
    expect(error.message.endsWith(` (at ${where})`)).toBe(true);
    expect(error.constructPath).toBe(where.split(';')[0]);
    expect(error.name).toBe('ValidationError');
  });

  test('a SeedSource is checked when a seeder uses it, so its error names the seeder\'s path', () => {
    const source = SeedSource.instanceDirectory('relative');
    const { stack, vpc } = stackWithVpc();
    expect(() => new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source }))
      .toThrow(/^Invalid source: .*got 'relative'\. \(at TestStack\/Seeder\)$/);
  });

  test('a seeder\'s source is the SeedSource given; its factories are named by the kind, without from', () => {
    const source = SeedSource.instanceDirectory('/opt/data');
    const { stack, vpc } = stackWithVpc();
    expect(new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source }).source).toBe(source);
    const statics = SeedSource as unknown as Record<string, unknown>;
    expect(['s3', 'asset', 'instanceDirectory'].map((f) => typeof statics[f])).toEqual(['function', 'function', 'function']);
    expect(['fromBucket', 'fromAsset', 'fromInstanceDirectory'].map((f) => statics[f])).toEqual([undefined, undefined, undefined]);
  });
});
