/**
 * How the sweep builds each surface of the library with deploy-time values: for every surface the assembly lists, a
 * configuration that turns on what its leaves feed (warming, mirrors, a disk cache, the consumers of an imported
 * fleet), with each leaf the sweep tries replaced by a token. This table is the one hand-written part of the sweep:
 * a surface the assembly lists with no builder here fails the sweep.
 */
import { Duration, Fn, Size, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  AmazonLinux2023KernelLine, CacheDashboard, CachedFileSystem, CacheFleet, CacheFleetProps, CacheOrigin, Capacity, DataSeeder, DiskCache,
  EcsFleetCapacity, EcsFleetVolume, EksFleetNodes, EksFleetNodesProps, EksFleetVolume, FanOut, FleetExport, FsCacheClientLaunchTemplate,
  FsCacheClientLaunchTemplateProps, ICacheFleet, Mirror, MountSource, NfsVersion, NodeDiskCache, OriginFileSystem, SeedSource,
} from '../../lib';
import { Leaf, LeafKind } from './assembly';

/** What a builder is given: the stack, its VPC, and the leaves' values (tokens for the leaves tried now). */
export interface BuildContext {
  readonly stack: Stack;
  readonly vpc: ec2.Vpc;
  /** The value of the leaf at `path` (relative to the surface): its token when it is tried now, else `fallback`. */
  value<T>(path: string, fallback: T): T;
  /** `base` with every leaf tried now under `prefix` set to its token (structs and the first item of lists created as needed). */
  props<T extends object>(prefix: string, base: T): T;
}

/** The export name of the `Fn::ImportValue` standing for a leaf: the sweep resolves it to each hostile value. */
export function exportName(leaf: Leaf): string {
  return `SWEEP-${leaf.surface}-${leaf.path}`.replace(/[^A-Za-z0-9-]/g, '-');
}

/** A deploy-time value of the leaf's kind, whose text is whatever its import resolves to. */
export function tokenOf(leaf: Leaf): unknown {
  const imported = Fn.importValue(exportName(leaf));
  const number = () => Token.asNumber(imported);
  const byKind: Record<LeafKind, () => unknown> = {
    string: () => imported,
    number,
    list: () => [imported],
    duration: () => Duration.seconds(number()),
    size: () => Size.gibibytes(number()),
  };
  return byKind[leaf.kind]();
}

/** Sets `value` at `path` (`a.b[0].c`) inside a copy of `obj`. */
function setPath(obj: any, path: string[], value: unknown): any {
  const [head, ...rest] = path;
  const index = /^(.+)\[0\]$/.exec(head);
  const out = Array.isArray(obj) ? [...obj] : { ...obj };
  if (index) {
    const list = [...(out[index[1]] ?? [{}])];
    list[0] = rest.length ? setPath(list[0] ?? {}, rest, value) : value;
    out[index[1]] = list;
  } else {
    out[head] = rest.length ? setPath(out[head] ?? {}, rest, value) : value;
  }
  return out;
}

/** A BuildContext over `tried`: the leaves given as tokens in this build. */
export function buildContext(stack: Stack, vpc: ec2.Vpc, tried: readonly Leaf[]): BuildContext {
  // One token per leaf and build: a value given in two places (an imported mirror's path and the client's choice of
  // it) is the same deploy-time value, as a user's import of one output is.
  const tokens = new Map<Leaf, unknown>();
  const token = (l: Leaf) => tokens.get(l) ?? tokens.set(l, tokenOf(l)).get(l);
  return {
    stack, vpc,
    value: <T>(path: string, fallback: T) => {
      const leaf = tried.find((l) => l.path === path);
      return leaf ? token(leaf) as T : fallback;
    },
    props: <T extends object>(prefix: string, base: T) => tried
      .filter((l) => l.path.startsWith(`${prefix}.`))
      .reduce((acc, l) => setPath(acc, l.path.slice(prefix.length + 1).split('.'), token(l)), base),
  };
}

/** Leaves that are not the library's props but reach it from other constructs: attributes of what a user imports. */
export const IMPORTED_LEAVES: readonly Leaf[] = [
  { surface: 'efs.FileSystem.fromFileSystemAttributes', path: 'attrs.fileSystemId', kind: 'string' },
  { surface: 'eks.Cluster.fromClusterAttributes', path: 'attrs.clusterName', kind: 'string' },
  { surface: 'eks.Cluster.fromClusterAttributes', path: 'attrs.clusterEndpoint', kind: 'string' },
  { surface: 'eks.Cluster.fromClusterAttributes', path: 'attrs.clusterCertificateAuthorityData', kind: 'string' },
];

