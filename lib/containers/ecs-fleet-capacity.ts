import { Annotations, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { Construct } from 'constructs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { propError } from '../private/errors';

/** Properties of `EcsFleetCapacity`. */
export interface EcsFleetCapacityProps {
  /** The ECS cluster the instances join, as an Auto Scaling group capacity provider of its own. */
  readonly cluster: ecs.Cluster;

  /**
   * The container instances' launch template: FS-Cache clients on an ECS-optimized image.
   * Give it `machineImage: ecs.EcsOptimizedImage.amazonLinux2023()`; its cachefilesd keeps the disk cache of `fsCache` volumes.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
   */
  readonly hosts: FsCacheClientLaunchTemplate;

  /**
   * Where the instances run.
   *
   * @default - the cluster VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * The fewest container instances.
   *
   * @default 1
   */
  readonly minCapacity?: number;

  /**
   * The most container instances: ECS's managed scaling adds them, up to this number, as tasks need them.
   *
   * @default - minCapacity
   */
  readonly maxCapacity?: number;
}

/** The defaults of `EcsFleetCapacityProps` (test/defaults.test.ts). */
export const ECS_FLEET_CAPACITY_DEFAULTS = {
  minCapacity: 1,
} as const;

/**
 * ECS cluster capacity built from an `FsCacheClientLaunchTemplate`: an Auto Scaling group registered as a capacity provider.
 * Its instances run cachefilesd and join the cluster once their FS-Cache bootstrap succeeded.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
 */
export class EcsFleetCapacity extends Construct {
  /** The container instances' Auto Scaling group. */
  public readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  /** The cluster's capacity provider of the group: name it in services' `capacityProviderStrategies`. */
  public readonly capacityProvider: ecs.AsgCapacityProvider;

  constructor(scope: Construct, id: string, props: EcsFleetCapacityProps) {
    super(scope, id);
    if (!(props.cluster instanceof ecs.Cluster)) throw propError(this, 'cluster', 'must be an ecs.Cluster of this app (one it can add capacity to).');
    if (!(props.hosts instanceof FsCacheClientLaunchTemplate)) throw propError(this, 'hosts', 'must be an FsCacheClientLaunchTemplate.');
    const image = props.hosts._machineImage;
    if (image === undefined) {
      throw propError(this, 'hosts', `${props.hosts.node.path} runs Amazon Linux 2023 without the ECS agent (machineImage unset): its instances would ` +
        'never join the cluster. Give it machineImage: ecs.EcsOptimizedImage.amazonLinux2023() (with ecs.AmiHardwareType.ARM for Graviton).');
    }
    if (!(image instanceof ecs.EcsOptimizedImage)) {
      Annotations.of(this).addWarningV2('cdk-efs-cache:ecsAgent', `${props.hosts.node.path}'s image is not an ecs.EcsOptimizedImage: its instances ` +
        'join the cluster only if the image runs the ECS agent.');
    }
    const minCapacity = props.minCapacity ?? ECS_FLEET_CAPACITY_DEFAULTS.minCapacity;
    const maxCapacity = props.maxCapacity ?? minCapacity;
    if (!Number.isInteger(minCapacity) || minCapacity < 0) throw propError(this, 'minCapacity', `must be a whole number of 0 or more, got ${minCapacity}.`);
    if (!Number.isInteger(maxCapacity) || maxCapacity < Math.max(1, minCapacity)) {
      throw propError(this, 'maxCapacity', `must be a whole number of at least 1 and at least minCapacity (${minCapacity}), got ${maxCapacity}.`);
    }

    this.autoScalingGroup = new autoscaling.AutoScalingGroup(this, 'Group', {
      vpc: props.cluster.vpc,
      vpcSubnets: props.vpcSubnets,
      launchTemplate: props.hosts.launchTemplate,
      minCapacity,
      maxCapacity,
    });
    Validations.of(this.autoScalingGroup).acknowledge({
      id: 'AwsSolutions-AS3',
      reason: 'ECS managed scaling drives the group; its scaling activity is in the cluster\'s capacity provider events, not a topic.',
    });
    // The cluster adds its `ECS_CLUSTER` line to the launch template's user data (run after the bootstrap succeeded;
    // its name as data, not spliced into the command) and the container instance statements to the hosts' role.
    props.hosts._joinEcsCluster(props.cluster);
    this.capacityProvider = new ecs.AsgCapacityProvider(this, 'Provider', { autoScalingGroup: this.autoScalingGroup });
    props.cluster.addAsgCapacityProvider(this.capacityProvider);
    Validations.of(props.hosts.role).acknowledge({
      id: 'AwsSolutions-IAM5[Action::ecs:Submit*]',
      reason: 'aws-cdk-lib\'s container instance statement: the ECS agent\'s Submit* state changes, on this cluster only.',
    });
  }
}
