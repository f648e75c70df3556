import { Annotations, Lazy, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { propError } from '../private/errors';
import { ENA_EXPRESS_TYPES, supportsEnaExpress } from './ena-express-types';

/** Where docs/sizing-and-cost.md says what ENA Express does, and where it does not help. */
export const ENA_EXPRESS_DOC = 'docs/sizing-and-cost.md#ena-express';

/**
 * With `enaExpress`, refuses an instance type that the data says cannot have ENA Express (EC2 would refuse the
 * launch), and warns for one it does not know (a new type, or a token): EC2 then decides at launch.
 */
export function checkEnaExpressType(scope: IConstruct, prop: string, instanceType: ec2.InstanceType): void {
  const name = instanceType.toString();
  const supported = Token.isUnresolved(name) ? undefined : supportsEnaExpress(name);
  if (supported === false) {
    throw propError(scope, prop, `${name} does not support ENA Express (DescribeInstanceTypes, ${ENA_EXPRESS_TYPES.date}), so EC2 ` +
      `would refuse to launch it with ENA Express on. Give an instanceType that supports it (c7gn.16xlarge does), or leave ${prop} off; ` +
      `see ${ENA_EXPRESS_DOC}.`);
  }
  if (supported === undefined) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:enaExpressTypeUnknown', `${prop}: whether ` +
      `${Token.isUnresolved(name) ? 'the instance type (a token)' : name} supports ENA Express is not known here ` +
      `(DescribeInstanceTypes, ${ENA_EXPRESS_TYPES.date}): EC2 refuses the launch if it does not. See ${ENA_EXPRESS_DOC}.`);
  }
}

/**
 * Turns ENA Express on for TCP on the primary interface of the instances of `template` (UDP stays off: NFS runs
 * over TCP). A launch template's interface entry then carries the security groups, since CloudFormation refuses
 * `SecurityGroupIds` beside `NetworkInterfaces`; groups added to the template's `connections` later are included.
 */
export function enableEnaExpress(template: ec2.LaunchTemplate): void {
  const cfn = template.node.defaultChild as ec2.CfnLaunchTemplate;
  const data = cfn.launchTemplateData as ec2.CfnLaunchTemplate.LaunchTemplateDataProperty;
  if (data.networkInterfaces !== undefined) throw new Error(`${template.node.path} already has network interfaces`);
  cfn.launchTemplateData = {
    ...data,
    securityGroupIds: undefined,
    networkInterfaces: [{
      deviceIndex: 0,
      groups: Lazy.list({ produce: () => template.connections.securityGroups.map((g) => g.securityGroupId) }, { omitEmpty: true }),
      enaSrdSpecification: { enaSrdEnabled: true },
    }],
  };
}
