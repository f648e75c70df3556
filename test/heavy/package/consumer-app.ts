// A user's CDK app on the packed library. test/heavy/package/pack-and-synth.sh copies it into a fresh folder where only
// the tarball, aws-cdk-lib and constructs are installed, type-checks it (strict) against the package's .d.ts,
// compiles it and runs it. It builds every construct the package exports: what bin/sample-stack.ts builds (a
// two-node Route 53 cache fleet, the dashboard with an alarm topic, FS-Cache clients in an Auto Scaling group), two
// DataSeeders (an S3 prefix, a local directory as an asset), and each tier on its own (an OriginFileSystem, an
// imported origin, a CacheFleet behind an NLB, FsCacheClientLaunchTemplates, a CacheDashboard, an ECS service and an
// EKS cluster's volumes of that fleet). It synthesizes, then
// fails unless the templates hold the resources it built, with the bootstrap rendered from the package's assets/,
// and no error annotation.
// Usage: node consumer-app.js OUTDIR
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import {
  CacheDashboard,
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  DiskCache,
  EcsFleetCapacity,
  EcsFleetVolume,
  EksFleetNodes,
  EksFleetVolume,
  FanOut,
  FleetExport,
  FsCacheClientLaunchTemplate,
  MountHelper,
  MountSource,
  OriginFileSystem,
  SeedSource,
} from 'cdk-efs-cache';

const outdir = process.argv[2];
if (!outdir) throw new Error('usage: node consumer-app.js OUTDIR');
const app = new App({ outdir });

// The composed construct, as the sample stack uses it, and the seeders.
const composed = new Stack(app, 'Consumer');
const vpc = new ec2.Vpc(composed, 'Vpc', { maxAzs: 2, natGateways: 1 });
const alarmTopic = new sns.Topic(composed, 'Alarms', { enforceSSL: true });
const shared = new CachedFileSystem(composed, 'SharedData', {
  vpc,
  cacheFleet: { capacity: Capacity.nodes(2), warming: { paths: ['/efs/models'] } },
  monitoring: { alarmTopic },
});
const clients = shared.addClientLaunchTemplate('Clients');
shared.addClientLaunchTemplate('DirectClients', {
  source: MountSource.fileSystem(shared.originFileSystem.fileSystem),
  instanceType: new ec2.InstanceType('c7g.xlarge'),
  diskCache: DiskCache.ebs(),
});
new autoscaling.AutoScalingGroup(composed, 'ClientGroup', {
  vpc,
  launchTemplate: clients.launchTemplate,
  minCapacity: 1,
  maxCapacity: 4,
});
new DataSeeder(composed, 'SeedFromBucket', {
  vpc,
  fileSystem: shared.originFileSystem.fileSystem,
  source: SeedSource.s3(s3.Bucket.fromBucketName(composed, 'Datasets', 'example-datasets'), 'train/'),
  targetPath: '/datasets/train',
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'consumer-data-'));
fs.writeFileSync(path.join(dataDir, 'hello.txt'), 'hello\n');
new DataSeeder(composed, 'SeedFromAsset', {
  vpc,
  fileSystem: shared.originFileSystem.fileSystem,
  source: SeedSource.asset(dataDir),
  targetPath: '/datasets/small',
  workers: 8,
});

// Each tier on its own.
const tiers = new Stack(app, 'ConsumerTiers');
const vpc2 = new ec2.Vpc(tiers, 'Vpc', { maxAzs: 2, natGateways: 1 });
const origin = new OriginFileSystem(tiers, 'Origin', { vpc: vpc2 });
new FsCacheClientLaunchTemplate(tiers, 'Readers', {
  vpc: vpc2,
  source: MountSource.fileSystem(origin.fileSystem),
  instanceType: new ec2.InstanceType('c6gd.4xlarge'),
});
const imported = new OriginFileSystem(tiers, 'Imported', {
  vpc: vpc2,
  fileSystem: efs.FileSystem.fromFileSystemAttributes(tiers, 'Existing', {
    fileSystemId: 'fs-0123456789abcdef0',
    securityGroup: ec2.SecurityGroup.fromSecurityGroupId(tiers, 'ExistingSg', 'sg-0123456789abcdef0'),
  }),
});
const fleet = new CacheFleet(tiers, 'Fleet', {
  vpc: vpc2,
  origin: CacheOrigin.efs(imported.fileSystem, { mountHelper: MountHelper.EFS_UTILS }),
  fanOut: FanOut.networkLoadBalancer(),
  capacity: Capacity.nodes(2),
  instanceType: new ec2.InstanceType('c6in.8xlarge'),
});
const fleetReaders = new FsCacheClientLaunchTemplate(tiers, 'FleetReaders', { vpc: vpc2, source: MountSource.cacheFleet(fleet) });
const dashboard = new CacheDashboard(tiers, 'Dashboard', { originFileSystem: imported, cacheFleet: fleet });
dashboard.addClients(fleetReaders);
// Containers read the same fleet: an ECS service on EC2 capacity, and a cluster of the user's on EKS (imported).
const ecsCluster = new ecs.Cluster(tiers, 'Containers', { vpc: vpc2 });
// Its container instances are FS-Cache clients of the fleet, so the site's volume keeps a disk cache on each host.
const ecsHosts = new FsCacheClientLaunchTemplate(tiers, 'EcsHosts', {
  vpc: vpc2, source: MountSource.cacheFleet(fleet), instanceType: new ec2.InstanceType('c6gd.2xlarge'),
  machineImage: ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.ARM),
});
new EcsFleetCapacity(tiers, 'EcsCapacity', { cluster: ecsCluster, hosts: ecsHosts, maxCapacity: 2 });
const site = new ecs.Ec2TaskDefinition(tiers, 'Site');
const web = site.addContainer('Web', { image: ecs.ContainerImage.fromRegistry('public.ecr.aws/nginx/nginx:stable'), memoryLimitMiB: 512 });
new EcsFleetVolume(tiers, 'SiteVolume', { taskDefinition: site, source: FleetExport.cacheFleet(fleet, { fsCache: true }), clients: [ecsHosts] })
  .addMountPoint(web, '/usr/share/nginx/html');
