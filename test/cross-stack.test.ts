import { Environment, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SampleStack } from '../bin/sample-stack';
import {
  CacheDashboard,
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountSource,
  NfsVersion,
  OriginFileSystem,
  SeedSource,
} from '../lib';
import { nagFindings, newApp, stackWithVpc } from './util';

/*
 * Tiers in stacks of their own. Every tier that uses another (a fleet its file system, clients their fleet or file
 * system, a seeder its file system) makes the security group rules between them from its own side, so the rules
 * live in the consumer's stack and only the consumer depends on the producer: no dependency cycle, in one app or
 * across apps.
 */

const REGION = 'eu-central-1';
const ENVS: Array<[string, Environment | undefined]> = [
  ['env-agnostic', undefined],
  ['region', { region: REGION }],
  ['region and account', { region: REGION, account: '123456789012' }],
];

interface Layout {
  readonly name: string;
  readonly fanOut: FanOut;
  readonly clientNfsVersion: NfsVersion;
  readonly mirrorPaths?: string[];
}

const NLB = FanOut.networkLoadBalancer();
const LAYOUTS: Layout[] = [
  { name: 'Route 53, NFSv4.1', fanOut: FanOut.route53(), clientNfsVersion: NfsVersion.NFS_V4_1 },
  { name: 'Route 53, NFSv3 (mountd)', fanOut: FanOut.route53(), clientNfsVersion: NfsVersion.NFS_V3 },
  { name: 'NLB, mirrors', fanOut: NLB, clientNfsVersion: NfsVersion.NFS_V4_1, mirrorPaths: ['/efs/app'] },
];

/** The network, the origin, the fleet, three kinds of clients, a seeder and a dashboard, each tier in its own stack. */
function multiStackApp(layout: Layout, env?: Environment) {
  const { app, stack: network, vpc } = stackWithVpc(newApp(), 'Network', env);
  const originStack = new Stack(app, 'Origin', { env });
  const origin = new OriginFileSystem(originStack, 'Origin', { vpc });
  // The user's data set, the seeder's source: its own findings (logging, versioning, replication, a KMS key) are the
  // user's, so they are acknowledged here, where the test makes it.
  const bucket = new s3.Bucket(originStack, 'Data', {
    enforceSSL: true, blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL, encryption: s3.BucketEncryption.S3_MANAGED,
  });
  const reason = 'The bare bucket of the test, standing for the user\'s data set.';
  Validations.of(bucket).acknowledge({ id: 'AwsSolutions-S1', reason }, ...['NIST.800.53.R5', 'HIPAA.Security'].flatMap((pack) =>
    ['S3BucketLoggingEnabled', 'S3BucketReplicationEnabled', 'S3BucketVersioningEnabled', 'S3DefaultEncryptionKMS'].map((rule) => ({ id: `${pack}-${rule}`, reason }))));
  const fleetStack = new Stack(app, 'Fleet', { env });
  const fleet = new CacheFleet(fleetStack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(origin.fileSystem), capacity: Capacity.nodes(2), fanOut: layout.fanOut, clientNfsVersion: layout.clientNfsVersion,
    mirrors: layout.mirrorPaths?.map((p) => Mirror.path(p)),
  });
  const clientStack = new Stack(app, 'Clients', { env });
  new FsCacheClientLaunchTemplate(clientStack, 'ViaFleet', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: layout.mirrorPaths }) });
  const directStack = new Stack(app, 'DirectClients', { env });
  new FsCacheClientLaunchTemplate(directStack, 'Direct', { vpc, source: MountSource.fileSystem(origin.fileSystem) });
  const importedStack = new Stack(app, 'ImportedFleetClients', { env });
  const imported = CacheFleet.fromCacheFleetAttributes(importedStack, 'Fleet', {
    endpoint: fleet.endpoint, securityGroup: fleet.connections.securityGroups[0], exportPath: fleet.exportPath,
    clientNfsVersion: fleet.clientNfsVersion, mirrorExports: fleet.mirrorExports,
  });
  new FsCacheClientLaunchTemplate(importedStack, 'ViaImported', { vpc, source: MountSource.cacheFleet(imported, { mirrorPaths: layout.mirrorPaths }) });
  const seederStack = new Stack(app, 'Seeder', { env });
  new DataSeeder(seederStack, 'Seeder', { vpc, fileSystem: origin.fileSystem, source: SeedSource.s3(bucket, 'data/') });
  const dashboardStack = new Stack(app, 'Monitoring', { env });
  // Alarms with an action, as the README asks of compliance packs: an encrypted, TLS-only topic.
  const key = new kms.Key(dashboardStack, 'Key', { enableKeyRotation: true });
  key.addToResourcePolicy(new iam.PolicyStatement({
    principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')], actions: ['kms:Decrypt', 'kms:GenerateDataKey*'], resources: ['*'],
  }));
  const alarmTopic = new sns.Topic(dashboardStack, 'Alarms', { masterKey: key, enforceSSL: true });
  new CacheDashboard(dashboardStack, 'Dashboard', { originFileSystem: origin, cacheFleet: fleet, alarmTopic });
  return { app, network, originStack, fleetStack, clientStack, directStack, importedStack, seederStack, dashboardStack, fleet, origin };
}

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

