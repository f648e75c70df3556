import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as kms from 'aws-cdk-lib/aws-kms';
import { OriginFileSystem, OriginFileSystemProps } from '../../lib';
import { checkMountTargetsCover } from '../../lib/origin/origin-file-system';
import { nagFindings, stackWithVpc } from '../util';

function origin(props: Partial<OriginFileSystemProps> = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const o = new OriginFileSystem(stack, 'Origin', { vpc, ...props });
  return { app, stack, vpc, origin: o, template: () => Template.fromStack(stack) };
}

describe('OriginFileSystem (new)', () => {
  test('is encrypted, General Purpose, Elastic, backed up and retained', () => {
    const { template } = origin();
    template().hasResource('AWS::EFS::FileSystem', {
      Properties: {
        Encrypted: true,
        PerformanceMode: 'generalPurpose',
        ThroughputMode: 'elastic',
        BackupPolicy: { Status: 'ENABLED' },
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  test('its policy denies every action made without TLS', () => {
    const { template } = origin();
    template().hasResourceProperties('AWS::EFS::FileSystem', {
      FileSystemPolicy: {
        Statement: Match.arrayWith([
          {
            Sid: 'DenyNonTlsAccess',
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Action: '*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          },
        ]),
      },
    });
  });

  test('has one mount target per AZ of the selected subnets, all in its own security group', () => {
    const { template, stack } = origin();
    const t = template();
    t.resourceCountIs('AWS::EFS::MountTarget', 2);
    const sgs = t.findResources('AWS::EC2::SecurityGroup', {
      Properties: { GroupDescription: Match.stringLikeRegexp('EFS mount targets') },
    });
    const [sgId] = Object.keys(sgs);
    const mts = t.findResources('AWS::EFS::MountTarget');
    for (const mt of Object.values(mts)) {
      expect(stack.resolve(mt.Properties.SecurityGroups)).toEqual([{ 'Fn::GetAtt': [sgId, 'GroupId'] }]);
    }
    const subnets = Object.values(mts).map((mt) => JSON.stringify(mt.Properties.SubnetId)).sort();
    expect(new Set(subnets).size).toBe(2);
    expect(subnets.join()).toMatch(/PrivateSubnet1/);
    expect(subnets.join()).toMatch(/PrivateSubnet2/);
  });

  test('its security group has no inbound rule and no open outbound rule until a peer is allowed', () => {
    const { template } = origin();
    const t = template();
    t.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
    t.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('EFS mount targets'),
      SecurityGroupIngress: Match.absent(),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: '255.255.255.255/32' })],
    });
  });

  test('a peer allowed through connections gets TCP 2049 and nothing else', () => {
    const { stack, vpc, origin: o, template } = origin();
    const peer = new ec2.SecurityGroup(stack, 'Peer', { vpc });
    o.connections.allowDefaultPortFrom(peer);
    const t = template();
    const ingress = t.findResources('AWS::EC2::SecurityGroupIngress');
    expect(Object.values(ingress)).toHaveLength(1);
    const rule = Object.values(ingress)[0].Properties;
    expect(rule).toMatchObject({ IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049 });
    expect(rule.CidrIp).toBeUndefined();
    expect(rule.SourceSecurityGroupId).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Peer/), 'GroupId'] });
  });

  test('uses a customer key when given', () => {
    const { stack, vpc } = stackWithVpc();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    new OriginFileSystem(stack, 'Origin', { vpc, kmsKey: key });
    Template.fromStack(stack).hasResourceProperties('AWS::EFS::FileSystem', {
      KmsKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('Key'), 'Arn'] },
    });
  });

  test('DESTROY with confirmDataLoss deletes with the stack', () => {
    const { template } = origin({ removalPolicy: RemovalPolicy.DESTROY, confirmDataLoss: true });
    template().hasResource('AWS::EFS::FileSystem', { DeletionPolicy: 'Delete' });
  });

  test('dnsName is fs-id.efs.REGION.URL_SUFFIX', () => {
    const { stack, origin: o } = origin();
    expect(stack.resolve(o.dnsName)).toEqual({
      'Fn::Join': ['', [{ Ref: expect.stringMatching(/^Origin/) }, '.efs.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]],
    });
  });

  test('metric helpers name the EFS namespace, metric and file system', () => {
    const { stack, origin: o } = origin();
    const cases: Array<[string, ReturnType<OriginFileSystem['metric']>, string]> = [
      ['TotalIOBytes', o.metricTotalIoBytes(), 'Sum'],
      ['DataReadIOBytes', o.metricDataReadIoBytes(), 'Sum'],
      ['MeteredIOBytes', o.metricMeteredIoBytes(), 'Sum'],
      ['PercentIOLimit', o.metricPercentIoLimit(), 'Maximum'],
      ['BurstCreditBalance', o.metricBurstCreditBalance(), 'Minimum'],
      ['PermittedThroughput', o.metricPermittedThroughput(), 'Average'],
      ['ClientConnections', o.metricClientConnections(), 'Sum'],
      ['StorageBytes', o.metricStorageBytes(), 'Average'],
    ];
    for (const [name, m, stat] of cases) {
      expect(m.namespace).toBe('AWS/EFS');
      expect(m.metricName).toBe(name);
      expect(m.statistic).toBe(stat);
      expect(stack.resolve(m.dimensions?.FileSystemId)).toEqual({ Ref: expect.stringMatching(/^Origin/) });
    }
    expect(o.metricStorageBytes().dimensions?.StorageClass).toBe('Total');
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 find nothing', () => {
    const { app } = origin();
    const findings = nagFindings(app, ['AwsSolutions', 'NIST']).filter((f) => f.includes('/Origin/'));
    expect(findings).toEqual([]);
  });
});

