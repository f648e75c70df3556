import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import { CachedFileSystem } from '../lib';
import { stackWithVpc } from './util';

describe('CachedFileSystem', () => {
  test('creates the origin with secure defaults in one line', () => {
    const { stack, vpc } = stackWithVpc();
    const cfs = new CachedFileSystem(stack, 'Data', { vpc });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EFS::FileSystem', 1);
    t.hasResource('AWS::EFS::FileSystem', { Properties: { Encrypted: true }, DeletionPolicy: 'Retain' });
    expect(cfs.originFileSystem.isImported).toBe(false);
    expect(cfs.originFileSystem.node.path).toBe('TestStack/Data/Origin');
  });

  test('imports an existing file system', () => {
    const { stack, vpc } = stackWithVpc();
    const fileSystem = efs.FileSystem.fromFileSystemAttributes(stack, 'Fs', {
      fileSystemId: 'fs-0123456789abcdef0',
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef0'),
    });
    const cfs = new CachedFileSystem(stack, 'Data', { vpc, originFileSystem: { fileSystem } });
    Template.fromStack(stack).resourceCountIs('AWS::EFS::FileSystem', 0);
    expect(cfs.originFileSystem.fileSystemId).toBe('fs-0123456789abcdef0');
  });

  test('puts mount targets in the given subnets', () => {
    const { stack, vpc } = stackWithVpc();
    new CachedFileSystem(stack, 'Data', { vpc, vpcSubnets: { subnets: [vpc.privateSubnets[0]] } });
    Template.fromStack(stack).resourceCountIs('AWS::EFS::MountTarget', 1);
  });
});
