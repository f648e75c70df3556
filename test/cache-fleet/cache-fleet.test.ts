import { Duration, Size } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CachedFileSystem,
  CacheFleet,
  CacheFleetProps,
  CacheOrigin,
  Capacity,
  EfsOriginOptions,
  FanOut,
  Mirror,
  MountHelper,
  NodeDiskCache,
} from '../../lib';
import { fsidFor } from '../../lib/cache-fleet/cache-fleet';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters } from '../util/user-data';

function fleet(props: Partial<CacheFleetProps> = {}, originOptions: EfsOriginOptions = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack), originOptions), ...props });
  const userData = launchTemplateUserData(stack);
  return { app, stack, vpc, fleet: f, t: Template.fromStack(stack), userData, params: Object.values(userData).map(parameters) };
}

describe('CacheFleet node configuration', () => {
  test('one launch template renders the parameters of every node; each node is told apart by its group\'s tags', () => {
    const { params, fleet: f, t, stack } = fleet();
    expect(params).toHaveLength(1);
    for (const p of params) {
      expect(p).toMatchObject({
        EFSC_EXPORT_PATH: '/efs',
        EFSC_EXPORT_FSID: f.fsid,
        EFSC_EXPORT_CLIENTS: '<Fn::GetAtt:Vpc8378EB38.CidrBlock>',
        EFSC_NFSD_THREADS: '128',
        EFSC_READ_AHEAD_KB: '8192',
        EFSC_SUNRPC_SLOTS: '128',
        EFSC_VFS_CACHE_PRESSURE: '1',
        EFSC_ORIGIN_MOUNT_TYPE: 'efs',
        EFSC_ORIGIN_PATH: '/',
        EFSC_ORIGIN_SERVER: 'fs-0123456789abcdef0.efs.<Ref:AWS::Region>.<Ref:AWS::URLSuffix>',
        EFSC_MOUNT_TIMEOUT_SEC: '180',
        EFSC_WARM_PATHS: '',
        EFSC_REWARM_INTERVAL: '',
        EFSC_SIGNAL_STACK: 'TestStack',
        EFSC_SIGNAL_REGION: '<Ref:AWS::Region>',
      });
      expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toEqual([
        'tls', 'iam', 'nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport',
        'ro', 'nocto', 'ac', 'lookupcache=all', 'acregmin=600', 'acregmax=600', 'acdirmin=600', 'acdirmax=600',
      ]);
      expect(p.EFSC_NODE_IDENTITY).toBe('tags');
      expect(p.EFSC_STABLE_ENI_ID).toBeUndefined();
      expect(p.EFSC_SIGNAL_RESOURCE).toBeUndefined();
    }
    // Each group tags its instances with its own logical id (what it signals) and its own stable interface.
    const groups = t.findResources('AWS::AutoScaling::AutoScalingGroup');
    expect(Object.keys(groups)).toHaveLength(2);
    for (const [id, g] of Object.entries(groups)) {
      const tags = Object.fromEntries(stack.resolve(g.Properties.Tags).map((x: any) => [x.Key, x]));
      expect(tags['cdk-efs-cache:signal-resource']).toEqual({ Key: 'cdk-efs-cache:signal-resource', Value: id, PropagateAtLaunch: true });
      expect(tags['cdk-efs-cache:stable-eni']).toEqual({
        Key: 'cdk-efs-cache:stable-eni', Value: { Ref: expect.stringMatching(new RegExp(`^${id.replace(/GroupASG.*/, '')}StableAddress`)) }, PropagateAtLaunch: true,
      });
      expect(g.Properties.LaunchTemplate.LaunchTemplateId).toEqual({ Ref: expect.stringMatching(/^FleetLaunchTemplate/) });
    }
    expect(f.fsid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  test('the fsid is deterministic: same path, same fsid; another fleet or origin path, another fsid', () => {
    expect(fsidFor('S/Fleet', '/')).toBe(fsidFor('S/Fleet', '/'));
    expect(fsidFor('S/Fleet', '/')).not.toBe(fsidFor('S/Other', '/'));
    expect(fsidFor('S/Fleet', '/')).not.toBe(fsidFor('S/Fleet', '/data'));
    expect(fleet().fleet.fsid).toBe(fleet().fleet.fsid);
  });

  test('user data starts with the shebang and stays under 16 KB (size printed)', () => {
    const { userData, fleet: f } = fleet({ warming: { paths: ['/efs/models', '/efs/datasets'] } });
    for (const [id, text] of Object.entries(userData)) {
      expect(text.startsWith('#!/bin/bash\nset -euo pipefail\n')).toBe(true);
      expect(Buffer.byteLength(text)).toBeLessThan(16 * 1024);
      process.stdout.write(`cache node user data ${id}: ${Buffer.byteLength(text)} bytes (estimate with tokens: ${f.userDataBytes})\n`);
    }
    expect(f.userDataBytes).toBeLessThan(16 * 1024);
  });

  test.each([
    ['c7gn.16xlarge', 'arm64', '128'],
    ['c6in.2xlarge', 'x86_64', '16'],
    ['r7g.large', 'arm64', '8'],
    ['m7i.metal-48xl', 'x86_64', '64'],
  ])('%s: %s image, %s nfsd threads by default', (type, arch, threads) => {
    const { t, params } = fleet({ instanceType: new ec2.InstanceType(type), capacity: Capacity.nodes(1) });
    expect(params[0].EFSC_NFSD_THREADS).toBe(threads);
    const p = t.toJSON().Parameters;
    const ssm = Object.values<any>(p).map((x) => x.Default).filter((d) => String(d).includes('al2023'));
    expect(ssm).toEqual([`/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.12-${arch}`]);
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', { LaunchTemplateData: { InstanceType: type } });
  });

  test('timers, threads, tuning and warming follow the props', () => {
    const { params } = fleet({
      capacity: Capacity.nodes(1),
      attributeCacheTimeout: Duration.seconds(30),
      directoryCacheTimeout: Duration.seconds(5),
      closeToOpenConsistency: true,
      tuning: { nfsdThreads: 256, readAhead: Size.mebibytes(16), sunrpcSlotTableEntries: 64, vfsCachePressure: 50 },
      exportPath: '/cache',
      originPath: '/datasets',
      warming: { paths: ['/cache/a', '/cache/b'], workers: 4, rewarmInterval: Duration.minutes(90) },
      clientCidrs: ['10.1.0.0/16', '10.2.0.0/16'],
      mountTimeout: Duration.seconds(30),
    }, { mountHelper: MountHelper.NFS });
    expect(params[0]).toMatchObject({
      EFSC_NFSD_THREADS: '256',
      EFSC_READ_AHEAD_KB: '16384',
      EFSC_SUNRPC_SLOTS: '64',
      EFSC_VFS_CACHE_PRESSURE: '50',
      EFSC_ORIGIN_MOUNT_TYPE: 'nfs4',
      EFSC_EXPORT_PATH: '/cache',
      EFSC_ORIGIN_PATH: '/datasets',
      EFSC_WARM_PATHS: '/cache/a /cache/b',
      EFSC_WARM_WORKERS: '4',
      EFSC_REWARM_INTERVAL: '90min',
      EFSC_EXPORT_CLIENTS: '10.1.0.0/16 10.2.0.0/16',
      EFSC_MOUNT_TIMEOUT_SEC: '30',
    });
    expect(params[0].EFSC_ORIGIN_MOUNT_OPTIONS).toBe(
      'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,cto,ac,lookupcache=all,acregmin=30,acregmax=30,acdirmin=5,acdirmax=5',
    );
  });

  test('re-warming defaults to every 6 hours when warm paths are given', () => {
    expect(fleet({ warming: { paths: ['/efs/x'] } }).params[0].EFSC_REWARM_INTERVAL).toBe('6h');
  });

  test('nodes: IMDSv2 only, encrypted gp3 root, no SSH key, one instance per group, signals awaited', () => {
    const { t } = fleet();
    t.resourceCountIs('AWS::EC2::LaunchTemplate', 1);
    t.resourceCountIs('AWS::AutoScaling::AutoScalingGroup', 2);
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: {
        MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1, InstanceMetadataTags: 'enabled' },
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { Encrypted: true, VolumeType: 'gp3', VolumeSize: 16, DeleteOnTermination: true } }],
        KeyName: Match.absent(),
      },
    });
    t.hasResource('AWS::AutoScaling::AutoScalingGroup', {
      Properties: { MinSize: '1', MaxSize: '1' },
      CreationPolicy: { ResourceSignal: { Count: 1, Timeout: 'PT20M' } },
    });
  });

  test('nodes spread over the subnets, each group in one subnet', () => {
    const { t, stack } = fleet({ capacity: Capacity.nodes(3) });
    const groups = Object.values(t.findResources('AWS::AutoScaling::AutoScalingGroup'));
    const subnets = groups.map((g) => JSON.stringify(stack.resolve(g.Properties.VPCZoneIdentifier)));
    expect(groups.every((g) => g.Properties.VPCZoneIdentifier.length === 1)).toBe(true);
    expect(subnets[0]).toMatch(/PrivateSubnet1/);
    expect(subnets[1]).toMatch(/PrivateSubnet2/);
    expect(subnets[2]).toMatch(/PrivateSubnet1/);
  });

  test('IAM: SSM, read-only EFS client, own interfaces and own stack signal only, in a customer managed policy', () => {
    const { t } = fleet();
    // No inline policy (NIST 800-53 R5 IAMNoInlinePolicy): the role lists its own managed policy.
    t.resourceCountIs('AWS::IAM::Policy', 0);
    t.hasResourceProperties('AWS::IAM::Role', {
      ManagedPolicyArns: Match.arrayWith([{ Ref: Match.stringLikeRegexp('^FleetRolePolicy') }]),
    });
    t.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientRootAccess'], Effect: 'Allow' }),
          Match.objectLike({ Action: 'cloudformation:SignalResource' }),
          Match.objectLike({ Action: 'ec2:AttachNetworkInterface', Resource: Match.arrayWith([Match.objectLike({ 'Fn::Join': Match.anyValue() })]) }),
          Match.objectLike({ Action: 'ec2:DescribeNetworkInterfaces', Resource: '*' }),
          Match.objectLike({ Action: 'ec2:AttachNetworkInterface', Condition: { StringEquals: { 'aws:ResourceTag/cdk-efs-cache:fleet': Match.stringLikeRegexp('^c8') } } }),
        ]),
      },
    });
    const policies = JSON.stringify(t.findResources('AWS::IAM::ManagedPolicy'));
    expect(policies).not.toMatch(/ClientWrite/);
    expect(policies).not.toMatch(/"Action":"\*"|"ec2:\*"/);
    // The only actions on every resource: the read-only describe call, and publishing metrics in the library's namespace.
    const onEverything = JSON.parse(policies, (_k, v) => v);
    const statements = Object.values<any>(onEverything).flatMap((p) => p.Properties.PolicyDocument.Statement);
    expect(statements.filter((st) => st.Resource === '*').map((st) => [st.Action, st.Condition])).toEqual([
      ['cloudwatch:PutMetricData', { StringEquals: { 'cloudwatch:namespace': 'CdkEfsCache' } }],
      ['ec2:DescribeNetworkInterfaces', undefined],
    ]);
  });

  test('security: the nodes accept nothing inbound until clients are allowed, then only 2049', () => {
    const { t } = fleet();
    t.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('EFS cache nodes'),
      SecurityGroupIngress: Match.absent(),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: '0.0.0.0/0', FromPort: 443, ToPort: 443, IpProtocol: 'tcp' })],
    });
    // The nodes reach the origin on 2049 through its security group; nothing else is opened.
    const ingress = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress')).map((r) => r.Properties);
    expect(ingress).toEqual([expect.objectContaining({ GroupId: 'sg-0123456789abcdef0', IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049 })]);

    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) });
    f.connections.allowDefaultPortFrom(new ec2.SecurityGroup(stack, 'Clients', { vpc }));
    Template.fromStack(stack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049,
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Clients'), 'GroupId'] },
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetSecurityGroup'), 'GroupId'] },
    });
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5: no unacknowledged finding', () => {
    const { app } = fleet();
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});

