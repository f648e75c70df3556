import { Annotations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';

/** The tiers' default subnets: the VPC's private subnets with egress, or its isolated ones if it has none. */
export function defaultSubnets(vpc: ec2.IVpc): ec2.SubnetSelection {
  return vpc.privateSubnets.length > 0
    ? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }
    : { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
}

/** What an instance's bootstrap reaches outside the VPC, for the isolated-subnet warning. */
export const ENDPOINT_NEEDS = {
  packages: 'the package repositories (an S3 gateway endpoint serves Amazon Linux 2023\'s core repositories, ' +
    'check that SPAL is reachable too, Debian and Ubuntu need a mirror or proxy)',
  cloudFormation: 'CloudFormation (the signal that ends the deployment\'s wait)',
  ec2: 'EC2 (attaching the stable network interface)',
  cloudWatch: 'CloudWatch (metrics)',
  autoScaling: 'Auto Scaling (an elastic node completes its lifecycle hooks: without it every node is abandoned)',
  ssm: 'SSM, ssmmessages and ec2messages (Session Manager)',
} as const;

/**
 * The S3 need of the isolated-subnet warning: every instance fetches its code (an S3 object) at its first boot, and
 * `more` names what else it reads there (the seed source, S3 mirrors).
 */
export function s3Need(...more: string[]): string {
  return `S3 (the instances' code${more.map((m) => `, ${m}`).join('')}: a gateway endpoint)`;
}

/** Whether any of `subnets` is one of the VPC's isolated subnets (no route out of the VPC). */
function anyIsolated(vpc: ec2.IVpc, subnets: ec2.ISubnet[]): boolean {
  const isolated = new Set(vpc.isolatedSubnets.map((s) => s.subnetId));
  return subnets.some((s) => isolated.has(s.subnetId));
}

/**
 * Warns once on `scope` (starting with `prop:`) when its instances run in isolated subnets: they reach AWS services and
 * package repositories only through VPC endpoints, which this library does not create (they are the VPC's, shared by
 * everything in it). `subnets` undefined: the instances' subnets are chosen elsewhere (a launch template), and the
 * warning comes when the VPC has nothing but isolated subnets.
 */
export function warnIfIsolated(scope: Construct, prop: string, vpc: ec2.IVpc, subnets: ec2.ISubnet[] | undefined, needs: string[]): void {
  const isolated = subnets
    ? anyIsolated(vpc, subnets)
    : vpc.isolatedSubnets.length > 0 && vpc.privateSubnets.length === 0 && vpc.publicSubnets.length === 0;
  if (!isolated) return;
  Annotations.of(scope).addWarningV2('cdk-efs-cache:isolatedSubnets',
    `${prop}: the instances of ${scope.node.path} run in isolated subnets (no route out of the VPC), so their ` +
    `bootstrap fails unless the VPC has endpoints for ${needs.join('; ')}.`);
}