new ecs.Ec2Service(tiers, 'SiteService', { cluster: ecsCluster, taskDefinition: site });
const eksCluster = eks.Cluster.fromClusterAttributes(tiers, 'Apps', {
  clusterName: 'apps', kubectlRoleArn: 'arn:aws:iam::123456789012:role/kubectl', vpc: vpc2,
  clusterEndpoint: 'https://0123456789ABCDEF0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com', clusterCertificateAuthorityData: 'Q0VSVElGSUNBVEU=',
  clusterSecurityGroupId: 'sg-0123456789abcdef0',
});
// Its nodes are FS-Cache clients of the fleet too (EksFleetNodes), on the EKS-optimized Amazon Linux 2023 image.
const eksNodes = new FsCacheClientLaunchTemplate(tiers, 'EksNodes', {
  vpc: vpc2, source: MountSource.cacheFleet(fleet), machineImage: EksFleetNodes.amazonLinux2023Image('1.33', ec2.InstanceArchitecture.X86_64),
});
new EksFleetNodes(tiers, 'EksNodeGroup', { cluster: eksCluster, hosts: eksNodes, serviceIpv4Cidr: '172.20.0.0/16', maxCapacity: 3 });
new EksFleetVolume(tiers, 'AppVolume', { source: FleetExport.cacheFleet(fleet, { fsCache: true }), cluster: eksCluster, clients: [eksNodes] });

const assembly = app.synth();
fs.rmSync(dataDir, { recursive: true, force: true });

