/**
 * A VPC with isolated subnets only (no NAT, no internet gateway): every tier takes the isolated subnets by default
 * (lib/private/subnets.ts defaultSubnets) instead of failing with CDK's "There are no 'Private' subnet groups", and
 * each tier that runs instances warns once about the VPC endpoints they need. The single warnings are rows of
 * the bad-input tests (test/bad-input.test.ts); this is the whole composition.
 */
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CachedFileSystem, Capacity, DataSeeder, FanOut, SeedSource } from '../lib';
import { newApp } from './util';

function isolatedComposition(fanOut: FanOut) {
  const app = newApp();
  const stack = new Stack(app, 'Isolated');
  const vpc = new ec2.Vpc(stack, 'V', {
    maxAzs: 1,
    natGateways: 0,
    subnetConfiguration: [{ name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
  });
  const data = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(2), fanOut } });
  data.addClientLaunchTemplate('Clients');
  new DataSeeder(stack, 'Seeder', { vpc, fileSystem: data.originFileSystem.fileSystem, source: SeedSource.instanceDirectory('/srv/data') });
  return { stack, vpc, t: Template.fromStack(stack) };
}

describe.each(['route53', 'nlb'])('CachedFileSystem, fleet, clients and seeder in one isolated AZ (%s)', (mode) => {
  const nlb = mode === 'nlb';
  const { stack, vpc, t } = isolatedComposition(nlb ? FanOut.networkLoadBalancer() : FanOut.route53());
  const subnetId = stack.resolve(vpc.isolatedSubnets[0].subnetId);

  test('every tier lands in the isolated subnet', () => {
    expect(vpc.isolatedSubnets).toHaveLength(1);
    t.resourceCountIs('AWS::EFS::MountTarget', 1);
    t.hasResourceProperties('AWS::EFS::MountTarget', { SubnetId: subnetId });
    const groups = Object.values(t.findResources('AWS::AutoScaling::AutoScalingGroup'));
    expect(groups).toHaveLength(2);
    for (const g of groups) expect(g.Properties.VPCZoneIdentifier).toEqual([subnetId]);
    t.hasResourceProperties('AWS::EC2::Instance', { SubnetId: subnetId });
    if (nlb) {
      t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Scheme: 'internal', Subnets: [subnetId] });
    } else {
      t.allResourcesProperties('AWS::EC2::NetworkInterface', { SubnetId: subnetId });
    }
  });

  test('each tier with instances warns once about VPC endpoints; the origin and dashboard do not', () => {
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('run in isolated subnets'));
    expect(warnings.map((w) => w.id).sort()).toEqual(['/Isolated/Data/CacheFleet', '/Isolated/Data/Clients', '/Isolated/Seeder']);
    const byId = Object.fromEntries(warnings.map((w) => [w.id, String(w.entry.data)]));
    expect(byId['/Isolated/Data/CacheFleet']).toMatch(/^vpcSubnets: .*package repositories.*S3 \(the instances' code: a gateway endpoint\).*CloudFormation.*CloudWatch.*SSM/);
    expect(byId['/Isolated/Data/CacheFleet']).not.toMatch(/Auto Scaling/);
    expect(byId['/Isolated/Data/CacheFleet'].includes('EC2 (attaching')).toBe(!nlb);
    expect(byId['/Isolated/Data/Clients']).toMatch(/^vpc: .*package repositories.*S3 \(the instances' code: a gateway endpoint\)/);
    expect(byId['/Isolated/Seeder']).toMatch(/^vpcSubnets: .*package repositories.*S3 \(the instances' code: a gateway endpoint\).*CloudFormation/);
  });
});