describe('CacheFleet fan-out', () => {
  test('Route 53 (default): a private zone, one name over all nodes, one per AZ, one per node, stable addresses', () => {
    const { t, fleet: f, stack } = fleet({ capacity: Capacity.nodes(3) });
    t.resourceCountIs('AWS::EC2::NetworkInterface', 3);
    t.hasResourceProperties('AWS::Route53::HostedZone', { Name: 'efs-cache.internal.', VPCs: [Match.anyValue()] });
    const records = Object.values(t.findResources('AWS::Route53::RecordSet')).map((r) => r.Properties);
    const byName = (n: RegExp) => records.filter((r) => n.test(JSON.stringify(stack.resolve(r.Name))));
    const all = byName(/^"cache\.efs-cache\.internal\."$/);
    expect(all).toHaveLength(1);
    expect(all[0].ResourceRecords).toHaveLength(3);
    expect(all[0].TTL).toBe('60');
    const zonal = records.filter((r) => JSON.stringify(r.Name).includes('Fn::Select'));
    expect(zonal).toHaveLength(2);
    expect(zonal.map((z) => z.ResourceRecords.length).sort()).toEqual([1, 2]);
    expect(byName(/node[123]\.cache/)).toHaveLength(3);
    expect(f.endpoint).toBe('cache.efs-cache.internal');
    expect(stack.resolve(f.endpointForAvailabilityZone(f.nodes[0].subnet.availabilityZone)))
      .toEqual({ 'Fn::Join': ['', [{ 'Fn::Select': [0, { 'Fn::GetAZs': '' }] }, '.cache.efs-cache.internal']] });
    for (const r of all[0].ResourceRecords) expect(JSON.stringify(r)).toMatch(/StableAddress.*PrimaryPrivateIpAddress/);
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 0);
  });

  test('fleet.fanOut is the FanOut given, FanOut.route53() when none is', () => {
    const nlb = FanOut.networkLoadBalancer({ crossZone: true });
    expect(fleet({ fanOut: nlb }).fleet.fanOut).toBe(nlb);
    const byDefault = fleet().fleet.fanOut;
    expect(byDefault).toBeInstanceOf(FanOut);
    expect(byDefault._route53).toEqual({});
    expect(byDefault._networkLoadBalancer).toBeUndefined();
  });

  test('Route 53 with an existing zone and names', () => {
    const { stack, vpc } = stackWithVpc();
    const zone = new route53.PrivateHostedZone(stack, 'Z', { zoneName: 'corp.example', vpc });
    const f = new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.route53({ hostedZone: zone, recordName: 'efs' }),
    });
    expect(f.endpoint).toBe('efs.corp.example');
    Template.fromStack(stack).resourceCountIs('AWS::Route53::HostedZone', 1);
  });

  test('several fleets on one VPC: a zone each, or one shared zone with a record name each; no record set twice', () => {
    const { stack, vpc } = stackWithVpc();
    const fileSystem = importedFs(stack);
    const a = new CacheFleet(stack, 'A', { vpc, origin: CacheOrigin.efs(fileSystem) });
    const b = new CacheFleet(stack, 'B', { vpc, origin: CacheOrigin.efs(fileSystem), fanOut: FanOut.route53({ zoneName: 'b.efs-cache.internal' }) });
    const c = new CacheFleet(stack, 'C', {
      vpc, origin: CacheOrigin.efs(fileSystem), fanOut: FanOut.route53({ hostedZone: a.hostedZone, recordName: 'archive' }),
    });
    const nlb = new CacheFleet(stack, 'D', { vpc, origin: CacheOrigin.efs(fileSystem), fanOut: FanOut.networkLoadBalancer() });
    expect([a, b, c, nlb].map((f) => f.endpoint.toString())).toEqual([
      'cache.efs-cache.internal', 'cache.b.efs-cache.internal', 'archive.efs-cache.internal', expect.anything(),
    ]);
    const t = Template.fromStack(stack);
    expect(Object.values(t.findResources('AWS::Route53::HostedZone')).map((z) => z.Properties.Name).sort())
      .toEqual(['b.efs-cache.internal.', 'efs-cache.internal.']);
    // Every record set is unique per zone (name and zone), as Route 53 requires.
    const sets = Object.values(t.findResources('AWS::Route53::RecordSet'))
      .map((r) => JSON.stringify([r.Properties.HostedZoneId, r.Properties.Name]));
    expect(sets.length).toBe(3 * (1 + 2 + 2));
    expect(new Set(sets).size).toBe(sets.length);
  });

  test('NLB: internal, TCP 2049, health checks, source-IP stickiness, cross-zone off, no stable interfaces', () => {
    const { t, fleet: f, params } = fleet({ fanOut: FanOut.networkLoadBalancer() });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Scheme: 'internal', Type: 'network',
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'load_balancing.cross_zone.enabled', Value: 'false' }]),
    });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: 2049, Protocol: 'TCP' });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: 2049, Protocol: 'TCP', TargetType: 'instance',
      HealthCheckProtocol: 'TCP', HealthCheckPort: '2049',
    });
    const attrs = Object.values(t.findResources('AWS::ElasticLoadBalancingV2::TargetGroup'))[0].Properties.TargetGroupAttributes;
    expect(attrs).toEqual(expect.arrayContaining([
      { Key: 'stickiness.enabled', Value: 'true' },
      { Key: 'stickiness.type', Value: 'source_ip' },
      { Key: 'preserve_client_ip.enabled', Value: 'true' },
    ]));
    t.resourceCountIs('AWS::EC2::NetworkInterface', 0);
    t.resourceCountIs('AWS::Route53::HostedZone', 0);
    // No stable interface: the groups tag no interface for the nodes to attach.
    for (const g of Object.values(t.findResources('AWS::AutoScaling::AutoScalingGroup'))) {
      expect(g.Properties.Tags.map((x: any) => x.Key)).not.toContain('cdk-efs-cache:stable-eni');
    }
    expect(params.every((p) => p.EFSC_STABLE_ENI_ID === undefined)).toBe(true);
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', { HealthCheckType: 'ELB', TargetGroupARNs: [Match.anyValue()] });
    // The nodes accept 2049 from the load balancer's security group only.
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      FromPort: 2049, ToPort: 2049,
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('LoadBalancerSecurityGroup'), 'GroupId'] },
    });
    expect(f.loadBalancer).toBeDefined();
  });

  test('NLB: cdk-nag AwsSolutions and NIST 800-53 R5 find nothing unacknowledged', () => {
    const { app } = fleet({ fanOut: FanOut.networkLoadBalancer() });
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });

  test('NLB with accessLogs: the access_logs attributes point at the bucket and prefix; no ELB2 or ELBLoggingEnabled acknowledgement needed', () => {
    const { app, stack, vpc } = stackWithVpc();
    const logs = new s3.Bucket(stack, 'Logs', { enforceSSL: true, serverAccessLogsPrefix: 'self/', versioned: true });
    new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: logs, prefix: 'efs-cache' } }),
    });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      LoadBalancerAttributes: Match.arrayWith([
        { Key: 'access_logs.s3.enabled', Value: 'true' },
        { Key: 'access_logs.s3.bucket', Value: { Ref: Match.stringLikeRegexp('^Logs') } },
        { Key: 'access_logs.s3.prefix', Value: 'efs-cache' },
      ]),
    });
    t.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({
        Principal: { Service: 'delivery.logs.amazonaws.com' }, Action: 's3:PutObject',
        Condition: { StringEquals: { 's3:x-amz-acl': 'bucket-owner-full-control', 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      })]) },
    });
    // The user's bucket is the user's to configure (the compliance packs want KMS, replication...): the library's
    // resources report nothing, and the NLB needs no logging acknowledgement.
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA']).filter((f) => !f.includes('@ TestStack/Logs/'))).toEqual([]);
  });

  describe('NLB with accessLogs to a bucket encrypted with KMS', () => {
    const withLogs = (bucket: (stack: ReturnType<typeof stackWithVpc>['stack']) => s3.IBucket) => {
      const { stack, vpc } = stackWithVpc();
      new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: bucket(stack) } }),
      });
      return { stack, t: Template.fromStack(stack) };
    };
    const deliveryKeyStatement = {
      Effect: 'Allow',
      Principal: { Service: 'delivery.logs.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*'],
      Resource: '*',
      Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
    };

    test('a key of the app: its policy lets the log delivery use it, for this account, and the load balancer comes after it', () => {
      const { t } = withLogs((stack) => new s3.Bucket(stack, 'Logs', { encryptionKey: new kms.Key(stack, 'LogsKey', { enableKeyRotation: true }) }));
      t.hasResourceProperties('AWS::KMS::Key', { KeyPolicy: { Statement: Match.arrayWith([deliveryKeyStatement]) } });
      const [keyId] = Object.keys(t.findResources('AWS::KMS::Key'));
      const [nlb] = Object.values(t.findResources('AWS::ElasticLoadBalancingV2::LoadBalancer'));
      expect(nlb.DependsOn).toEqual(expect.arrayContaining([keyId]));
    });

    test('BucketEncryption.KMS (a key the bucket makes): the same grant', () => {
      const { t } = withLogs((stack) => new s3.Bucket(stack, 'Logs', { encryption: s3.BucketEncryption.KMS }));
      t.hasResourceProperties('AWS::KMS::Key', { KeyPolicy: { Statement: Match.arrayWith([deliveryKeyStatement]) } });
    });

    test('an imported key: nothing to change in its policy, and a warning says what it must allow', () => {
      const { stack, t } = withLogs((s) => s3.Bucket.fromBucketAttributes(s, 'Logs', {
        bucketName: 'logs', encryptionKey: kms.Key.fromKeyArn(s, 'LogsKey', 'arn:aws:kms:us-east-1:111122223333:key/0123abcd-0123-4567-89ab-0123456789ab'),
      }));
      t.resourceCountIs('AWS::KMS::Key', 0);
      Annotations.fromStack(stack).hasWarning('/TestStack/Fleet/FanOut/LoadBalancer', Match.stringLikeRegexp(
        '^fanOut\\.accessLogs\\.bucket: the bucket is encrypted with a KMS key this app cannot change \\(imported\\): its key policy must let ' +
        'the service principal delivery\\.logs\\.amazonaws\\.com use it'));
    });

    test('an imported bucket without a key: taken as SSE-S3, no warning (its encryption is not known at synth)', () => {
      const { stack } = withLogs((s) => s3.Bucket.fromBucketName(s, 'Logs', 'logs'));
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('accessLogs'));
    });

    test('a bucket encrypted with SSE-S3: no key, no warning', () => {
      const { stack, t } = withLogs((s) => new s3.Bucket(s, 'Logs', { encryption: s3.BucketEncryption.S3_MANAGED }));
      t.resourceCountIs('AWS::KMS::Key', 0);
      Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('accessLogs'));
    });

    test('a bucket in the load balancer\'s own region is taken', () => {
      const { stack, vpc } = stackWithVpc(undefined, undefined, { region: 'eu-west-1' });
      expect(() => new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)),
        fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: s3.Bucket.fromBucketAttributes(stack, 'Logs', { bucketName: 'logs', region: 'eu-west-1' }) } }),
      })).not.toThrow();
    });
  });

  test('NLB without mirrors: one listener and one target group, on 2049; nothing on the mirrors\' port', () => {
    const { t, fleet: f } = fleet({ fanOut: FanOut.networkLoadBalancer() });
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::Listener', 1);
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::TargetGroup', 1);
    expect(f.mirrorTargetGroup).toBeUndefined();
    expect(JSON.stringify(t.toJSON())).not.toMatch(/"(FromPort|ToPort|Port)":2050\b|"HealthCheckPort":"2050"/);
  });

  test('NLB with mirrors: a second listener on 2050 with a target group of its own, set as the 2049 one, and the load balancer let into the nodes on 2050', () => {
    const { t, fleet: f, stack } = fleet({ fanOut: FanOut.networkLoadBalancer({ idleTimeout: Duration.seconds(600) }), mirrors: [Mirror.path('/efs/app')] });
    const listeners = Object.values(t.findResources('AWS::ElasticLoadBalancingV2::Listener')).map((r) => r.Properties);
    expect(listeners.map((l) => [l.Port, l.Protocol]).sort()).toEqual([[2049, 'TCP'], [2050, 'TCP']]);
    const groups = Object.entries(t.findResources('AWS::ElasticLoadBalancingV2::TargetGroup'));
    expect(groups).toHaveLength(2);
    const byPort = (port: number) => groups.find(([, g]) => g.Properties.Port === port)!;
    const [nfsId, nfs] = byPort(2049);
    const [mirrorId, mirror] = byPort(2050);
    // Each listener forwards to the group of its own port.
    const forwardsTo = (port: number) => listeners.find((l) => l.Port === port).DefaultActions.map((a: any) => a.TargetGroupArn.Ref);
    expect([forwardsTo(2049), forwardsTo(2050)]).toEqual([[nfsId], [mirrorId]]);
    // The same load balancer, idle timeout, health check (on its own port), stickiness and client IP as the 2049 one.
    expect(new Set(listeners.map((l) => JSON.stringify(l.LoadBalancerArn))).size).toBe(1);
    expect(listeners.map((l) => l.ListenerAttributes)).toEqual([
      [{ Key: 'tcp.idle_timeout.seconds', Value: '600' }], [{ Key: 'tcp.idle_timeout.seconds', Value: '600' }],
    ]);
    expect(mirror.Properties.HealthCheckPort).toBe('2050');
    expect(nfs.Properties.HealthCheckPort).toBe('2049');
    const without = (p: Record<string, any>) => { const { Port: _p, HealthCheckPort: _h, ...rest } = p; return rest; };
    expect(without(mirror.Properties)).toEqual(without(nfs.Properties));
    expect(mirror.Properties.TargetGroupAttributes).toEqual(expect.arrayContaining([
      { Key: 'stickiness.enabled', Value: 'true' },
      { Key: 'stickiness.type', Value: 'source_ip' },
      { Key: 'preserve_client_ip.enabled', Value: 'true' },
    ]));
    expect(f.mirrorTargetGroup).toBeDefined();
    expect(stack.resolve(f.mirrorTargetGroup!.targetGroupArn)).toEqual({ Ref: mirrorId });
    // Every node is a target of both (its group is registered with each).
    for (const g of Object.values(t.findResources('AWS::AutoScaling::AutoScalingGroup'))) {
      expect(g.Properties.TargetGroupARNs.map((a: any) => a.Ref).sort()).toEqual([nfsId, mirrorId].sort());
    }
    // The nodes accept 2050 from the load balancer's group, as 2049, and the load balancer may send there.
    const fromLb = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress')).map((r) => r.Properties)
      .filter((r) => /LoadBalancerSecurityGroup/.test(JSON.stringify(r.SourceSecurityGroupId)));
    expect(fromLb.map((r) => [r.FromPort, r.ToPort, JSON.stringify(r.GroupId)]).sort()).toEqual([
      [2049, 2049, expect.stringMatching(/FleetSecurityGroup/)], [2050, 2050, expect.stringMatching(/FleetSecurityGroup/)],
    ]);
    const lbGroup = Object.values(t.findResources('AWS::EC2::SecurityGroup')).map((r) => r.Properties)
      .find((g) => /load balancer/.test(g.GroupDescription));
    expect(lbGroup.SecurityGroupIngress).toBeUndefined();
    const lbOut = Object.values(t.findResources('AWS::EC2::SecurityGroupEgress')).map((r) => r.Properties)
      .filter((r) => /LoadBalancerSecurityGroup/.test(JSON.stringify(r.GroupId)));
    expect([...(lbGroup.SecurityGroupEgress ?? []), ...lbOut].map((r: any) => r.FromPort).sort()).toEqual([2049, 2050]);
  });

  test('NLB with mirrors: cdk-nag AwsSolutions, NIST 800-53 R5 and HIPAA Security find nothing unacknowledged on the second listener either', () => {
    const { app } = fleet({ fanOut: FanOut.networkLoadBalancer(), mirrors: [Mirror.path('/efs/app')] });
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });
});

