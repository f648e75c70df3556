import { Stack, Tags, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { PUT_METRIC_DATA_REASON } from '../instance/metrics-grant';
import { grantSignal, instanceRole } from '../instance/role';
import { CacheOrigin } from '../origin/cache-origin';
import { acknowledgeWildcardResource } from '../private/nag';
import { CacheNode } from './cache-node';

/**
 * The tag that scopes the nodes' permission to attach network interfaces: each node's group copies it, with the
 * fleet's construct address as its value, onto the instances it launches.
 */
export const FLEET_TAG = 'cdk-efs-cache:fleet';

/**
 * The nodes' role, made before the parameters that grant it more (the metrics): SSM Session Manager and, for an EFS
 * origin, read-only EFS client access to it (ClientMount, and ClientRootAccess so that the nodes' root reads every
 * file). An NFS server origin asks IAM nothing.
 */
export function nodeRole(fleet: Construct, origin: CacheOrigin): iam.Role {
  const fileSystem = origin.fileSystem;
  if (!fileSystem) return instanceRole(fleet, 'NFS cache nodes: SSM Session Manager, own interface and stack signal');
  const role = instanceRole(fleet, 'EFS cache nodes: SSM Session Manager, read-only EFS client, own interface and stack signal');
  fileSystem.grant(role, 'elasticfilesystem:ClientMount', 'elasticfilesystem:ClientRootAccess');
  return role;
}

/**
 * What the role needs once the nodes exist: signalling the fleet's stack, attaching the nodes' stable interfaces
 * (Route 53 mode) to instances tagged with this fleet, and the cdk-nag acknowledgements of the statements on `*`
 * (`metrics`: the PutMetricData statement of `grantPutMetricData`). Then the tag itself on every node's group.
 */
export function grantNodeRole(fleet: Construct, role: iam.Role, nodes: CacheNode[], metrics: boolean): void {
  const stack = Stack.of(fleet);
  const interfaces = nodes.flatMap((n) => (n.networkInterface ? [n.networkInterface] : []));
  grantSignal(role, stack);
  if (interfaces.length > 0) {
    role.addToPrincipalPolicy(new iam.PolicyStatement({
      actions: ['ec2:AttachNetworkInterface'],
      resources: interfaces.map((eni) => stack.formatArn({ service: 'ec2', resource: 'network-interface', resourceName: eni.ref })),
    }));
    // The attach step waits for the interface to show as attached; Describe* calls support no resource scoping.
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ec2:DescribeNetworkInterfaces'], resources: ['*'] }));
    const instanceArn = stack.formatArn({ service: 'ec2', resource: 'instance', resourceName: '*' });
    role.addToPrincipalPolicy(new iam.PolicyStatement({
      actions: ['ec2:AttachNetworkInterface'],
      resources: [instanceArn],
      conditions: { StringEquals: { [`aws:ResourceTag/${FLEET_TAG}`]: fleet.node.addr } },
    }));
    acknowledgeWildcardResource(role, instanceArn,
      'Instance ids exist only after launch; the statement is limited to instances tagged with this fleet.');
  }
  const onStar = [
    ...(interfaces.length > 0 ? ['ec2:DescribeNetworkInterfaces (read-only) does not support resource-level permissions.'] : []),
    ...(metrics ? [PUT_METRIC_DATA_REASON] : []),
  ];
  if (onStar.length > 0) {
    Validations.of(role).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: `${onStar.join(' ')} Nothing else is on *.` });
  }
  // The tag that scopes the attach permission; groups copy it onto the instances they launch.
  for (const n of nodes) Tags.of(n.autoScalingGroup).add(FLEET_TAG, fleet.node.addr);
}