const efsOf = (c: BuildContext, id = 'Efs') => efs.FileSystem.fromFileSystemAttributes(c.stack, id, {
  fileSystemId: 'fs-0123456789abcdef0', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(c.stack, `${id}Sg`, 'sg-0123456789abcdef0'),
});
const bucketOf = (c: BuildContext, id: string) => s3.Bucket.fromBucketName(c.stack, id, `sweep-${id.toLowerCase()}`);
/** A fleet with every feature a client can use: NFSv4.1, a path mirror at /efs/app. */
const fleetOf = (c: BuildContext, props: Partial<CacheFleetProps> = {}, id = 'Fleet') => new CacheFleet(c.stack, id, {
  vpc: c.vpc, origin: CacheOrigin.efs(efsOf(c, `${id}Efs`)), mirrors: [Mirror.path('/efs/app')], ...props,
});
const clientOf = (c: BuildContext, props: Partial<FsCacheClientLaunchTemplateProps> = {}, id = 'Client') =>
  new FsCacheClientLaunchTemplate(c.stack, id, { vpc: c.vpc, source: MountSource.fileSystem(efsOf(c, `${id}Efs`)), ...props });
const taskOf = (c: BuildContext, id = 'Task') => new ecs.Ec2TaskDefinition(c.stack, id);
const appClusterOf = (c: BuildContext) => new eks.Cluster(c.stack, 'Cluster', {
  vpc: c.vpc, version: eks.KubernetesVersion.V1_33, defaultCapacity: 0,
  kubectlLayer: lambda.LayerVersion.fromLayerVersionArn(c.stack, 'Kubectl', 'arn:aws:lambda:us-east-1:123456789012:layer:kubectl:1'),
});
const EKS_IMAGE = (c: BuildContext) => EksFleetNodes.amazonLinux2023Image(c.value('kubernetesVersion', '1.33'), ec2.InstanceArchitecture.ARM_64);
/** EKS hosts (an FS-Cache client of `fleet` on an EKS image) joined to a cluster imported from `attrs`. */
function eksNodes(c: BuildContext, attrs: Partial<eks.ClusterAttributes>, nodeProps: Partial<EksFleetNodesProps> = {}) {
  const hosts = new FsCacheClientLaunchTemplate(c.stack, 'Hosts', {
    vpc: c.vpc, source: MountSource.cacheFleet(fleetOf(c)), instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: EKS_IMAGE(c),
  });
  const cluster = eks.Cluster.fromClusterAttributes(c.stack, 'Imported', {
    clusterName: 'apps', vpc: c.vpc, clusterEndpoint: 'https://0123456789ABCDEF.gr7.us-east-1.eks.amazonaws.com',
    clusterCertificateAuthorityData: 'Q0FEQVRB', clusterSecurityGroupId: 'sg-0123456789abcdef0', ...attrs,
  });
  new EksFleetNodes(c.stack, 'Nodes', { cluster, hosts, serviceIpv4Cidr: '172.20.0.0/16', ...nodeProps });
}

