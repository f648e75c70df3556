import { CfnParameter, Duration, Fn, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as yaml from 'yaml';
import { CacheFleet, CacheFleetAttributes, CacheOrigin, EksFleetVolume, FanOut, FleetExport, Mirror, NfsVersion } from '../../lib';
import { CfnTemplate, PSEUDO_VALUES, resolveIntrinsics } from '../heavy/lab/harness/user-data';
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

  test('nconnect ends the PersistentVolume\'s mountOptions, of the export or a mirror; none by default', () => {
    const { stack, fleet } = setUp();
    const volume = new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet), nconnect: 8 });
    expect(stack.resolve(volume.manifests[0].spec.mountOptions)).toEqual([...V41, 'nconnect=8']);
    const mirror = new EksFleetVolume(stack, 'App', { source: FleetExport.mirror(fleet, '/efs/app'), nconnect: 2 });
    expect(mirror.manifests[0].spec.mountOptions.slice(-2)).toEqual(['port=2050', 'nconnect=2']);
    expect(new EksFleetVolume(stack, 'Plain', { source: FleetExport.cacheFleet(fleet) }).mountOptions).toEqual(V41);
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

/**
 * The PersistentVolume's manifest with deploy-time values: the template resolved as CloudFormation would resolve it,
 * then read as the kubectl provider reads it (JSON.parse) and as a GitOps tool would read it (YAML).
 */
describe('EksFleetVolume: deploy-time values in the manifest', () => {
  const DNS = 'Fleet-Nlb-0123456789abcdef.elb.us-east-1.amazonaws.com';

  test('a fleet behind its own load balancer: the DNS name AWS writes, in a manifest that parses to the same keys', () => {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer() });
    const { cluster } = importedCluster(stack, vpc);
    const volume = new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet), cluster });
    const template = Template.fromStack(stack).toJSON() as CfnTemplate;
    const resource = Object.values(template.Resources!).find((r) => r.Type === 'Custom::AWSCDK-EKS-KubernetesResource')!;
    const nlb = Object.entries(template.Resources!).find(([, r]) => r.Type === 'AWS::ElasticLoadBalancingV2::LoadBalancer')![0];
    const text = resolveIntrinsics(resource.Properties!.Manifest, template, { ...PSEUDO_VALUES, [`Fn::GetAtt:${nlb}.DNSName`]: DNS }) as string;
    const expected = JSON.parse(JSON.stringify(stack.resolve(volume.manifests)).replace(/\{"Fn::GetAtt":\[[^\]]*\]\}/, JSON.stringify(DNS)));
    expect(JSON.parse(text)).toEqual(expected);
    expect(JSON.parse(text)[0].spec.nfs).toEqual({ server: DNS, path: '/efs', readOnly: true });
    expect(yaml.parse(text)).toEqual(expected);
  });

  test('control: a value spliced as it is into the same manifest adds a key or breaks it', () => {
    const { stack, fleet } = setUp();
    const volume = new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet) });
    // A path `/efs","x":"y` spliced between the quotes of `"path":"..."`.
    const text = JSON.stringify(stack.resolve(volume.manifests)).replace('"path":"/efs"', '"path":"/efs","x":"y"');
    expect(Object.keys(JSON.parse(text)[0].spec.nfs)).toEqual(['server', 'path', 'x', 'readOnly']);
    expect(() => JSON.parse(JSON.stringify(volume.manifests[0]).replace('"path":"/efs"', '"path":"/efs"x"'))).toThrow();
  });

  /** An imported fleet (or its mirror) whose attribute `attrs` makes a deploy-time value, as a source. */
  const imported = (attrs: (stack: Stack) => Partial<CacheFleetAttributes>, mirror = false) => (stack: Stack) => {
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
      endpoint: 'cache.efs-cache.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'), ...attrs(stack),
    });
    return mirror ? FleetExport.mirror(fleet, '/efs/app') : FleetExport.cacheFleet(fleet);
  };
  const cases: Array<[string, (stack: Stack) => FleetExport, RegExp]> = [
    ['an endpoint parameter', imported((s) => ({ endpoint: new CfnParameter(s, 'Endpoint').valueAsString })), /endpoint is parameter Endpoint/],
    ['an endpoint import', imported(() => ({ endpoint: Fn.importValue('fleet-endpoint') })), /endpoint is .*ImportValue/],
    ['an export path from SSM', imported((s) => ({ exportPath: ssm.StringParameter.valueForStringParameter(s, '/fleet/path') })), /exportPath is parameter/],
    ['a mirror\'s export path parameter', imported((s) => ({
      mirrorExports: [{ path: '/efs/app', exportPath: new CfnParameter(s, 'MirrorPath').valueAsString }],
    }), true), /mirrorExports\[\]\.exportPath of '\/efs\/app' is parameter MirrorPath/],
    ['an attribute timer parameter', imported((s) => ({
      attributeCacheTimeout: Duration.seconds(new CfnParameter(s, 'Ac', { type: 'Number' }).valueAsNumber),
    })), /attributeCacheTimeout is a token \(known at deploy time\): the PersistentVolume's mountOptions name it in seconds/],
  ];
  test.each(cases)('refused: %s of an imported fleet, with what to give instead', (_name, source, message) => {
    const { stack } = setUp();
    expect(() => new EksFleetVolume(stack, 'Data', { source: source(stack) })).toThrow(message);
    expect(() => new EksFleetVolume(stack, 'Data2', { source: source(new Stack()) })).toThrow(
      /^Invalid source: .*Give the fleet as a CacheFleet of this app, or import it \(CacheFleet\.fromCacheFleetAttributes\) with literal attributes, checked at synth\. \(at TestStack\/Data2\)$/);
  });
});

describe('EksFleetVolume: PersistentVolume names are the cluster\'s', () => {
  test('two volumes of one cluster with one name are refused, whatever their namespaces; other clusters and names are not', () => {
    const { stack, vpc, fleet } = setUp();
    const { cluster } = importedCluster(stack, vpc);
    new EksFleetVolume(stack, 'Data', { source: FleetExport.cacheFleet(fleet), cluster });
    expect(() => new EksFleetVolume(stack, 'Other', { source: FleetExport.cacheFleet(fleet), cluster, volumeName: 'data', claimNamespace: 'ml' }))
      .toThrow(/^Invalid volumeName: 'data' is the name of the PersistentVolume of TestStack\/Data on the same cluster \(TestStack\/Cluster\): PersistentVolume names are the cluster's/);
    // The same cluster imported again by its name is the same cluster.
    const again = eks.Cluster.fromClusterAttributes(stack, 'Again', { clusterName: 'apps', kubectlRoleArn: 'arn:aws:iam::123456789012:role/kubectl', vpc });
    expect(() => new EksFleetVolume(stack, 'Third', { source: FleetExport.mirror(fleet, '/efs/app'), cluster: again, volumeName: 'data' }))
      .toThrow(/^Invalid volumeName: 'data' is the name of the PersistentVolume of TestStack\/Data/);
    const other = eks.Cluster.fromClusterAttributes(stack, 'Other2', { clusterName: 'batch', kubectlRoleArn: 'arn:aws:iam::123456789012:role/kubectl', vpc });
    expect(() => new EksFleetVolume(stack, 'Fourth', { source: FleetExport.cacheFleet(fleet), cluster: other, volumeName: 'data' })).not.toThrow();
    expect(() => new EksFleetVolume(stack, 'Fifth', { source: FleetExport.cacheFleet(fleet), cluster, volumeName: 'data2' })).not.toThrow();
  });
});
