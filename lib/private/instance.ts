import { Stack, Size, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { ManagedPolicyRole } from './managed-policy-role';
import { acknowledgeWildcardResource, nagText } from './nag';

/*
 * What every instance the library launches shares: an encrypted gp3 root volume, a role whose statements live in a
 * customer managed policy (with Session Manager instead of SSH where asked), and, for instances CloudFormation waits
 * for, the permission to signal their own stack. Each with its cdk-nag acknowledgement, explained once here.
 */

/** An encrypted gp3 EBS volume, deleted with its instance: every volume the library's instances get. */
export function encryptedVolume(deviceName: string, size: Size): ec2.BlockDevice {
  return {
    deviceName,
    volume: ec2.BlockDeviceVolume.ebs(size.toGibibytes(), {
      encrypted: true,
      volumeType: ec2.EbsDeviceVolumeType.GP3,
      deleteOnTermination: true,
    }),
  };
}

/** The root volume of the library's instances (Amazon Linux 2023, Debian and Ubuntu images boot from /dev/xvda). */
export function encryptedRootVolume(size: Size): ec2.BlockDevice {
  return encryptedVolume('/dev/xvda', size);
}

/** An instance role (customer managed policy for its statements), with Session Manager unless `ssm` is false. */
export function instanceRole(scope: Construct, description: string, ssm = true): iam.Role {
  const role = new ManagedPolicyRole(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
    description,
    managedPolicies: ssm ? [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')] : [],
  });
  if (ssm) acknowledgeSsm(role);
  return role;
}

/** Acknowledges the AWS managed Session Manager policy on a role that has it. */
export function acknowledgeSsm(role: iam.IRole): void {
  const ssmPolicy = iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore');
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM4[Policy::${nagText(role, ssmPolicy.managedPolicyArn)}]`,
    reason: 'Session Manager replaces SSH on the instances; this AWS managed policy is the documented minimum for it.',
  });
}

/** Lets the role signal resources of its own stack (cloudformation:SignalResource on this stack only). */
export function grantSignal(role: iam.Role, stack: Stack): void {
  const stackArn = stack.formatArn({ service: 'cloudformation', resource: 'stack', resourceName: `${stack.stackName}/*` });
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['cloudformation:SignalResource'], resources: [stackArn] }));
  acknowledgeWildcardResource(role, stackArn,
    'The stack id suffix is not known at synth time; the statement names this stack and SignalResource only.');
}
