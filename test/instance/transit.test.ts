/**
 * The synth warnings of encryption in transit (lib/instance/transit.ts): an instance type the Nitro hardware does not
 * encrypt between, on the nodes and on a fleet's clients; a fleet behind the NLB; client CIDRs beyond the VPC.
 */
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheFleetProps, CacheOrigin, FanOut, FsCacheClientLaunchTemplate, MountSource } from '../../lib';
import { importedFs, newApp } from '../util';

function fleetStack(props: Partial<CacheFleetProps> = {}, vpcCidr?: string): { stack: Stack; fleet: CacheFleet; vpc: ec2.IVpc } {
  const stack = new Stack(newApp(), 'Stack', { env: { account: '123456789012', region: 'us-east-1' } });
  const vpc = vpcCidr
    ? ec2.Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: 'vpc-1', vpcCidrBlock: vpcCidr, availabilityZones: ['us-east-1a'], privateSubnetIds: ['subnet-1'] })
    : new ec2.Vpc(stack, 'Vpc');
  const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), ...props });
  return { stack, fleet, vpc };
}
const warned = (stack: Stack, id: string) => Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp(`\\[ack: ${id}\\]`));

describe('encryption in transit, at synth', () => {
  test('the defaults draw no warning: c7gn nodes, Route 53 names, the VPC\'s own CIDR', () => {
    const { stack } = fleetStack();
    for (const id of ['notEncryptedInTransit', 'nlbNotEncryptedInTransit', 'clientsBeyondVpc']) {
      expect(warned(stack, `cdk-efs-cache:${id}`)).toHaveLength(0);
    }
  });

  test('nodes of a type that does not encrypt in transit: a warning naming instanceType, the type and the tier', () => {
    const { stack } = fleetStack({ instanceType: new ec2.InstanceType('c6g.16xlarge') });
    const w = warned(stack, 'cdk-efs-cache:notEncryptedInTransit');
    expect(w).toHaveLength(1);
    expect(JSON.stringify(w[0].entry.data)).toMatch(/instanceType: c6g\.16xlarge .*cache nodes/);
  });

  test('a client of the fleet of such a type is warned; the same type mounting EFS directly (TLS) is not', () => {
    const { stack, fleet, vpc } = fleetStack();
    new FsCacheClientLaunchTemplate(stack, 'Client', {
      vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m5d.xlarge'),
    });
    const w = warned(stack, 'cdk-efs-cache:notEncryptedInTransit');
    expect(w).toHaveLength(1);
    expect(JSON.stringify(w[0].entry.data)).toMatch(/instanceType: m5d\.xlarge .*clients/);
    const direct = fleetStack();
    new FsCacheClientLaunchTemplate(direct.stack, 'Client', {
      vpc: direct.vpc, source: MountSource.fileSystem(direct.fleet.origin.fileSystem!), instanceType: new ec2.InstanceType('m5d.xlarge'),
    });
    expect(warned(direct.stack, 'cdk-efs-cache:notEncryptedInTransit')).toHaveLength(0);
  });

  test('a fleet behind the NLB is warned that the clients\' NFS travels in clear', () => {
    const { stack } = fleetStack({ fanOut: FanOut.networkLoadBalancer() });
    expect(warned(stack, 'cdk-efs-cache:nlbNotEncryptedInTransit')).toHaveLength(1);
  });

  test('client CIDRs outside a literal VPC CIDR are warned, inside it are not', () => {
    expect(warned(fleetStack({ clientCidrs: ['10.0.1.0/24'] }, '10.0.0.0/16').stack, 'cdk-efs-cache:clientsBeyondVpc')).toHaveLength(0);
    const { stack } = fleetStack({ clientCidrs: ['10.0.1.0/24', '10.9.0.0/16'] }, '10.0.0.0/16');
    const w = warned(stack, 'cdk-efs-cache:clientsBeyondVpc');
    expect(w).toHaveLength(1);
    expect(JSON.stringify(w[0].entry.data)).toMatch(/clientCidrs: 10\.9\.0\.0\/16 lie outside the VPC/);
  });

  test('with the VPC\'s CIDR a token, client CIDRs outside private address space are warned', () => {
    expect(warned(fleetStack({ clientCidrs: ['172.20.0.0/16', 'fd00::/8'] }).stack, 'cdk-efs-cache:clientsBeyondVpc')).toHaveLength(0);
    const { stack } = fleetStack({ clientCidrs: ['172.20.0.0/16', '203.0.113.0/24'] });
    const w = warned(stack, 'cdk-efs-cache:clientsBeyondVpc');
    expect(JSON.stringify(w[0].entry.data)).toMatch(/203\.0\.113\.0\/24 are not private address space/);
  });
});
