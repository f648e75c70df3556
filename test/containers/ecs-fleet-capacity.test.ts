import { CfnParameter, Size } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import {
  CacheFleet, CacheOrigin, EcsFleetCapacity, EcsFleetVolume, FleetExport, FsCacheClientLaunchTemplate, FsCacheClientLaunchTemplateProps, MountSource,
} from '../../lib';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData } from '../util/user-data';

const ECS_AL2023_ARM = ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.ARM);

/** A fleet, an ECS cluster, and FS-Cache container hosts of the fleet on an ECS-optimized image. */
function setUp(hostProps: Partial<FsCacheClientLaunchTemplateProps> = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) });
  const cluster = new ecs.Cluster(stack, 'Cluster', { vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
  const hosts = new FsCacheClientLaunchTemplate(stack, 'Hosts', {
    vpc, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: ECS_AL2023_ARM, ...hostProps,
  });
  return { app, stack, vpc, fleet, cluster, hosts };
}

/** The hosts' rendered user data, tokens as `<...>`. */
function hostsUserData(stack: ReturnType<typeof setUp>['stack']): string {
  return Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('Hosts'))![1];
}

describe('EcsFleetCapacity', () => {
  test('an Auto Scaling group of the hosts\' launch template, the cluster\'s capacity provider, joined after the bootstrap', () => {
    const { stack, cluster, hosts } = setUp();
    const capacity = new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts, minCapacity: 1, maxCapacity: 4 });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
      MinSize: '1', MaxSize: '4',
      LaunchTemplate: { LaunchTemplateId: { Ref: stack.getLogicalId(hosts.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate) } },
      NewInstancesProtectedFromScaleIn: true,
    });
    t.hasResourceProperties('AWS::ECS::ClusterCapacityProviderAssociations', {
      CapacityProviders: Match.arrayWith([stack.resolve(capacity.capacityProvider.capacityProviderName)]),
    });
    // The ECS agent reads ECS_CLUSTER at its start; the line is written by the commands that run once the FS-Cache
    // bootstrap succeeded, so an instance whose cache disk or mount failed never takes tasks.
    const userData = hostsUserData(stack);
    const commands = userData.indexOf('# Commands added to userData');
    // The cluster's name is a deploy-time value: it reaches the instance as data (base64, decoded into a variable),
    // never spliced into the command as aws-cdk-lib writes it.
    const clusterRef = `<Ref:${stack.getLogicalId(cluster.node.defaultChild as ecs.CfnCluster)}>`;
    const decoded = `EFSC_ECS_CLUSTER="$(base64 -d <<<'${Buffer.from(clusterRef).toString('base64')}')"`;
    const line = userData.indexOf(`${decoded}\necho "ECS_CLUSTER=\${EFSC_ECS_CLUSTER}" >> /etc/ecs/ecs.config`);
    expect(commands).toBeGreaterThan(0);
    expect(line).toBeGreaterThan(commands);
    expect(userData).not.toContain(`ECS_CLUSTER=${clusterRef}`);
    expect(capacity.autoScalingGroup.role).toBe(hosts.role);
  });

  test('the hosts\' role may register with this cluster only; the hosts\' own commands still run', () => {
    const { stack, cluster, hosts } = setUp();
    hosts.userData.addCommands('echo mine');
    new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts });
    const policies = Template.fromStack(stack).findResources('AWS::IAM::ManagedPolicy');
    const statements = Object.values(policies).flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: unknown; Resource: unknown }[]);
    const register = statements.find((s) => Array.isArray(s.Action) && s.Action.includes('ecs:RegisterContainerInstance'));
    expect(register?.Resource).toEqual({ 'Fn::GetAtt': [stack.getLogicalId(cluster.node.defaultChild as ecs.CfnCluster), 'Arn'] });
    const userData = hostsUserData(stack);
    expect(userData.indexOf('echo mine')).toBeGreaterThan(userData.indexOf('# Commands added to userData'));
    expect(userData).toContain('ECS_CLUSTER=');
  });

  test('no write action of the hosts\' policy is on every resource without a condition: the awslogs driver\'s name this account\'s log groups', () => {
    const { stack, cluster, hosts } = setUp();
    new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts });
    type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
    const statements = Object.entries(Template.fromStack(stack).findResources('AWS::IAM::ManagedPolicy'))
      .filter(([id]) => id.startsWith('HostsRole'))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Statement[]);
    const actions = (s: Statement) => [s.Action].flat();
    // What checkov's CKV_AWS_111 flags: Allow on "*" with no condition. Left: the two actions IAM takes on "*" only.
    const open = statements.filter((s) => s.Effect === 'Allow' && s.Resource === '*' && s.Condition === undefined).flatMap(actions);
    expect(open.sort()).toEqual(['ecr:GetAuthorizationToken', 'ecs:DiscoverPollEndpoint']);
    const logs = statements.filter((s) => actions(s).some((a) => a.startsWith('logs:')));
    expect(logs).toEqual([{
      Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':logs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':log-group:*']] },
    }]);
    // aws-cdk-lib's other container instance statements are kept as it writes them: on this cluster.
    const clusterArn = { 'Fn::GetAtt': [stack.getLogicalId(cluster.node.defaultChild as ecs.CfnCluster), 'Arn'] };
    expect(statements).toContainEqual({ Effect: 'Allow', Action: ['ecs:Poll', 'ecs:StartTelemetrySession'], Resource: '*', Condition: { ArnEquals: { 'ecs:cluster': clusterArn } } });
    expect(statements.filter((s) => actions(s).includes('ecs:RegisterContainerInstance')).map((s) => s.Resource)).toEqual([clusterArn]);
  });

  test('a cluster name ECS refuses is refused at synth (ecs.config holds it on a line); a deploy-time name reaches the hosts as the cluster\'s Ref', () => {
    for (const name of ['app\nECS_ENGINE_AUTH_DATA=x', 'app cluster', 'a'.repeat(256), 'app,x', '']) {
      const { stack, vpc, hosts } = setUp();
      const cluster = new ecs.Cluster(stack, 'Named', { vpc, clusterName: name, containerInsightsV2: ecs.ContainerInsights.ENABLED });
      expect(() => new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts }))
        .toThrow(/^Invalid cluster: TestStack\/Named is named ".*", which ECS refuses .*clusterName of 1-255 letters, digits, hyphens and underscores, or none\./);
    }
    const { stack, vpc, hosts } = setUp();
    const cluster = new ecs.Cluster(stack, 'Named', {
      vpc, clusterName: new CfnParameter(stack, 'ClusterName').valueAsString, containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts });
    const clusterRef = `<Ref:${stack.getLogicalId(cluster.node.defaultChild as ecs.CfnCluster)}>`;
    expect(hostsUserData(stack)).toContain(`EFSC_ECS_CLUSTER="$(base64 -d <<<'${Buffer.from(clusterRef).toString('base64')}')"`);
    const { stack: s2, vpc: v2, hosts: h2 } = setUp();
    expect(() => new EcsFleetCapacity(s2, 'Capacity', { cluster: new ecs.Cluster(s2, 'Named', { vpc: v2, clusterName: 'app-1_B' }), hosts: h2 })).not.toThrow();
  });

  test('an ECS-optimized image gets a root volume of at least its 30 GiB snapshot; a smaller one is refused', () => {
    const { stack } = setUp();
    Template.fromStack(stack).hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({ BlockDeviceMappings: [Match.objectLike({ DeviceName: '/dev/xvda', Ebs: Match.objectLike({ VolumeSize: 30 }) })] }),
    });
    expect(() => setUp({ rootVolumeSize: Size.gibibytes(16) })).toThrow(
      /Invalid rootVolumeSize.*16 GiB, but the image \('\/aws\/service\/ecs\/optimized-ami\/amazon-linux-2023\/arm64\/recommended\/image_id'\) is built with a 30 GiB root device/);
    expect(() => setUp({ rootVolumeSize: Size.gibibytes(40) })).not.toThrow();
  });

  test('hosts without the ECS agent are refused, hosts of an image of your own are warned about', () => {
    const { stack, vpc, fleet, cluster } = setUp();
    const plain = new FsCacheClientLaunchTemplate(stack, 'Plain', { vpc, source: MountSource.cacheFleet(fleet) });
    expect(() => new EcsFleetCapacity(stack, 'A', { cluster, hosts: plain })).toThrow(/Invalid hosts.*without the ECS agent.*EcsOptimizedImage\.amazonLinux2023/);
    const own = new FsCacheClientLaunchTemplate(stack, 'Own', {
      vpc, source: MountSource.cacheFleet(fleet), machineImage: ec2.MachineImage.genericLinux({ 'us-east-1': 'ami-0123456789abcdef0' }),
    });
    new EcsFleetCapacity(stack, 'B', { cluster, hosts: own });
    Annotations.fromStack(stack).hasWarning('/TestStack/B', Match.stringLikeRegexp('not an ecs.EcsOptimizedImage'));
  });

  test.each([
    [{ minCapacity: -1 }, /Invalid minCapacity/],
    [{ minCapacity: 1.5 }, /Invalid minCapacity/],
    [{ minCapacity: 3, maxCapacity: 2 }, /Invalid maxCapacity.*at least minCapacity \(3\)/],
    [{ minCapacity: 0, maxCapacity: 0 }, /Invalid maxCapacity/],
  ])('refuses capacity %j', (capacityProps, message) => {
    const { stack, cluster, hosts } = setUp();
    expect(() => new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts, ...capacityProps })).toThrow(message);
  });

  test('images the scripts cannot run on are refused: Bottlerocket and the ECS-optimized Amazon Linux 2', () => {
    expect(() => setUp({ machineImage: new ecs.BottleRocketImage({ architecture: ec2.InstanceArchitecture.ARM_64 }) }))
      .toThrow(/Invalid machineImage.*Bottlerocket.*TOML/);
    expect(() => setUp({ machineImage: ecs.EcsOptimizedImage.amazonLinux2(ecs.AmiHardwareType.ARM) })).toThrow(/Invalid machineImage.*Amazon Linux 2 or older/);
    expect(() => setUp({ machineImage: ecs.EcsOptimizedImage.amazonLinux2023() })).toThrow(/Invalid machineImage.*x86_64/);
  });

  test('cdk-nag clean with a task that reads the fleet through the hosts\' FS-Cache', () => {
    const { app, stack, fleet, cluster, hosts } = setUp();
    new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts });
    const taskDefinition = new ecs.Ec2TaskDefinition(stack, 'Task');
    taskDefinition.addContainer('App', { image: ecs.ContainerImage.fromRegistry('public.ecr.aws/docker/library/busybox:latest'), memoryLimitMiB: 256 });
    new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet, { fsCache: true }), clients: [hosts] });
    // The task definition is this test's own (its container's logging is the user's choice), not the library's.
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA']).filter((f) => !/ @ TestStack\/Task\//.test(f))).toEqual([]);
  });
});
