import { Annotations, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { cidrIsPrivate, cidrWithin, parseCidr } from '../private/cidr';
import { ENCRYPTION_IN_TRANSIT, encryptsInTransit } from './encryption-in-transit';

/** Where docs/security.md says what protects each hop. */
export const HOPS_DOC = 'docs/security.md#encryption-in-transit-hop-by-hop';

/**
 * Warns when an instance type that speaks NFS to a fleet is known not to encrypt in transit.
 * NFS between a fleet and its clients is plain TCP: the Nitro hardware encrypts it only between types that do.
 */
export function warnIfNotEncryptedInTransit(scope: IConstruct, prop: string, tier: string, instanceType: ec2.InstanceType): void {
  const name = instanceType.toString();
  if (Token.isUnresolved(name) || encryptsInTransit(name) !== false) return;
  Annotations.of(scope).addWarningV2('cdk-efs-cache:notEncryptedInTransit', `${prop}: ${name} is not a type whose traffic ` +
    `the Nitro hardware encrypts (DescribeInstanceTypes, ${ENCRYPTION_IN_TRANSIT.date}), so the ${tier}' NFS ` +
    `travels in clear. Give a type that encrypts in transit (every default does), or protect the network; see ${HOPS_DOC}.`);
}

/**
 * Warns when a fleet's clients reach beyond its VPC: the Nitro hardware encrypts only within a VPC or peered VPCs.
 * With a literal VPC CIDR, any block outside it; otherwise, any block outside private address space.
 */
export function warnIfClientsBeyondVpc(scope: IConstruct, prop: string, cidrs: readonly string[], vpc: ec2.IVpc): void {
  const vpcCidr = Token.isUnresolved(vpc.vpcCidrBlock) ? undefined : parseCidr(undefined, 'vpc', vpc.vpcCidrBlock);
  const beyond = cidrs.filter((c) => !Token.isUnresolved(c)).filter((c) => {
    const block = parseCidr(scope, prop, c);
    return vpcCidr ? !cidrWithin(block, vpcCidr) : !cidrIsPrivate(block);
  });
  if (beyond.length === 0) return;
  Annotations.of(scope).addWarningV2('cdk-efs-cache:clientsBeyondVpc', `${prop}: ${beyond.join(', ')} ` +
    `${vpcCidr ? `lie outside the VPC (${vpc.vpcCidrBlock})` : 'are not private address space'}: NFS from there is ` +
    'encrypted in transit by the Nitro hardware only from a peered VPC, not through a transit gateway, a VPN or Direct ' +
    `Connect (which protect it themselves, or not); see ${HOPS_DOC}.`);
}