// What each stack must hold, by resource type: only types this library creates, so the counts do not depend on
// aws-cdk-lib's own defaults.
const expected: Record<string, Record<string, number>> = {
  Consumer: {
    'AWS::EFS::FileSystem': 1,
    'AWS::EFS::MountTarget': 2,
    'AWS::EC2::LaunchTemplate': 3, // one for the fleet's nodes, two client groups
    'AWS::AutoScaling::AutoScalingGroup': 3, // one per cache node, the client group
    'AWS::Route53::HostedZone': 1,
    'AWS::EC2::Instance': 2, // the seeders
    'AWS::CloudWatch::Dashboard': 1,
  },
  ConsumerTiers: {
    'AWS::EFS::FileSystem': 1,
    'AWS::EFS::MountTarget': 2,
    'AWS::EC2::LaunchTemplate': 5, // one for the fleet's nodes, two client groups, the ECS container instances, the EKS nodes
    'AWS::AutoScaling::AutoScalingGroup': 4, // the fleet's two nodes, the ECS cluster's capacity (EcsFleetCapacity), the EKS nodes
    'AWS::ECS::CapacityProvider': 1, // EcsFleetCapacity's
    'AWS::EKS::AccessEntry': 1, // the EKS nodes' role (EksFleetNodes)
    'AWS::ElasticLoadBalancingV2::LoadBalancer': 1,
    'AWS::Route53::HostedZone': 0,
    'AWS::CloudWatch::Dashboard': 1,
    'AWS::ECS::TaskDefinition': 1, // the ECS service's, with the fleet's volume
    'Custom::AWSCDK-EKS-KubernetesResource': 1, // the PersistentVolume and its claim, applied to the EKS cluster
  },
};
interface Resource { readonly Type: string; readonly Properties: Record<string, any> }
const failures: string[] = [];
const summary: string[] = [];
for (const [stackName, counts] of Object.entries(expected)) {
  const artifact = assembly.getStackByName(stackName);
  const resources = Object.values<Resource>(artifact.template.Resources);
  const count = (type: string) => resources.filter((r) => r.Type === type).length;
  for (const [type, n] of Object.entries(counts)) {
    if (count(type) !== n) failures.push(`${stackName}: ${count(type)} ${type}, expected ${n}`);
  }
  const alarms = count('AWS::CloudWatch::Alarm');
  if (alarms === 0) failures.push(`${stackName}: no CloudWatch alarm`);
  // Every launch template and instance carries a bootstrap rendered from the package's assets/: the parameter
  // header, then the loader of its code, a file asset staged in the cloud assembly under the key the user data names,
  // with the sha256 it names, that starts with assets/lib/common.sh.
  for (const r of resources.filter((x) => x.Type === 'AWS::EC2::LaunchTemplate' || x.Type === 'AWS::EC2::Instance')) {
    const userData = JSON.stringify((r.Properties.LaunchTemplateData ?? r.Properties).UserData) ?? '';
    const key = /EFSC_CODE_KEY='([0-9a-f]{64}\.sh)'/.exec(userData)?.[1];
    const sha = /EFSC_CODE_SHA256='([0-9a-f]{64})'/.exec(userData)?.[1];
    const file = key ? path.join(outdir, `asset.${key}`) : '';
    const code = file && fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (!userData.includes('set -a\\nEFSC_') || !userData.includes('eval \\"$efs_cache_code\\"') || !code.includes("printf 'efs-cache: ") ||
      crypto.createHash('sha256').update(code).digest('hex') !== sha) {
      failures.push(`${stackName}: a ${r.Type} without the rendered bootstrap and its code asset (${key ?? 'no key'})`);
    }
  }
  for (const m of artifact.messages.filter((x) => x.level === 'error')) failures.push(`${stackName}: error at ${m.id}: ${m.entry.data}`);
  summary.push(`${stackName} ${resources.length} resources (${alarms} alarms)`);
}
// The ECS task's volume is the fleet's export over NFS; the EKS manifest holds a PersistentVolume and its claim.
const tierResources = Object.values<Resource>(assembly.getStackByName('ConsumerTiers').template.Resources);
const taskVolumes = tierResources.filter((r) => r.Type === 'AWS::ECS::TaskDefinition').flatMap((r) => r.Properties.Volumes ?? []);
if (taskVolumes.map((v: any) => v.DockerVolumeConfiguration?.DriverOpts?.type).join() !== 'nfs') failures.push('ConsumerTiers: the task has no NFS volume');
const manifests = JSON.stringify(tierResources.filter((r) => r.Type === 'Custom::AWSCDK-EKS-KubernetesResource').map((r) => r.Properties.Manifest));
if (!manifests.includes('PersistentVolumeClaim') || !manifests.includes('ReadOnlyMany')) failures.push('ConsumerTiers: no read-only PersistentVolume and claim');
// The EKS nodes boot a MIME document: nodeadm's NodeConfig, then the bootstrap and its gate.
const mime = tierResources.filter((r) => r.Type === 'AWS::EC2::LaunchTemplate').map((r) => JSON.stringify(r.Properties.LaunchTemplateData.UserData))
  .filter((u) => u.includes('MIME-Version: 1.0'));
if (mime.length !== 1 || !mime[0].includes('Content-Type: application/node.eks.aws') || !mime[0].includes('name: \\"apps\\"')) {
  failures.push(`ConsumerTiers: ${mime.length} EKS node user data with the cluster's NodeConfig, expected 1`);
}
// The asset seeder's directory is staged in the cloud assembly as a zip asset.
interface FileAsset { readonly source: { readonly path: string; readonly packaging: string } }
const fileAssets = Object.values<FileAsset>(JSON.parse(fs.readFileSync(path.join(outdir, 'Consumer.assets.json'), 'utf8')).files);
const staged = fileAssets.filter((a) => a.source.packaging === 'zip' && fs.existsSync(path.join(outdir, a.source.path, 'hello.txt')));
if (staged.length !== 1) failures.push(`Consumer: ${staged.length} staged zip assets with the seeder's directory, expected 1`);

/** The installed version of a package: the nearest package.json named `pkg` above its entry point. */
function version(pkg: string): string {
  for (let dir = path.dirname(require.resolve(pkg)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    const manifest = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined;
    if (manifest?.name === pkg) return manifest.version;
  }
  throw new Error(`no package.json of ${pkg}`);
}
const versions = `cdk-efs-cache ${version('cdk-efs-cache')}, aws-cdk-lib ${version('aws-cdk-lib')}, constructs ${version('constructs')}`;
if (failures.length > 0) {
  console.error(`consumer app (${versions}): FAIL\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`consumer app (${versions}): ${summary.join('; ')}`);
