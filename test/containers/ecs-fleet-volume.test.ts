import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { CacheFleet, CacheOrigin, EcsFleetVolume, FleetExport, FsCacheClientLaunchTemplate, Mirror, MountSource, NfsVersion } from '../../lib';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters } from '../util/user-data';

/** A fleet with a mirror of /efs/app, a task definition for EC2 with one container, and the instances' group. */
function setUp(fleetProps: { clientNfsVersion?: NfsVersion } = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')], attributeCacheTimeout: Duration.seconds(30), ...fleetProps,
  });
  const taskDefinition = new ecs.Ec2TaskDefinition(stack, 'Task');
  const container = taskDefinition.addContainer('App', { image: ecs.ContainerImage.fromRegistry('public.ecr.aws/docker/library/busybox:latest'), memoryLimitMiB: 256 });
  const instances = new ec2.SecurityGroup(stack, 'Instances', { vpc });
  return { app, stack, vpc, fleet, taskDefinition, container, instances };
}

/** The `EFSC_*` parameters of the launch template `Clients`. */
function clientParameters(stack: Stack): Record<string, string> {
  return parameters(Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('Clients'))![1]);
}

function volumes(stack: Stack): Record<string, unknown>[] {
  const defs = Template.fromStack(stack).findResources('AWS::ECS::TaskDefinition');
  return Object.values(defs)[0].Properties.Volumes;
}

describe('EcsFleetVolume', () => {
  test('mounts the fleet\'s export with the options of its EC2 clients, read-only, for the task only', () => {
    const { stack, fleet, taskDefinition, container, instances } = setUp();
    const volume = new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet), clients: [instances] });
    volume.addMountPoint(container, '/data');
    const t = Template.fromStack(stack);
    const o = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,nocto,acregmin=30,acregmax=30,acdirmin=600,acdirmax=600';
    expect(volumes(stack)).toEqual([{
      Name: 'Data',
      DockerVolumeConfiguration: { Driver: 'local', Scope: 'task', DriverOpts: { type: 'nfs', device: ':/efs', o: `addr=${fleet.endpoint},${o}` } },
    }]);
    expect(volume.mountOptions.join(',')).toBe(o);
    expect(volume.volumeName).toBe('Data');
    t.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ MountPoints: [{ SourceVolume: 'Data', ContainerPath: '/data', ReadOnly: true }] })],
    });
  });

  test('the options are the EC2 clients\' own, without fsc unless asked', () => {
    const { stack, vpc, fleet, taskDefinition } = setUp();
    const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet) });
    const plain = new EcsFleetVolume(stack, 'Plain', { taskDefinition, source: FleetExport.cacheFleet(fleet) });
    const cached = new EcsFleetVolume(stack, 'Cached', { taskDefinition, source: FleetExport.cacheFleet(fleet, { fsCache: true }) });
    const ec2Options = clientParameters(stack).EFSC_MOUNT_OPTIONS;
    expect(cached.mountOptions.join(',')).toBe(ec2Options);
    expect(['fsc', ...plain.mountOptions]).toEqual(cached.mountOptions);
    expect(clients.server).toBe(cached.server);
  });

  test('an NFSv3 fleet is mounted over NFSv3 with both ports named, and mountd\'s port opened', () => {
    const { stack, fleet, taskDefinition, instances } = setUp({ clientNfsVersion: NfsVersion.NFS_V3 });
    const volume = new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet), clients: [instances] });
    expect(volume.mountOptions).toEqual(expect.arrayContaining(['nfsvers=3', 'nolock', 'proto=tcp', 'port=2049', 'mountproto=tcp', 'mountport=20048', 'mountvers=3']));
    expect(volume.mountOptions).not.toContain('nfsvers=4.1');
    const t = Template.fromStack(stack);
    for (const port of [2049, 20048]) {
      t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp', FromPort: port, ToPort: port, Description: `NFS (TCP ${port}) from ECS container instances`,
        SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Instances'), 'GroupId'] },
      });
    }
  });

  test('a mirror is mounted from /mirror/<path> on its own port, without fsc, and only 2050 is opened', () => {
    const { stack, fleet, taskDefinition, instances } = setUp();
    const volume = new EcsFleetVolume(stack, 'App', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app'), clients: [instances] });
    expect(volume.remotePath).toBe('/mirror/app');
    expect(volume.mountOptions.join(',')).toBe('nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,port=2050');
    expect((volumes(stack)[0] as { DockerVolumeConfiguration: { DriverOpts: { device: string } } }).DockerVolumeConfiguration.DriverOpts.device).toBe(':/mirror/app');
    const rules = Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress', { Properties: { Description: Match.stringLikeRegexp('ECS container instances') } });
    expect(Object.values(rules).map((r) => r.Properties.FromPort)).toEqual([2050]);
  });

  test('the fleet\'s mirror options are the EC2 clients\' own', () => {
    const { stack, fleet, vpc, taskDefinition } = setUp();
    new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app'] }) });
    const volume = new EcsFleetVolume(stack, 'App', { taskDefinition, source: FleetExport.mirror(fleet, '/efs/app') });
    expect(volume.mountOptions.join(',')).toBe(clientParameters(stack).EFSC_MIRROR_MOUNT_OPTIONS);
  });

  test('without clients, no rule is made', () => {
    const { stack, fleet, taskDefinition } = setUp();
    new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet) });
    const rules = Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress', { Properties: { Description: Match.stringLikeRegexp('ECS') } });
    expect(rules).toEqual({});
  });

  test('a task definition for ECS Anywhere (external instances) is taken', () => {
    const { stack, fleet } = setUp();
    const td = new ecs.TaskDefinition(stack, 'Anywhere', { compatibility: ecs.Compatibility.EXTERNAL });
    expect(new EcsFleetVolume(stack, 'Data', { taskDefinition: td, source: FleetExport.cacheFleet(fleet) }).volumeName).toBe('Data');
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 find nothing unacknowledged in the volume\'s rules', () => {
    const { app, stack, fleet, taskDefinition, instances } = setUp();
    new EcsFleetVolume(stack, 'Data', { taskDefinition, source: FleetExport.cacheFleet(fleet), clients: [instances] });
    const reason = 'The user\'s task definition of the test, standing for theirs.';
    Validations.of(taskDefinition).acknowledge(...['AwsSolutions-ECS2', 'AwsSolutions-ECS7'].map((id) => ({ id, reason })));
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});