function resources(stack: Stack, type: string): Array<Record<string, any>> {
  return Object.values(Template.fromStack(stack).toJSON().Resources as Resources).filter((r) => r.Type === type).map((r) => r.Properties);
}

/** A value of another stack: an export (`Fn::ImportValue`) or, with the project's flags, an output (`Fn::GetStackOutput`). */
const isImport = (v: unknown) => typeof v === 'object' && v !== null && ('Fn::ImportValue' in v || 'Fn::GetStackOutput' in v);
const localGroup = (v: any) => typeof v === 'object' && v !== null && Array.isArray(v['Fn::GetAtt']) && v['Fn::GetAtt'][1] === 'GroupId';

/** Ingress rules of a stack: into which group (imported from another stack or not), from which, on which port. */
function ingress(stack: Stack) {
  return resources(stack, 'AWS::EC2::SecurityGroupIngress').map((p) => ({
    intoOtherStack: isImport(p.GroupId), fromLocalGroup: localGroup(p.SourceSecurityGroupId), port: p.FromPort as number,
  }));
}

describe('tiers in stacks of their own, in one app', () => {
  test.each(LAYOUTS)('$name: synthesizes with no dependency cycle, each stack depending only on the ones it uses', (layout) => {
    const s = multiStackApp(layout);
    expect(() => s.app.synth()).not.toThrow();
    const deps = (stack: Stack) => stack.dependencies.map((d) => d.stackName).sort();
    expect(deps(s.originStack)).toEqual(['Network']);
    expect(deps(s.fleetStack)).toEqual(['Network', 'Origin']);
    expect(deps(s.clientStack)).toEqual(['Fleet', 'Network']);
    expect(deps(s.directStack)).toEqual(['Network', 'Origin']);
    expect(deps(s.importedStack)).toEqual(['Fleet', 'Network']);
    expect(deps(s.seederStack)).toEqual(['Network', 'Origin']);
  });

  test.each(LAYOUTS)('$name: every rule between tiers lives in the consumer\'s stack', (layout) => {
    const s = multiStackApp(layout);
    const v3 = layout.clientNfsVersion === NfsVersion.NFS_V3;
    // Clients of the fleet (its own or imported) that mount its mirrors open the mirrors' port too, the same way.
    const ports = [2049, ...(v3 ? [20048] : []), ...(layout.mirrorPaths ? [2050] : [])];
    // The origin's stack holds no rule at all: its group is opened by the fleet's, the clients' and the seeder's stacks.
    expect(ingress(s.originStack)).toEqual([]);
    expect(resources(s.originStack, 'AWS::EC2::SecurityGroupEgress')).toEqual([]);
    // Into the origin's group, from the fleet's own group, in the fleet's stack; plus the NLB's own rule (one stack).
    expect(ingress(s.fleetStack)).toEqual(expect.arrayContaining([{ intoOtherStack: true, fromLocalGroup: true, port: 2049 }]));
    expect(ingress(s.fleetStack).filter((r) => r.intoOtherStack)).toHaveLength(1);
    if (layout.fanOut === NLB) {
      expect(ingress(s.fleetStack)).toContainEqual({ intoOtherStack: false, fromLocalGroup: true, port: 2049 });
    }
    // With mirrors, the load balancer is let into the nodes on their mirrors' port too, in the fleet's stack.
    const lbPorts = ingress(s.fleetStack).filter((r) => !r.intoOtherStack).map((r) => r.port).sort();
    expect(lbPorts).toEqual(layout.fanOut !== NLB ? [] : layout.mirrorPaths ? [2049, 2050] : [2049]);
    // The fleet's out rule to the origin is in the fleet's stack too.
    expect(resources(s.fleetStack, 'AWS::EC2::SecurityGroupEgress').some((e) => isImport(e.DestinationSecurityGroupId))).toBe(true);
    // Clients (of the fleet, of the imported fleet, of the file system) and the seeder open their source from their own stack.
    for (const [stack, expected] of [[s.clientStack, ports], [s.importedStack, ports], [s.directStack, [2049]], [s.seederStack, [2049]]] as const) {
      expect(ingress(stack)).toEqual(expected.map((port) => ({ intoOtherStack: true, fromLocalGroup: true, port })));
    }
    expect(resources(s.seederStack, 'AWS::EC2::SecurityGroupEgress').some((e) => isImport(e.DestinationSecurityGroupId))).toBe(true);
    // The clients' group allows all outbound traffic: no egress rule is asked of it, so aws-cdk warns of none ignored.
    for (const stack of [s.clientStack, s.importedStack, s.directStack]) {
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('Ignoring Egress rule'));
    }
  });

  test.each(ENVS)('cdk-nag AwsSolutions, NIST 800-53 R5 and HIPAA Security: no unacknowledged finding (%s)', (_name, env) => {
    for (const layout of LAYOUTS) {
      const s = multiStackApp(layout, env);
      expect([layout.name, nagFindings(s.app, ['AwsSolutions', 'NIST', 'HIPAA'])]).toEqual([layout.name, []]);
    }
  });
});

