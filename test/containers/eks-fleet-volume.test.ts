import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import { CacheFleet, CacheOrigin, EksFleetVolume, FleetExport, Mirror, NfsVersion } from '../../lib';
import { importedFs, nagFindings, stackWithVpc } from '../util';

function setUp(fleetProps: { clientNfsVersion?: NfsVersion } = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')], directoryCacheTimeout: Duration.seconds(60), ...fleetProps,
  });
  return { app, stack, vpc, fleet };
}

/** A cluster of the user's, imported, with the nodes' security group. */
function importedCluster(stack: ReturnType<typeof setUp>['stack'], vpc: ec2.IVpc) {
  const nodes = new ec2.SecurityGroup(stack, 'Nodes', { vpc });
  const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', {
    clusterName: 'apps', kubectlRoleArn: 'arn:aws:iam::123456789012:role/kubectl', securityGroupIds: [nodes.securityGroupId], vpc,
  });
  return { cluster, nodes };
}

const V41 = ['nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport', 'ro', 'nocto',
  'acregmin=600', 'acregmax=600', 'acdirmin=60', 'acdirmax=60'];

describe('EksFleetVolume', () => {
  test('a static read-only PersistentVolume of the fleet\'s export, retained, and a claim bound to it by name', () => {
    const { stack, fleet } = setUp();
    const volume = new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet, { fsCache: true }), claimNamespace: 'ml' });
    expect(stack.resolve(volume.manifests)).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'data', labels: { 'app.kubernetes.io/managed-by': 'cdk-efs-cache' } },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadOnlyMany'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          mountOptions: ['fsc', ...V41],
          nfs: { server: stack.resolve(fleet.endpoint), path: '/efs', readOnly: true },
          claimRef: { namespace: 'ml', name: 'data' },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', namespace: 'ml', labels: { 'app.kubernetes.io/managed-by': 'cdk-efs-cache' } },
        spec: { accessModes: ['ReadOnlyMany'], storageClassName: '', volumeName: 'data', resources: { requests: { storage: '1Gi' } } },
      },
    ]);
    expect(volume.manifest).toBeUndefined();
    expect(Template.fromStack(stack).findResources('Custom::AWSCDK-EKS-KubernetesResource')).toEqual({});
  });

  test('a mirror: /mirror/<path> on the mirrors\' port; an NFSv3 fleet: NFSv3 with both ports named', () => {
    const { stack, fleet } = setUp();
    const mirror = new EksFleetVolume(stack, 'App', { source: FleetExport.mirror(fleet, '/efs/app'), volumeName: 'app-code' });
    expect(mirror.manifests[0].spec.nfs.path).toBe('/mirror/app');
    expect(mirror.manifests[0].spec.mountOptions).toEqual(['nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport', 'ro', 'port=2050']);
    expect(mirror.manifests[1].metadata).toMatchObject({ name: 'app-code', namespace: 'default' });
    const v3 = setUp({ clientNfsVersion: NfsVersion.NFS_V3 });
    const volume = new EksFleetVolume(v3.stack, 'Data', { source: FleetExport.cacheFleet(v3.fleet) });
    expect(volume.mountOptions).toEqual(expect.arrayContaining(['nfsvers=3', 'nolock', 'port=2049', 'mountport=20048', 'mountvers=3']));
    expect(volume.mountOptions).not.toContain('fsc');
  });

  test('given a cluster, the manifests are applied to it and its nodes\' group is let into the fleet', () => {
    const { stack, vpc, fleet } = setUp({ clientNfsVersion: NfsVersion.NFS_V3 });
    const { cluster } = importedCluster(stack, vpc);
    const volume = new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet), cluster });
    const t = Template.fromStack(stack);
    t.resourceCountIs('Custom::AWSCDK-EKS-KubernetesResource', 1);
    expect(volume.manifest!.node.path).toBe('TestStack/Data/Resource');
    const manifest = Object.values(t.findResources('Custom::AWSCDK-EKS-KubernetesResource'))[0].Properties.Manifest;
    expect(JSON.parse(manifest).map((m: { kind: string; metadata: { name: string } }) => `${m.kind} ${m.metadata.name}`))
      .toEqual(['PersistentVolume data', 'PersistentVolumeClaim data']);
    const ours = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress'))
      .filter((r) => String(r.Properties.Description).endsWith('from EKS nodes'));
    expect(ours.map((r) => [r.Properties.FromPort, r.Properties.SourceSecurityGroupId['Fn::GetAtt'][0].startsWith('Nodes')])).toEqual([[2049, true], [20048, true]]);
  });

  test('clients given replace the cluster\'s connections', () => {
    const { stack, vpc, fleet } = setUp();
    const { cluster } = importedCluster(stack, vpc);
    const other = new ec2.SecurityGroup(stack, 'SelfManaged', { vpc });
    new EksFleetVolume(stack, 'Data', { source: FleetExport.mirror(fleet, '/efs/app'), cluster, clients: [other] });
    const ours = Object.values(Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress'))
      .filter((r) => String(r.Properties.Description).endsWith('from EKS nodes'));
    expect(ours.map((r) => [r.Properties.FromPort, r.Properties.SourceSecurityGroupId['Fn::GetAtt'][0].startsWith('SelfManaged')])).toEqual([[2050, true]]);
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 find nothing unacknowledged in the manifests and rules', () => {
    const { app, stack, vpc, fleet } = setUp();
    const nodes = new ec2.SecurityGroup(stack, 'Nodes', { vpc });
    new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet), clients: [nodes] });
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});