describe('CacheFleet working set (bad input: test/cache-fleet/bad-input.test.ts)', () => {
  test('a working set that fits is not a warning', () => {
    const { stack } = fleet({ workingSetSize: Size.gibibytes(100) });
    Annotations.fromStack(stack).hasNoWarning('/TestStack/Fleet', Match.anyValue());
  });
});

describe('CachedFileSystem with a cache fleet', () => {
  test('composes the fleet over the new origin and lets the nodes in on 2049', () => {
    const { stack, vpc } = stackWithVpc();
    const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(2) } });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      FromPort: 2049, ToPort: 2049,
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataOriginSecurityGroup'), 'GroupId'] },
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataCacheFleetSecurityGroup'), 'GroupId'] },
    });
    expect(cfs.cacheFleet?.nodes).toHaveLength(2);
  });
});

describe('the nodes\' second cache level (nodeDiskCache)', () => {
  test('off by default on the default type (no instance store): no fsc, no cache parameters', () => {
    const { params, fleet: f } = fleet();
    expect(f.nodeDiskCache._enabled).toBe(false);
    expect(params[0].EFSC_NODE_DISK_CACHE).toBe('false');
    expect(params[0].EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).not.toContain('fsc');
    expect(params[0].EFSC_CACHE_DIR).toBeUndefined();
  });

  test('on by default on a type with NVMe instance store: fsc on the origin mount, efs-utils\' TLS port pinned', () => {
    const { params, fleet: f } = fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge') });
    expect(f.nodeDiskCache._enabled).toBe(true);
    const p = params[0];
    expect(p).toMatchObject({
      EFSC_NODE_DISK_CACHE: 'true', EFSC_CACHE_DIR: '/var/cache/fscache', EFSC_CACHE_LABEL: 'efs-node-cache',
      EFSC_CACHE_TAG: 'efsnode', EFSC_DEVICE_MODEL: 'Amazon EC2 NVMe Instance Storage', EFSC_INITIALIZE_DEVICES: 'false',
      EFSC_CULL_BRUN: '10', EFSC_CULL_BCULL: '7', EFSC_CULL_BSTOP: '3',
    });
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toEqual(expect.arrayContaining(['fsc', 'tls', 'iam', 'tlsport=20049', 'ro']));
    const given = NodeDiskCache.instanceStore();
    const explicit = fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: given });
    expect(explicit.fleet.nodeDiskCache).toBe(given);
    expect(explicit.params[0]).toEqual(p);
  });

  test('can be turned off on a type with instance store (NodeDiskCache.none()), and given another device model', () => {
    expect(fleet({ instanceType: new ec2.InstanceType('i4i.4xlarge'), nodeDiskCache: NodeDiskCache.none() }).params[0].EFSC_NODE_DISK_CACHE).toBe('false');
    const p = fleet({ instanceType: new ec2.InstanceType('c6gd.4xlarge'), nodeDiskCache: NodeDiskCache.instanceStore({ deviceModel: 'QEMU NVMe Ctrl' }) },
      { mountHelper: MountHelper.NFS }).params[0];
    expect(p.EFSC_DEVICE_MODEL).toBe('QEMU NVMe Ctrl');
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toContain('fsc');
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS).not.toMatch(/tlsport/);
  });

  test('on a type whose instance store is not known, explicitly on, with a warning', () => {
    const { stack, fleet: f } = fleet({ instanceType: new ec2.InstanceType('x99z.large'), nodeDiskCache: NodeDiskCache.instanceStore() });
    expect(f.nodeDiskCache._enabled).toBe(true);
    const w = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('whether x99z\\.large has NVMe instance store is not known'));
    expect(w).toHaveLength(1);
  });
});