describe('a fleet and a file system of another app, imported by their attributes', () => {
  const FLEET_SG = 'sg-0fee7000000000001';
  const EFS_SG = 'sg-0e75000000000000a';

  // The other app's fleet mirrors /efs/app (its fsid is the other app's; any UUID will do here).
  const MIRRORS = [{ path: '/efs/app', exportPath: '/mirror/app', fsid: '4ef15917-cc5e-c97b-c462-beb4a33a03b1' }];

  function importingApp(clientNfsVersion: NfsVersion, mountMirrors: boolean) {
    const { app, stack, vpc } = stackWithVpc(newApp(), 'Consumer', { region: REGION });
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', {
      endpoint: 'cache.efs-cache.internal',
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', FLEET_SG),
      clientNfsVersion,
      mirrorExports: MIRRORS,
    });
    const fileSystem = efs.FileSystem.fromFileSystemAttributes(stack, 'Efs', {
      fileSystemId: 'fs-0123456789abcdef0',
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'EfsSg', EFS_SG),
    });
    new FsCacheClientLaunchTemplate(stack, 'ViaFleet', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: mountMirrors ? ['/efs/app'] : [] }) });
    new FsCacheClientLaunchTemplate(stack, 'Direct', { vpc, source: MountSource.fileSystem(fileSystem) });
    new CacheFleet(stack, 'LocalFleet', { vpc, origin: CacheOrigin.efs(fileSystem), capacity: Capacity.nodes(1) });
    return { app, stack };
  }

  test.each([
    [NfsVersion.NFS_V4_1, false],
    [NfsVersion.NFS_V3, false],
    [NfsVersion.NFS_V4_1, true],
    [NfsVersion.NFS_V3, true],
  ])('clients and a fleet of the importing stack open the imported groups from there (%s, mirrors mounted: %s)', (protocol, mountMirrors) => {
    const { app, stack } = importingApp(protocol, mountMirrors);
    expect(() => app.synth()).not.toThrow();
    const rules = resources(stack, 'AWS::EC2::SecurityGroupIngress').map((p) => ({
      into: p.GroupId, fromLocalGroup: localGroup(p.SourceSecurityGroupId), port: p.FromPort,
    }));
    const fleetPorts = [2049, ...(protocol === NfsVersion.NFS_V3 ? [20048] : []), ...(mountMirrors ? [2050] : [])];
    expect(rules.filter((r) => r.into === FLEET_SG)).toEqual(fleetPorts.map((port) => ({ into: FLEET_SG, fromLocalGroup: true, port })));
    // The direct clients and the local fleet, each from its own group.
    expect(rules.filter((r) => r.into === EFS_SG)).toEqual([
      { into: EFS_SG, fromLocalGroup: true, port: 2049 },
      { into: EFS_SG, fromLocalGroup: true, port: 2049 },
    ]);
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });
});

