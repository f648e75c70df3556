import { Annotations, ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { FsCacheClientLaunchTemplate } from '../client/fs-cache-client';
import { propError } from '../private/errors';
import { acknowledgeWildcardResource } from '../private/nag';
import { ClusterHostsOptions, clusterHostGroup, RoleStatements } from './cluster-hosts';
import { joinEcsCluster } from './cluster-join';

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
    checkClusterName(this, props.cluster);
    const image = props.hosts._machineImage;
    if (image === undefined) {
      throw propError(this, 'hosts', `${props.hosts.node.path} runs Amazon Linux 2023 without the ECS agent (machineImage unset): its instances would ` +
        'never join the cluster. Give it machineImage: ecs.EcsOptimizedImage.amazonLinux2023() (with ecs.AmiHardwareType.ARM for Graviton).');
    }
    if (!(image instanceof ecs.EcsOptimizedImage)) {
      Annotations.of(this).addWarningV2('cdk-efs-cache:ecsAgent', `${props.hosts.node.path}'s image is not an ecs.EcsOptimizedImage: its instances ` +
        'join the cluster only if the image runs the ECS agent.');
    }
    const logGroups = Stack.of(props.hosts.role).formatArn({ service: 'logs', resource: 'log-group', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.autoScalingGroup = clusterHostGroup(this, props.cluster.vpc, props.hosts, props,
      'ECS managed scaling drives the group; its scaling activity is in the cluster\'s capacity provider events, not a topic.',
      narrowContainerInstanceStatement(logGroups));
    // The cluster adds its `ECS_CLUSTER` line to the launch template's user data (run after the bootstrap succeeded;
    // its name as data, not spliced into the command) and the container instance statements to the hosts' role.
    joinEcsCluster(props.hosts, props.cluster);
    this.capacityProvider = new ecs.AsgCapacityProvider(this, 'Provider', { autoScalingGroup: this.autoScalingGroup });
    props.cluster.addAsgCapacityProvider(this.capacityProvider);
    Validations.of(props.hosts.role).acknowledge({
      id: 'AwsSolutions-IAM5[Action::ecs:Submit*]',
      reason: 'aws-cdk-lib\'s container instance statement: the ECS agent\'s Submit* state changes, on this cluster only.',
    });
    acknowledgeWildcardResource(props.hosts.role, logGroups, 'The awslogs driver of the tasks on the hosts writes to the log groups ' +
      'their task definitions name, which the hosts cannot know: CreateLogStream and PutLogEvents only, in this account and region.');
  }
}

/** The actions of aws-cdk-lib's container instance statement that name log groups: the awslogs driver's. */
const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

/**
 * aws-cdk-lib's container instance statement on every resource (`ecs:DiscoverPollEndpoint`, `ecr:GetAuthorizationToken`,
 * and the awslogs driver's `logs:CreateLogStream` and `logs:PutLogEvents`), split where IAM allows a narrower one: the
 * logs actions on `logGroups` (the log groups of the hosts' account and region); the rest take no resource but `*`.
 * Other statements are kept as they are.
 */
function narrowContainerInstanceStatement(logGroups: string): RoleStatements {
  return (s) => {
    const plain = s.effect === iam.Effect.ALLOW && s.resources.length === 1 && s.resources[0] === '*' && Object.keys(s.conditions).length === 0 &&
      s.notActions.length === 0 && s.notResources.length === 0 && s.principals.length === 0;
    const logs = s.actions.filter((a) => LOG_ACTIONS.includes(a));
    if (!plain || logs.length === 0) return [s];
    const rest = s.actions.filter((a) => !LOG_ACTIONS.includes(a));
    return [
      ...(rest.length > 0 ? [new iam.PolicyStatement({ actions: rest, resources: ['*'] })] : []),
      new iam.PolicyStatement({ actions: logs, resources: [logGroups] }),
    ];
  };
}

/**
 * Refuses a cluster name given at synth that ECS would refuse (up to 255 letters, digits, hyphens and underscores):
 * the hosts' `ecs.config` holds it on a line of its own. A name given as a token reaches the hosts as the one ECS
 * took when it created the cluster (its `Ref`), checked by ECS then. Throws `Invalid cluster`.
 */
function checkClusterName(scope: Construct, cluster: ecs.Cluster): void {
  const name = (cluster.node.defaultChild as ecs.CfnCluster).clusterName;
  if (name !== undefined && !Token.isUnresolved(name) && !/^[A-Za-z0-9_-]{1,255}$/.test(name)) {
    throw propError(scope, 'cluster', `${cluster.node.path} is named ${JSON.stringify(name)}, which ECS refuses and the hosts' ecs.config ` +
      'could not hold on one line: give the cluster a clusterName of 1-255 letters, digits, hyphens and underscores, or none.');
  }
}
