import { App, Stack, Validations } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { sampleNetwork, SampleStack } from '../../../bin/sample-stack';
import {
  CachedFileSystem,
  CacheFleet,
  CacheFleetOptions,
  CacheOrigin,
  Capacity,
  ClientLaunchTemplateOptions,
  DataSeeder,
  DiskCache,
  EcsFleetCapacity,
  EcsFleetVolume,
  EksFleetNodes,
  EksFleetVolume,
  FanOut,
  FleetExport,
  FsCacheClientLaunchTemplate,
  ICacheFleet,
  Mirror,
  MountSource,
  NfsVersion,
  SeedSource,
} from '../../../lib';

/** One configuration of the gates: a name and a function that builds its stack in the given App. */
export interface GateConfig {
  readonly name: string;
  readonly build: (app: App) => Stack;
}

/** A client template's options, whose `source` is made from the CachedFileSystem (its tiers exist once it is built). */
type ClientVariant = Omit<ClientLaunchTemplateOptions, 'source'> & { readonly source?: (cfs: CachedFileSystem) => MountSource };

/** The cache fleet of the variant's CachedFileSystem (the default source when it has one). */
const viaFleet = (cfs: CachedFileSystem) => MountSource.cacheFleet(cfs.cacheFleet!);
/** The origin file system of the variant's CachedFileSystem, directly. */
const direct = (cfs: CachedFileSystem) => MountSource.fileSystem(cfs.originFileSystem.fileSystem);

interface Variant {
  /** The cache fleet, or none. */
  readonly fleet?: CacheFleetOptions;
  /** Client launch templates to add (each with its own options). */
  readonly clients?: ClientVariant[];
  /** Use an imported EFS instead of a new one. */
  readonly importedOrigin?: boolean;
  /** A DataSeeder that loads an S3 prefix into the file system. */
  readonly seeded?: boolean;
  /** A client template of its own (`FsCacheClientLaunchTemplate`) that mounts these mirrors of the fleet. */
  readonly mirrorClients?: string[];
  /**
   * Containers that read the fleet, and its first mirror if it has one: an ECS task definition for EC2 with a volume of
   * each (`EcsFleetVolume`), or an EKS PersistentVolume and claim of each (`EksFleetVolume`, as manifests), the
   * container instances' or nodes' security group let in. `ecs-capacity`: the container instances are FS-Cache clients
   * of the fleet on the ECS-optimized image, the capacity of an ECS cluster (`EcsFleetCapacity`). `eks-nodes`: the
   * nodes are FS-Cache clients of the fleet on the EKS-optimized image, nodes of an imported cluster (`EksFleetNodes`).
   */
  readonly containers?: 'ecs' | 'ecs-capacity' | 'eks' | 'eks-nodes';
}

/**
 * The sample's network (a two-AZ VPC with flow logs, an alarm topic: see `sampleNetwork`), a CachedFileSystem as
 * described whose alarms notify that topic, its clients, and an Auto Scaling group over the first client.
 */