describe('the sample composition under cdk-nag', () => {
  test.each(ENVS)('AwsSolutions, NIST 800-53 R5 and HIPAA Security: no unacknowledged finding (%s)', (_name, env) => {
    const app = newApp();
    new SampleStack(app, 'EfsCacheSample', { env });
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });

  test('a CachedFileSystem over a file system of another stack: its fleet opens the file system from its own stack', () => {
    const { app, vpc } = stackWithVpc(newApp(), 'Network', { region: REGION });
    const originStack = new Stack(app, 'Origin', { env: { region: REGION } });
    const origin = new OriginFileSystem(originStack, 'Origin', { vpc });
    const cachedStack = new Stack(app, 'Cached', { env: { region: REGION } });
    const cached = new CachedFileSystem(cachedStack, 'Cached', { vpc, originFileSystem: { fileSystem: origin.fileSystem }, cacheFleet: { capacity: Capacity.nodes(1) } });
    cached.addClientLaunchTemplate('Clients');
    expect(() => app.synth()).not.toThrow();
    expect(ingress(originStack)).toEqual([]);
    expect(ingress(cachedStack)).toContainEqual({ intoOtherStack: true, fromLocalGroup: true, port: 2049 });
  });
});

describe('acknowledgements name the resource as the template does', () => {
  test.each(ENVS)('the nodes\' instance/* and the signal\'s stack/* (%s)', (_name, env) => {
    const { app, stack, vpc } = stackWithVpc(newApp(), 'Named', env);
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(new OriginFileSystem(stack, 'Origin', { vpc }).fileSystem), capacity: Capacity.nodes(1) });
    app.synth();
    const acks = Object.keys(Object.assign({}, ...stack.node.findAll().flatMap((c) => c.node.metadata)
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).map((m) => m.data)));
    const region = env?.region ?? '<AWS::Region>';
    const account = env?.account ?? '<AWS::AccountId>';
    const partition = env?.region ? 'aws' : '<AWS::Partition>';
    expect(acks).toEqual(expect.arrayContaining([
      expect.stringContaining(`AwsSolutions-IAM5[Resource::arn:${partition}:ec2:${region}:${account}:instance/*]`),
      expect.stringContaining(`AwsSolutions-IAM5[Resource::arn:${partition}:cloudformation:${region}:${account}:stack/Named/*]`),
    ]));
  });
});
