import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { acknowledgeWildcardResource, nagText } from '../private/nag';
import { ManagedPolicyRole } from './managed-policy-role';

/*
 * The role every instance the library launches gets: its statements live in a customer managed policy (with Session
 * Manager instead of SSH where asked), and, for instances CloudFormation waits for, the permission to signal their own
 * stack. Each with its cdk-nag acknowledgement, explained once here.
 */

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