function variant(name: string, v: Variant): GateConfig {
  return {
    name,
    build: (app: App) => {
      const stack = new Stack(app, name);
      const { vpc, alarmTopic } = sampleNetwork(stack);
      const originFileSystem = v.importedOrigin
        ? {
          fileSystem: efs.FileSystem.fromFileSystemAttributes(stack, 'Existing', {
            fileSystemId: 'fs-0123456789abcdef0',
            securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'ExistingSg', 'sg-0123456789abcdef0'),
          }),
        }
        : undefined;
      const cfs = new CachedFileSystem(stack, 'Data', { vpc, originFileSystem, cacheFleet: v.fleet, monitoring: { alarmTopic } });
      if (v.seeded) {
        const bucket = s3.Bucket.fromBucketName(stack, 'Datasets', 'example-datasets');
        new DataSeeder(stack, 'Seed', {
          vpc, fileSystem: cfs.originFileSystem.fileSystem, source: SeedSource.s3(bucket, 'train/'), targetPath: '/datasets/train',
        });
      }
      if (v.mirrorClients) {
        new FsCacheClientLaunchTemplate(stack, 'MirrorClients', {
          vpc, instanceType: x86Client, source: MountSource.cacheFleet(cfs.cacheFleet!, { mirrorPaths: v.mirrorClients }),
        });
      }
      if (v.containers) {
        const fleet = cfs.cacheFleet!;
        const hosts: ec2.IConnectable = v.containers === 'ecs-capacity' ? ecsCapacityHosts(stack, vpc, fleet)
          : v.containers === 'eks-nodes' ? eksNodeHosts(stack, vpc, fleet)
            : new ec2.SecurityGroup(stack, 'ContainerHosts', { vpc, description: 'The container instances or nodes' });
        const mirror = fleet.mirrorExports.slice(0, 1).map((m) => FleetExport.mirror(fleet, m.path));
        const sources = [FleetExport.cacheFleet(fleet, { fsCache: true }), ...mirror];
        if (v.containers === 'ecs' || v.containers === 'ecs-capacity') {
          const taskDefinition = new ecs.Ec2TaskDefinition(stack, 'Task');
          const container = taskDefinition.addContainer('App', { image: ecs.ContainerImage.fromRegistry('public.ecr.aws/docker/library/nginx:stable'), memoryLimitMiB: 512 });
          sources.forEach((source, i) => {
            new EcsFleetVolume(stack, `Volume${i}`, { taskDefinition, source, clients: [hosts] }).addMountPoint(container, `/srv/v${i}`);
          });
          // The user's own task definition, not the library's: what its container logs and its environment hold is theirs.
          const reason = 'The task definition of the gate stands for a user\'s: its logging and environment are theirs to choose.';
          Validations.of(taskDefinition).acknowledge(...['AwsSolutions-ECS2', 'AwsSolutions-ECS7'].map((id) => ({ id, reason })));
        } else {
          sources.forEach((source, i) => new EksFleetVolume(stack, `Volume${i}`, { source, claimNamespace: 'apps', clients: [hosts] }));
        }
      }
      (v.clients ?? []).forEach(({ source, ...options }, i) => {
        const lt = cfs.addClientLaunchTemplate(`Clients${i}`, { ...options, source: source?.(cfs) });
        if (i === 0) {
          const group = new autoscaling.AutoScalingGroup(stack, 'ClientGroup', {
            vpc,
            launchTemplate: lt.launchTemplate,
            minCapacity: 0,
            maxCapacity: 2,
          });
          Validations.of(group).acknowledge({ id: 'AwsSolutions-AS3', reason: 'A test group; nobody to notify.' });
        }
      });
      return stack;
    },
  };
}