/** Every surface's builder, by the name the assembly (or IMPORTED_LEAVES) gives it. */
export const BUILDERS: Record<string, (c: BuildContext) => void> = {
  'AmazonLinux2023KernelLine.of': (c) => fleetOf(c, { kernel: AmazonLinux2023KernelLine.of(c.value('line', '6.12')) }),
  'CacheDashboard': (c) => new CacheDashboard(c.stack, 'Dashboard', c.props('props', {
    originFileSystem: new OriginFileSystem(c.stack, 'Origin', { vpc: c.vpc }), cacheFleet: fleetOf(c),
  })),
  'CacheFleet': (c) => new CacheFleet(c.stack, 'Fleet', c.props('props', {
    vpc: c.vpc, origin: CacheOrigin.efs(efsOf(c)), warming: { paths: ['/efs/data'] },
    mirrors: [Mirror.path('/efs/app'), Mirror.s3(bucketOf(c, 'Mirror'), 'site/')], mirroring: { changeMarker: '.published' },
    instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: NodeDiskCache.instanceStore(),
  })),
  'CacheFleet.fromCacheFleetAttributes': (c) => clientOf(c, { source: MountSource.cacheFleet(importedFleet(c), { mirrorPaths: [mirrorPathOf(c)] }) }),
  'CacheFleet.fromCacheFleetAttributes > EcsFleetVolume': (c) => {
    const fleet = importedFleet(c);
    new EcsFleetVolume(c.stack, 'EcsVolume', { taskDefinition: taskOf(c), source: FleetExport.cacheFleet(fleet) });
    new EcsFleetVolume(c.stack, 'EcsMirror', { taskDefinition: taskOf(c, 'MirrorTask'), source: FleetExport.mirror(fleet, mirrorPathOf(c)) });
  },
  'CacheFleet.fromCacheFleetAttributes > EksFleetVolume': (c) => {
    const fleet = importedFleet(c);
    const cluster = appClusterOf(c);
    new EksFleetVolume(c.stack, 'EksVolume', { source: FleetExport.cacheFleet(fleet), cluster });
    new EksFleetVolume(c.stack, 'EksMirror', { source: FleetExport.mirror(fleet, mirrorPathOf(c)), cluster });
  },
  'CachedFileSystem': (c) => new CachedFileSystem(c.stack, 'Data', c.props('props', {
    vpc: c.vpc, cacheFleet: { warming: { paths: ['/efs/data'] }, mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published' } },
    originFileSystem: { throughputMode: efs.ThroughputMode.PROVISIONED, provisionedThroughputPerSecond: Size.mebibytes(100) },
  })),
  'CacheOrigin.nfsServer': (c) => new CacheFleet(c.stack, 'Fleet', {
    vpc: c.vpc, mirrors: [Mirror.path('/efs/app')],
    origin: CacheOrigin.nfsServer(c.props('options', { host: 'nas.example.internal', exportPath: '/srv/data', nfsVersion: NfsVersion.NFS_V3, peer: ec2.Peer.ipv4('10.20.0.0/16') })),
  }),
  'Capacity.elastic': (c) => fleetOf(c, { capacity: Capacity.elastic(c.props('options', { maxNodes: 4 })) }),
  'Capacity.nodes': (c) => fleetOf(c, { capacity: Capacity.nodes(c.value('count', 2)) }),
  'DataSeeder': (c) => new DataSeeder(c.stack, 'Seeder', c.props('props', {
    vpc: c.vpc, fileSystem: efsOf(c), source: SeedSource.s3(bucketOf(c, 'Source'), 'data/'),
  })),
  'DiskCache.ebs': (c) => clientOf(c, { diskCache: DiskCache.ebs(c.props('options', {})) }),
  'DiskCache.instanceStore': (c) => clientOf(c, { diskCache: DiskCache.instanceStore(c.props('options', {})) }),
  'EcsFleetCapacity': (c) => {
    const cluster = new ecs.Cluster(c.stack, 'Cluster', { vpc: c.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
    const hosts = clientOf(c, { source: MountSource.cacheFleet(fleetOf(c)), instanceType: new ec2.InstanceType('m6gd.xlarge'),
      machineImage: ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.ARM) }, 'Hosts');
    new EcsFleetCapacity(c.stack, 'Capacity', c.props('props', { cluster, hosts }));
  },
  'EcsFleetVolume': (c) => new EcsFleetVolume(c.stack, 'Volume', c.props('props', { taskDefinition: taskOf(c), source: FleetExport.cacheFleet(fleetOf(c)) })),
  'EksFleetNodes': (c) => eksNodes(c, {}, c.props('props', {})),
  'EksFleetNodes.amazonLinux2023Image': (c) => eksNodes(c, {}),
  'EksFleetVolume': (c) => new EksFleetVolume(c.stack, 'Volume', c.props('props', { source: FleetExport.cacheFleet(fleetOf(c)), cluster: appClusterOf(c) })),
  'FanOut.networkLoadBalancer': (c) => fleetOf(c, { fanOut: FanOut.networkLoadBalancer(c.props('options', { accessLogs: { bucket: new s3.Bucket(c.stack, 'Logs') } })) }),
  'FanOut.route53': (c) => fleetOf(c, { fanOut: FanOut.route53(c.props('options', {})) }),
  'FleetExport.mirror': (c) => {
    const fleet = fleetOf(c);
    const source = FleetExport.mirror(fleet, c.value('mirrorPath', '/efs/app'));
    new EcsFleetVolume(c.stack, 'EcsVolume', { taskDefinition: taskOf(c), source });
    new EksFleetVolume(c.stack, 'EksVolume', { source, cluster: appClusterOf(c) });
  },
  'FsCacheClientLaunchTemplate': (c) => new FsCacheClientLaunchTemplate(c.stack, 'Client', c.props('props', {
    vpc: c.vpc, source: MountSource.fileSystem(efsOf(c)), diskCache: DiskCache.instanceStore(),
  })),
  'Mirror.path': (c) => fleetOf(c, { mirrors: [Mirror.path(c.value('path', '/efs/app'))] }),
  'Mirror.s3': (c) => fleetOf(c, { mirrors: [Mirror.s3(bucketOf(c, 'Mirror'), c.value('prefix', 'site/'), c.props('options', {}))] }),
  'MountSource.cacheFleet': (c) => clientOf(c, { source: MountSource.cacheFleet(fleetOf(c), c.props('options', { mirrorPaths: ['/efs/app'] })) }),
  'NodeDiskCache.instanceStore': (c) => fleetOf(c, {
    instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: NodeDiskCache.instanceStore(c.props('options', {})),
  }),
  'OriginFileSystem': (c) => new OriginFileSystem(c.stack, 'Origin', c.props('props', {
    vpc: c.vpc, throughputMode: efs.ThroughputMode.PROVISIONED, provisionedThroughputPerSecond: Size.mebibytes(100),
  })),
  'SeedSource.asset': (c) => new DataSeeder(c.stack, 'Seeder', { vpc: c.vpc, fileSystem: efsOf(c), source: SeedSource.asset(c.value('path', __dirname)) }),
  'SeedSource.instanceDirectory': (c) => new DataSeeder(c.stack, 'Seeder', {
    vpc: c.vpc, fileSystem: efsOf(c), source: SeedSource.instanceDirectory(c.value('path', '/srv/data')),
  }),
  'SeedSource.s3': (c) => new DataSeeder(c.stack, 'Seeder', { vpc: c.vpc, fileSystem: efsOf(c), source: SeedSource.s3(bucketOf(c, 'Source'), c.value('prefix', 'data/')) }),
  'efs.FileSystem.fromFileSystemAttributes': (c) => {
    const fileSystem = efs.FileSystem.fromFileSystemAttributes(c.stack, 'Efs', {
      fileSystemId: c.value('attrs.fileSystemId', 'fs-0123456789abcdef0'),
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(c.stack, 'EfsSg', 'sg-0123456789abcdef0'),
    });
    new CacheFleet(c.stack, 'Fleet', { vpc: c.vpc, origin: CacheOrigin.efs(fileSystem), mirrors: [Mirror.path('/efs/app')] });
    new FsCacheClientLaunchTemplate(c.stack, 'Client', { vpc: c.vpc, source: MountSource.fileSystem(fileSystem) });
    new DataSeeder(c.stack, 'Seeder', { vpc: c.vpc, fileSystem, source: SeedSource.instanceDirectory('/srv/data') });
  },
  'eks.Cluster.fromClusterAttributes': (c) => eksNodes(c, c.props('attrs', {})),
};

/** The imported fleet's mirror path, as consumers choose it: the same token as the import's when it is one. */
const mirrorPathOf = (c: BuildContext) => c.value('attrs.mirrorExports[0].path', '/efs/app');

/** A fleet imported by attributes, with its leaves (`attrs.*`) as tokens, and a mirror of /efs/app. */
function importedFleet(c: BuildContext): ICacheFleet {
  return CacheFleet.fromCacheFleetAttributes(c.stack, 'Imported', c.props('attrs', {
    endpoint: 'cache.example.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(c.stack, 'FleetSg', 'sg-0123456789abcdef0'),
    mirrorExports: [{ path: '/efs/app', exportPath: '/mirror/app' }],
  }));
}

/**
 * Surfaces swept again through other consumers: a fleet imported by attributes reaches EC2 clients, ECS volumes and
 * EKS volumes, each of which may refuse a value the others take.
 */
export const CONSUMER_VARIANTS: Record<string, string[]> = {
  'CacheFleet.fromCacheFleetAttributes': ['EcsFleetVolume', 'EksFleetVolume'],
};
