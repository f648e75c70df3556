import { Annotations, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { Construct } from 'constructs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { propError } from '../private/errors';
import { ClusterHostsOptions, clusterHostGroup } from './cluster-hosts';

/** Properties of `EcsFleetCapacity`. */
export interface EcsFleetCapacityProps extends ClusterHostsOptions {
  /** The ECS cluster the instances join, as an Auto Scaling group capacity provider of its own. */
  readonly cluster: ecs.Cluster;

  /**
   * The container instances' launch template: FS-Cache clients on an ECS-optimized image.
   * Give it `machineImage: ecs.EcsOptimizedImage.amazonLinux2023()`; its cachefilesd keeps the disk cache of `fsCache` volumes.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/containers.md
   */
  readonly hosts: FsCacheClientLaunchTemplate;
}

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
    this.autoScalingGroup = clusterHostGroup(this, props.cluster.vpc, props.hosts, props,
      'ECS managed scaling drives the group; its scaling activity is in the cluster\'s capacity provider events, not a topic.');
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