describe('OriginFileSystem (imported)', () => {
  test('uses the file system as it is and opens 2049 through its security group', () => {
    const { stack, vpc } = stackWithVpc();
    const sg = ec2.SecurityGroup.fromSecurityGroupId(stack, 'ImportedSg', 'sg-0123456789abcdef0', { mutable: true });
    const fileSystem = efs.FileSystem.fromFileSystemAttributes(stack, 'Fs', {
      fileSystemId: 'fs-0123456789abcdef0',
      securityGroup: sg,
    });
    const o = new OriginFileSystem(stack, 'Origin', { vpc, fileSystem });
    const peer = new ec2.SecurityGroup(stack, 'Peer', { vpc });
    o.connections.allowDefaultPortFrom(peer);
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EFS::FileSystem', 0);
    t.resourceCountIs('AWS::EFS::MountTarget', 0);
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: 'sg-0123456789abcdef0', IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049,
    });
    expect(o.isImported).toBe(true);
    expect(o.mountTargetAvailabilityZones).toBeUndefined();
    expect(stack.resolve(o.dnsName)).toEqual({
      'Fn::Join': ['', ['fs-0123456789abcdef0.efs.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]],
    });
  });
});

describe('OriginFileSystem mount target coverage (the other bad input: test/origin/bad-input.test.ts)', () => {
  test('an instance subnet in an AZ without a mount target', () => {
    const { stack, vpc } = stackWithVpc();
    const o = new OriginFileSystem(stack, 'Origin', { vpc, vpcSubnets: { subnets: [vpc.privateSubnets[0]] } });
    expect(() => checkMountTargetsCover(o, [vpc.privateSubnets[0]], 'clientSubnets')).not.toThrow();
    expect(() => checkMountTargetsCover(o, vpc.privateSubnets, 'clientSubnets')).toThrow(
      /Invalid clientSubnets: subnet .* where the file system has no mount target/,
    );
  });

  test('AZs given as literals are compared as literals', () => {
    const { app } = stackWithVpc();
    const stack = new Stack(app, 'Pinned', { env: { account: '111111111111', region: 'eu-west-1' } });
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-1', availabilityZones: ['eu-west-1a', 'eu-west-1b'],
      privateSubnetIds: ['subnet-a', 'subnet-b'],
    });
    const o = new OriginFileSystem(stack, 'Origin', { vpc, vpcSubnets: { subnets: [vpc.privateSubnets[0]] } });
    expect(o.mountTargetAvailabilityZones).toEqual(['eu-west-1a']);
    expect(() => checkMountTargetsCover(o, [vpc.privateSubnets[1]], 'vpcSubnets')).toThrow(/eu-west-1b, where the file system has no mount target/);
  });
});
