import { Token, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { propError } from '../private/errors';

/** Where a cluster's FS-Cache hosts run, and how many (`EcsFleetCapacity`, `EksFleetNodes`). */
export interface ClusterHostsOptions {
  /**
   * Where the hosts run.
   *
   * @default - the cluster VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * The fewest hosts.
   *
   * @default 1
   */
  readonly minCapacity?: number;

  /**
   * The most hosts: the cluster's scaling (ECS managed scaling, the Cluster Autoscaler or Karpenter) adds them up to it.
   *
   * @default - minCapacity
   */
  readonly maxCapacity?: number;
}

/** The defaults of `ClusterHostsOptions` (test/defaults.test.ts). */
export const CLUSTER_HOSTS_DEFAULTS = {
  minCapacity: 1,
} as const;

/** What becomes of a statement added to the hosts' role through their group: the statements the role gets instead. */
export type RoleStatements = (statement: iam.PolicyStatement) => iam.PolicyStatement[];

/** An Auto Scaling group whose `addToRolePolicy` (where aws-cdk-lib's cluster adds its statements) goes through `narrow`. */
class HostGroup extends autoscaling.AutoScalingGroup {
  private narrow?: RoleStatements;

  constructor(scope: Construct, id: string, props: autoscaling.AutoScalingGroupProps, narrow: RoleStatements) {
    super(scope, id, props);
    this.narrow = narrow;
  }

  public addToRolePolicy(statement: iam.PolicyStatement): void {
    for (const s of this.narrow ? this.narrow(statement) : [statement]) super.addToRolePolicy(s);
  }
}

/**
 * The hosts' Auto Scaling group (`Group` of `scope`) from their launch template, in `vpc`; `scaling` says what scales it
 * (cdk-nag's AwsSolutions-AS3 acknowledged with it); `narrow`, when given, rewrites what is added to the hosts' role
 * through the group. Throws `Invalid minCapacity` and `Invalid maxCapacity`.
 */
export function clusterHostGroup(scope: Construct, vpc: ec2.IVpc, hosts: FsCacheClientLaunchTemplate, options: ClusterHostsOptions,
  scaling: string, narrow?: RoleStatements): autoscaling.AutoScalingGroup {
  const minCapacity = options.minCapacity ?? CLUSTER_HOSTS_DEFAULTS.minCapacity;
  const maxCapacity = options.maxCapacity ?? minCapacity;
  // A token (a parameter, an import) goes to the group's MinSize and MaxSize as it is, which Auto Scaling checks.
  const known = (n: number) => !Token.isUnresolved(n);
  if (known(minCapacity) && (!Number.isInteger(minCapacity) || minCapacity < 0)) {
    throw propError(scope, 'minCapacity', `must be a whole number of 0 or more, got ${minCapacity}.`);
  }
  if (known(maxCapacity) && (!Number.isInteger(maxCapacity) || maxCapacity < Math.max(1, known(minCapacity) ? minCapacity : 1))) {
    const atLeast = known(minCapacity) ? ` and at least minCapacity (${minCapacity})` : '';
    throw propError(scope, 'maxCapacity', `must be a whole number of at least 1${atLeast}, got ${maxCapacity}.`);
  }
  const props = { vpc, vpcSubnets: options.vpcSubnets, launchTemplate: hosts.launchTemplate, minCapacity, maxCapacity };
  const group = narrow ? new HostGroup(scope, 'Group', props, narrow) : new autoscaling.AutoScalingGroup(scope, 'Group', props);
  Validations.of(group).acknowledge({ id: 'AwsSolutions-AS3', reason: scaling });
  return group;
}