/** FS-Cache clients of the fleet on the ECS-optimized image (Graviton), the capacity of an ECS cluster of their own. */
function ecsCapacityHosts(stack: Stack, vpc: ec2.IVpc, fleet: ICacheFleet): FsCacheClientLaunchTemplate {
  const cluster = new ecs.Cluster(stack, 'Cluster', { vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
  const hosts = new FsCacheClientLaunchTemplate(stack, 'ContainerHosts', {
    vpc, source: MountSource.cacheFleet(fleet), instanceType: armClient,
    machineImage: ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.ARM),
  });
  new EcsFleetCapacity(stack, 'Capacity', { cluster, hosts, minCapacity: 1, maxCapacity: 4 });
  return hosts;
}

/**
 * Nodes of an EKS cluster that are FS-Cache clients of the fleet (`EksFleetNodes`): the cluster is imported with its
 * endpoint and a certificate authority as long as an EKS cluster's (the base64 of a PEM certificate of a 2048-bit RSA
 * key, about 2,000 bytes), literals as `aws eks describe-cluster` gives them (an import would be refused: see
 * docs/containers.md).
 */
function eksNodeHosts(stack: Stack, vpc: ec2.IVpc, fleet: ICacheFleet): FsCacheClientLaunchTemplate {
  const cluster = eks.Cluster.fromClusterAttributes(stack, 'Cluster', {
    clusterName: 'apps', vpc, clusterEndpoint: 'https://0123456789ABCDEF0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com',
    clusterCertificateAuthorityData: 'Q0VSVElGSUNBVEU'.repeat(132), clusterSecurityGroupId: 'sg-0123456789abcdef0',
  });
  const hosts = new FsCacheClientLaunchTemplate(stack, 'ContainerHosts', {
    vpc, source: MountSource.cacheFleet(fleet), instanceType: armClient,
    machineImage: EksFleetNodes.amazonLinux2023Image('1.33', ec2.InstanceArchitecture.ARM_64),
  });
  new EksFleetNodes(stack, 'Nodes', { cluster, hosts, serviceIpv4Cidr: '172.20.0.0/16', minCapacity: 2, maxCapacity: 6 });
  return hosts;
}

/**
 * A fleet over an NFS server (`CacheOrigin.nfsServer`) on the sample's network, with FS-Cache clients through it:
 * outside the VPC (`cidr`: a network reached over a VPN, NFSv3 with lockd, mirrors and warming) or inside it
 * (`group`: the server's security group, NFSv4.2, the disk cache and an NLB).
 */
function nfsServerFleet(name: string, peer: 'cidr' | 'group'): GateConfig {
  return {
    name,
    build: (app: App) => {
      const stack = new Stack(app, name);
      const { vpc } = sampleNetwork(stack);
      const origin = peer === 'cidr'
        ? CacheOrigin.nfsServer({
          host: '192.168.10.5', exportPath: '/export/projects', nfsVersion: NfsVersion.NFS_V3, ports: { lockd: 4045 },
          peer: ec2.Peer.ipv4('192.168.10.0/24'),
        })
        : CacheOrigin.nfsServer({
          host: 'nas.example.internal', exportPath: '/', nfsVersion: NfsVersion.NFS_V4_2,
          peer: new ec2.SecurityGroup(stack, 'NasSecurityGroup', { vpc, description: 'The NFS server in the VPC', allowAllOutbound: false }),
        });
      const fleet = new CacheFleet(stack, 'Fleet', {
        vpc, origin, capacity: Capacity.nodes(2),
        ...(peer === 'cidr'
          ? { mirrors: [Mirror.path('/efs/app')], warming: { paths: ['/efs/models'] } }
          : { instanceType: new ec2.InstanceType('c7gd.16xlarge'), fanOut: FanOut.networkLoadBalancer() }),
      });
      new FsCacheClientLaunchTemplate(stack, 'Clients', {
        vpc, instanceType: armClient, source: MountSource.cacheFleet(fleet, peer === 'cidr' ? { mirrorPaths: ['/efs/app'] } : {}),
      });
      return stack;
    },
  };
}

const x86Node = new ec2.InstanceType('c6in.8xlarge');
const armNode = new ec2.InstanceType('c7gn.16xlarge');
const x86Client = new ec2.InstanceType('m6id.xlarge');
const armClient = new ec2.InstanceType('c6gd.2xlarge');
const ebsClient = new ec2.InstanceType('c7g.xlarge');

/** About a dozen configurations that together touch every option family once; not a cartesian product. */
export const MATRIX: GateConfig[] = [
  { name: 'Sample', build: (app) => new SampleStack(app, 'EfsCacheSample') },
  variant('OriginOnly', {}),
  variant('OriginSeeded', { seeded: true, clients: [{ instanceType: x86Client }] }),
  variant('OriginClientX86', { clients: [{ instanceType: x86Client }] }),
  variant('OriginClientArmEbs', {
    clients: [{ instanceType: ebsClient, diskCache: DiskCache.ebs() }],
  }),
  variant('Route53OneNode', { fleet: { capacity: Capacity.nodes(1), fanOut: FanOut.route53() }, clients: [{}] }),
  variant('Route53ThreeNodesX86', {
    fleet: { capacity: Capacity.nodes(3), fanOut: FanOut.route53(), instanceType: x86Node },
    clients: [{ instanceType: x86Client, source: viaFleet }],
  }),
  variant('Route53WarmArm', {
    fleet: { capacity: Capacity.nodes(2), instanceType: armNode, warming: { paths: ['/efs/models', '/efs/datasets/train'] } },
    clients: [
      { instanceType: armClient, source: viaFleet },
      { instanceType: x86Client, source: direct },
    ],
  }),
  // ENA Express on the nodes (their interface entry and the stable interface's attach) and on clients of the fleet.
  variant('Route53EnaExpress', {
    fleet: { enaExpress: true },
    clients: [{ instanceType: new ec2.InstanceType('m6id.8xlarge'), source: viaFleet, enaExpress: true }],
  }),
  variant('NlbOneNode', { fleet: { capacity: Capacity.nodes(1), fanOut: FanOut.networkLoadBalancer() }, clients: [{}] }),
  variant('NlbFourNodesX86Warm', {
    fleet: { capacity: Capacity.nodes(4), fanOut: FanOut.networkLoadBalancer(), instanceType: x86Node, warming: { paths: ['/efs'] } },
    clients: [{ instanceType: armClient }],
  }),
  // An NLB fleet with mirrors (a second listener, on the mirrors' port 2050) and clients that mount one.
  variant('NlbMirror', {
    fleet: { capacity: Capacity.nodes(2), fanOut: FanOut.networkLoadBalancer(), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www')] },
    mirrorClients: ['/efs/app'],
  }),
  // An elastic fleet (one Auto Scaling group with lifecycle hooks and scaling policies) with mirrors and warming.
  variant('NlbElasticMirrorWarm', {
    fleet: { fanOut: FanOut.networkLoadBalancer(), capacity: Capacity.elastic({ maxNodes: 8 }), mirrors: [Mirror.path('/efs/app')], warming: { paths: ['/efs/models'] } },
    clients: [{ instanceType: armClient, source: viaFleet }],
    mirrorClients: ['/efs/app'],
  }),
  variant('NlbEbsClient', {
    fleet: { fanOut: FanOut.networkLoadBalancer() },
    clients: [{ instanceType: ebsClient, diskCache: DiskCache.ebs(), source: viaFleet }],
  }),
  // The largest node user data: the disk cache (instance store), mirrors and warming together.
  variant('DiskCacheMirrorWarm', {
    fleet: { capacity: Capacity.nodes(2), instanceType: new ec2.InstanceType('c7gd.16xlarge'), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www')], warming: { paths: ['/efs/models'] } },
    clients: [{ instanceType: armClient, source: viaFleet }],
    mirrorClients: ['/efs/www'],
  }),
  // The largest of all: NFSv3, the disk cache, mirrors and warming (refused for size while the code was user data).
  variant('DiskCacheNfsV3MirrorWarm', {
    fleet: {
      capacity: Capacity.nodes(2), instanceType: new ec2.InstanceType('c7gd.16xlarge'), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www')], warming: { paths: ['/efs/models'] },
      clientNfsVersion: NfsVersion.NFS_V3,
    },
    clients: [{ instanceType: armClient, source: viaFleet }],
  }),
  variant('NfsV3MirrorWarm', {
    fleet: { capacity: Capacity.nodes(2), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www')], warming: { paths: ['/efs/models'] }, clientNfsVersion: NfsVersion.NFS_V3 },
    clients: [{ instanceType: armClient, source: viaFleet }],
  }),
  nfsServerFleet('NfsServerOutsideVpc', 'cidr'),
  nfsServerFleet('NfsServerInsideVpc', 'group'),
  variant('ImportedOriginClient', { importedOrigin: true, clients: [{ instanceType: x86Client }] }),
  // Containers: an ECS task (EC2) and EKS volumes of a fleet and of its mirror (the second over NFSv3).
  variant('ContainersEcs', { fleet: { capacity: Capacity.nodes(2), fanOut: FanOut.route53(), mirrors: [Mirror.path('/efs/app')] }, containers: 'ecs' }),
  variant('ContainersEcsCapacity', { fleet: { capacity: Capacity.nodes(2), mirrors: [Mirror.path('/efs/app')] }, containers: 'ecs-capacity' }),
  variant('ContainersEksNfsV3', {
    fleet: { capacity: Capacity.nodes(2), mirrors: [Mirror.path('/efs/app')], clientNfsVersion: NfsVersion.NFS_V3 }, containers: 'eks',
  }),
  variant('ContainersEksNodes', { fleet: { capacity: Capacity.nodes(2), mirrors: [Mirror.path('/efs/app')] }, containers: 'eks-nodes' }),
  variant('ImportedOriginFleet', {
    importedOrigin: true,
    fleet: { capacity: Capacity.nodes(2), fanOut: FanOut.route53(), warming: { paths: ['/efs/hot'] } },
    clients: [
      { instanceType: armClient, source: viaFleet },
      { instanceType: ebsClient, diskCache: DiskCache.ebs(), source: direct },
    ],
  }),
];
