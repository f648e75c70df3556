import * as ec2 from 'aws-cdk-lib/aws-ec2';

/** The tiers' default subnets: the VPC's private subnets with egress, or its isolated ones if it has none. */
export function defaultSubnets(vpc: ec2.IVpc): ec2.SubnetSelection {
  return vpc.privateSubnets.length > 0
    ? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }
    : { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
}
