import { CfnParameter, Fn, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import {
  CacheFleet, CacheOrigin, EcsFleetVolume, EcsFleetVolumeProps, EksFleetNodes, EksFleetNodesProps, EksFleetVolume, EksFleetVolumeProps, FleetExport,
  FsCacheClientLaunchTemplate, ICacheFleet, Mirror, MountSource,
} from '../../lib';
import { importedFs } from '../util';
import { BadInput, importedFleet, refusesBadInput } from '../util/bad-input';

const fleetOf = (stack: Stack, vpc: ec2.Vpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')] });
/** An ECS volume of the fleet in a task definition for EC2, unless `props` says otherwise. */
const ecsVolume = (props: (stack: Stack, fleet: CacheFleet) => Partial<EcsFleetVolumeProps>) => (stack: Stack, vpc: ec2.Vpc) => {
  const fleet = fleetOf(stack, vpc);
  const p = props(stack, fleet);
  return new EcsFleetVolume(stack, 'Volume', { taskDefinition: p.taskDefinition ?? new ecs.Ec2TaskDefinition(stack, 'Task'), source: FleetExport.cacheFleet(fleet), ...p });
};
const eksVolume = (props: (stack: Stack, fleet: CacheFleet) => Partial<EksFleetVolumeProps>) => (stack: Stack, vpc: ec2.Vpc) => {
  const fleet = fleetOf(stack, vpc);
  return new EksFleetVolume(stack, 'Volume', { source: FleetExport.cacheFleet(fleet), ...props(stack, fleet) });
};
/**
 * EKS nodes of an imported cluster (literal attributes) on FS-Cache hosts of the fleet, unless `props` says otherwise;
 * `props` may make an EKS cluster of the app (`ownCluster`).
 */
const eksNodes = (props: (stack: Stack, ownCluster: (p?: Partial<eks.ClusterProps>) => eks.Cluster) => Partial<EksFleetNodesProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => {
    const hosts = new FsCacheClientLaunchTemplate(stack, 'Hosts', {
      vpc, source: MountSource.cacheFleet(fleetOf(stack, vpc)), instanceType: new ec2.InstanceType('m6gd.xlarge'),
      machineImage: EksFleetNodes.amazonLinux2023Image('1.33', ec2.InstanceArchitecture.ARM_64),
    });
    const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', {
      clusterName: 'apps', vpc, clusterEndpoint: 'https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com',
      clusterCertificateAuthorityData: 'Q0FEQVRB', clusterSecurityGroupId: 'sg-0123456789abcdef0',
    });
    const ownCluster = (p: Partial<eks.ClusterProps> = {}) => new eks.Cluster(stack, 'Own', {
      vpc, version: eks.KubernetesVersion.V1_33, defaultCapacity: 0, ...p,
      kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
    });
    return new EksFleetNodes(stack, 'Nodes', { cluster, hosts, serviceIpv4Cidr: '10.100.0.0/16', ...props(stack, ownCluster) });
  };
/** An imported cluster with these attributes in place of the literal ones. */
const eksCluster = (stack: Stack, attrs: Partial<eks.ClusterAttributes>) => eks.Cluster.fromClusterAttributes(stack, 'Imported', {
  clusterName: 'apps', vpc: ec2.Vpc.fromVpcAttributes(stack, 'ClusterVpc', { vpcId: 'vpc-1', availabilityZones: ['us-east-1a'], privateSubnetIds: ['s-1'] }),
  clusterEndpoint: 'https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com', clusterCertificateAuthorityData: 'Q0FEQVRB',
  clusterSecurityGroupId: 'sg-0123456789abcdef0', ...attrs,
});
const FARGATE = new RegExp('^Invalid taskDefinition: TestStack/Task may run on Fargate, which mounts only EFS \\(and S3 Files\\), never an NFS server ' +
  'such as a cache fleet\\. Give Fargate tasks an EFS volume of the origin \\(efsVolumeConfiguration\\), or S3 Files for data in S3;');

/** What the container volumes (EcsFleetVolume, EksFleetVolume, FleetExport) refuse at synth, each case naming the prop to change. */
const CASES: BadInput[] = [
  {
    name: 'ecs: a Fargate task definition',
    build: ecsVolume((stack) => ({ taskDefinition: new ecs.FargateTaskDefinition(stack, 'Task') })),
    error: FARGATE,
  },
  {
    name: 'ecs: a task definition for EC2 and Fargate (a task could land on Fargate)',
    build: ecsVolume((stack) => ({ taskDefinition: new ecs.TaskDefinition(stack, 'Task', { compatibility: ecs.Compatibility.EC2_AND_FARGATE, cpu: '256', memoryMiB: '512' }) })),
    error: FARGATE,
  },
  {
    name: 'ecs: a task definition that is not an ecs.TaskDefinition (JavaScript)',
    build: ecsVolume(() => ({ taskDefinition: { family: 'app' } as unknown as ecs.TaskDefinition })),
    error: /^Invalid taskDefinition: must be an ecs\.TaskDefinition/,
  },
  {
    name: 'ecs: a volume name with a slash',
    build: ecsVolume(() => ({ volumeName: 'data/set' })),
    error: /^Invalid volumeName: must be 1-255 letters, digits, hyphens and underscores, got 'data\/set'\. \(at TestStack\/Volume; in Python: volume_name\)$/,
  },
  {
    name: 'ecs: a volume name from a token',
    build: ecsVolume((stack) => ({ volumeName: new CfnParameter(stack, 'Name').valueAsString })),
    error: /^Invalid volumeName: must be known at synth \(containers name it in their mount points\), got parameter Name/,
  },
  {
    name: 'ecs: no source (JavaScript)',
    build: ecsVolume(() => ({ source: undefined as unknown as FleetExport })),
    error: /^Invalid source: must be FleetExport\.cacheFleet\(fleet\) or FleetExport\.mirror\(fleet, mirrorPath\)\./,
  },
  {
    name: 'ecs: a mirror the fleet does not have',
    build: ecsVolume((_s, fleet) => ({ source: FleetExport.mirror(fleet, '/efs/www') })),
    error: /^Invalid source: '\/efs\/www' is not a mirror of TestStack\/Fleet \(its mirrors: \/efs\/app\)\. \(at TestStack\/Volume\)$/,
  },
  {
    name: 'ecs: an imported fleet whose endpoint is a parameter (Docker reads it in the mount options unchecked)',
    build: (stack) => new EcsFleetVolume(stack, 'Volume', {
      taskDefinition: new ecs.Ec2TaskDefinition(stack, 'Task'),
      source: FleetExport.cacheFleet(importedFleet(stack, { endpoint: new CfnParameter(stack, 'Endpoint').valueAsString })),
    }),
    error: new RegExp('^Invalid source: the endpoint of TestStack/Imported is parameter Endpoint \\(a token, known at deploy time\\): ' +
      'Docker\'s local driver .*Give the endpoint as a literal to CacheFleet\\.fromCacheFleetAttributes'),
  },
  {
    name: 'ecs: an imported fleet whose exportPath is a parameter',
    build: (stack) => new EcsFleetVolume(stack, 'Volume', {
      taskDefinition: new ecs.Ec2TaskDefinition(stack, 'Task'),
      source: FleetExport.cacheFleet(importedFleet(stack, { exportPath: new CfnParameter(stack, 'ExportPath').valueAsString })),
    }),
    error: /^Invalid source: the exportPath of TestStack\/Imported is parameter ExportPath \(a token, known at deploy time\): .*device=:<path>.*Give it as a literal/,
  },
  {
    name: 'ecs: two volumes of one name in a task definition',
    build: ecsVolume((stack, fleet) => {
      const taskDefinition = new ecs.Ec2TaskDefinition(stack, 'Task');
      new EcsFleetVolume(stack, 'First', { taskDefinition, source: FleetExport.cacheFleet(fleet), volumeName: 'data' });
      return { taskDefinition, volumeName: 'data' };
    }),
    error: /^Invalid volumeName: TestStack\/Task already has a volume named 'data': ECS takes one volume per name/,
  },
  // nconnect: Linux takes 1-16 connections; the option lands in Docker's driver options or the manifest, so a literal.
  ...([['ecs', ecsVolume], ['eks', eksVolume]] as const).flatMap(([kind, volume]): BadInput[] => [
    { name: `${kind}: nconnect 17`, build: volume(() => ({ nconnect: 17 })), error: /^Invalid nconnect: must be a whole number of TCP connections from 1 to 16 .*got 17\. / },
    { name: `${kind}: nconnect 0`, build: volume(() => ({ nconnect: 0 })), error: /^Invalid nconnect: must be a whole number of TCP connections from 1 to 16 .*got 0\. / },
    { name: `${kind}: nconnect 1.5`, build: volume(() => ({ nconnect: 1.5 })), error: /^Invalid nconnect: must be a whole number .*got 1\.5\. / },
    {
      name: `${kind}: nconnect from a token`,
      build: volume((stack) => ({ nconnect: new CfnParameter(stack, 'Connections', { type: 'Number' }).valueAsNumber })),
      error: /^Invalid nconnect: must be known at synth \(it becomes the mount option nconnect=<n>\), got parameter Connections/,
    },
  ]),
  {
    name: 'eks: a mirror of a fleet of the user\'s own making, served outside /mirror',
    build: (stack) => {
      const own: ICacheFleet = Object.assign(Object.create(importedFleet(stack)), { mirrorExports: [{ path: '/efs/app', exportPath: '/srv/app' }] });
      return new EksFleetVolume(stack, 'Volume', { source: FleetExport.mirror(own, '/efs/app') });
    },
    error: /^Invalid source: '\/efs\/app' is served by TestStack\/Imported at '\/srv\/app', which is not a path under \/mirror/,
  },
  {
    name: 'eks: a volume name with upper case (a Kubernetes name)',
    build: eksVolume(() => ({ volumeName: 'Data' })),
    error: /^Invalid volumeName: must be a DNS label \(1-63 lower-case letters, digits and hyphens, starting and ending with a letter or digit\), got 'Data'\./,
  },
  {
    name: 'eks: a construct id that is no DNS label, and no volume name',
    build: (stack, vpc) => new EksFleetVolume(stack, 'Data_Set', { source: FleetExport.cacheFleet(fleetOf(stack, vpc)) }),
    error: /^Invalid volumeName: must be a DNS label .*got 'data_set'\./,
  },
  {
    name: 'eks: a claim namespace over 63 characters',
    build: eksVolume(() => ({ claimNamespace: 'n'.repeat(64) })),
    error: /^Invalid claimNamespace: must be a DNS label/,
  },
  {
    name: 'eks: a claim namespace from a token',
    build: eksVolume((stack) => ({ claimNamespace: new CfnParameter(stack, 'Ns').valueAsString })),
    error: /^Invalid claimNamespace: must be known at synth \(it is a Kubernetes name\)/,
  },
  {
    name: 'eks: a source that is not a FleetExport (JavaScript, a fleet)',
    build: eksVolume((_s, fleet) => ({ source: fleet as unknown as FleetExport })),
    error: /^Invalid source: must be FleetExport\.cacheFleet\(fleet\) or FleetExport\.mirror\(fleet, mirrorPath\)\./,
  },
  {
    name: 'eks: two volumes of one cluster whose PersistentVolumes share a name (in other namespaces)',
    build: (stack, vpc) => {
      const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', { clusterName: 'apps', kubectlRoleArn: 'arn:aws:iam::123456789012:role/kubectl', vpc });
      const source = FleetExport.cacheFleet(fleetOf(stack, vpc));
      new EksFleetVolume(stack, 'Data', { source, cluster, claimNamespace: 'ml' });
      return new EksFleetVolume(stack, 'Volume', { source, cluster, volumeName: 'data' });
    },
    error: new RegExp('^Invalid volumeName: \'data\' is the name of the PersistentVolume of TestStack/Data on the same cluster \\(TestStack/Cluster\\): ' +
      'PersistentVolume names are the cluster\'s, whatever the claims\' namespaces\\. Give one of them another volumeName\\.'),
  },
  {
    name: 'eks: the endpoint of an imported fleet from a parameter (the manifest is JSON, which CloudFormation does not escape)',
    build: eksVolume((stack) => ({ source: FleetExport.cacheFleet(importedFleet(stack, { endpoint: new CfnParameter(stack, 'Endpoint').valueAsString })) })),
    error: new RegExp('^Invalid source: TestStack/Imported\'s endpoint is parameter Endpoint \\(a token, known at deploy time\\), which the ' +
      'PersistentVolume\'s manifest \\(JSON\\) would hold as it is: .*Give the fleet as a CacheFleet of this app'),
  },
  {
    name: 'eks nodes: a cluster endpoint from a parameter (spliced into the NodeConfig\'s YAML)',
    build: eksNodes((stack) => ({ cluster: eksCluster(stack, { clusterEndpoint: new CfnParameter(stack, 'Endpoint').valueAsString }) })),
    error: /^Invalid cluster: its clusterEndpoint is parameter Endpoint \(a token, known at deploy time\), which nodeadm would read in the NodeConfig's YAML/,
  },
  {
    name: 'eks nodes: a cluster name with a quote and a line break',
    build: eksNodes((stack) => ({ cluster: eksCluster(stack, { clusterName: 'apps"\n  kubelet:' }) })),
    error: /^Invalid cluster: its clusterName must be an EKS cluster name \(1-100 letters, digits, - and _, starting with a letter or digit\), got 'apps"\\n {2}kubelet:'\./,
  },
  {
    name: 'eks nodes: a certificate authority that is not base64',
    build: eksNodes((stack) => ({ cluster: eksCluster(stack, { clusterCertificateAuthorityData: '-----BEGIN CERTIFICATE-----' }) })),
    error: /^Invalid cluster: its clusterCertificateAuthorityData must be base64 \(as EKS gives it\)/,
  },
  {
    name: 'eks nodes: an endpoint that is not an https URL of a host',
    build: eksNodes((stack) => ({ cluster: eksCluster(stack, { clusterEndpoint: 'https://apps.example.com/x,y' }) })),
    error: /^Invalid cluster: its clusterEndpoint must be an https URL of a host name or address/,
  },
  {
    name: 'eks nodes: a service CIDR wider than EKS\'s /12',
    build: eksNodes(() => ({ serviceIpv4Cidr: '10.0.0.0/8' })),
    error: /^Invalid serviceIpv4Cidr: must be a block EKS takes as a service CIDR, \/12 to \/24/,
  },
  {
    name: 'eks nodes: a service CIDR with host bits set',
    build: eksNodes(() => ({ serviceIpv4Cidr: '10.100.7.0/16' })),
    error: /^Invalid serviceIpv4Cidr: '10\.100\.7\.0\/16' has host bits set/,
  },
  {
    name: 'eks nodes: a service CIDR other than the app\'s own cluster\'s',
    build: eksNodes((_stack, own) => ({ cluster: own({ serviceIpv4Cidr: '10.8.0.0/16' }), serviceIpv4Cidr: '10.100.0.0/16' })),
    error: /^Invalid serviceIpv4Cidr: is '10\.100\.0\.0\/16', but TestStack\/Own has serviceIpv4Cidr '10\.8\.0\.0\/16'/,
  },
  {
    name: 'eks nodes: an image of Kubernetes 1.9 (no Amazon Linux 2023 image, only the 1.N form)',
    build: () => EksFleetNodes.amazonLinux2023Image('1.9', ec2.InstanceArchitecture.ARM_64),
    error: new RegExp('^Invalid kubernetesVersion: must be a Kubernetes version of EKS\'s Amazon Linux 2023 images, 1\\.23 or later, written as EKS ' +
      'writes it \\(for example \'1\\.33\', no leading zero, no patch\\), got \'1\\.9\'\\. Give the cluster\'s version ' +
      '\\(eks\\.KubernetesVersion\\.V1_33\\.version\\)\\. \\(in Python: kubernetes_version\\)$'),
  },
  {
    name: 'eks nodes: an image of a version known only at deploy time (it names the image\'s SSM parameter at synth)',
    build: () => EksFleetNodes.amazonLinux2023Image(Fn.importValue('Version'), ec2.InstanceArchitecture.ARM_64),
    error: /^Invalid kubernetesVersion: must be known at synth \(it names the image's SSM parameter\)/,
  },
  {
    name: 'eks nodes: an image of a version with a leading zero',
    build: () => EksFleetNodes.amazonLinux2023Image('1.033', ec2.InstanceArchitecture.ARM_64),
    error: /^Invalid kubernetesVersion: .*got '1\.033'/,
  },
];

refusesBadInput('container volumes refuse bad input', CASES);
