import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, CfnParameter, Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CachedFileSystem,
  CacheFleet,
  CacheFleetAttributes,
  CacheFleetProps,
  CacheOrigin,
  CacheStorage,
  ClientProtocol,
  ClientSource,
  DataSeeder,
  DataSeederProps,
  FanOutMode,
  FleetSourceOptions,
  FsCacheClientLaunchTemplate,
  FsCacheClientLaunchTemplateProps,
  ICacheFleet,
  MirrorStorage,
  MountHelper,
  MountSource,
  NfsServerOriginProps,
  NfsVersion,
  OriginFileSystem,
  OriginFileSystemProps,
  SeedSource,
} from '../lib';
import { importedFs, stackWithVpc } from './util';

/**
 * Every invalid or contradictory prop combination the constructs refuse (or warn about), in one table. Each case
 * builds in a fresh stack with a two-AZ VPC and names the message it expects: errors read `Invalid <prop>: <why>`
 * (lib/private/errors.ts), warnings start with `<prop>:`, so the user sees which prop to change.
 */
interface BadInput {
  /** What is wrong. */
  readonly name: string;
  /** Builds the construct(s) with the bad input. */
  readonly build: (stack: Stack, vpc: ec2.Vpc) => unknown;
  /** The error it throws, starting with `Invalid <prop>`. */
  readonly error?: RegExp;
  /** Or the warning it adds (anywhere in the stack), starting with `<prop>:`. */
  readonly warning?: RegExp;
  /** The stack's region, for input that is wrong only in some regions. @default - env-agnostic */
  readonly region?: string;
}

const origin = (props: (s: Stack) => Partial<OriginFileSystemProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new OriginFileSystem(stack, 'Origin', { vpc, ...props(stack) });
const fleet = (props: Partial<CacheFleetProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), ...props });
const client = (props: Partial<FsCacheClientLaunchTemplateProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(importedFs(stack)), ...props });
/** A client of an imported file system through the deprecated `fileSystem` prop, with more of the deprecated props. */
const deprecatedClient = (props: Partial<FsCacheClientLaunchTemplateProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, fileSystem: importedFs(stack), ...props });
const seeder = (props: Partial<DataSeederProps>, source: (s: Stack) => SeedSource = () => SeedSource.fromInstanceDirectory('/srv/data')) =>
  (stack: Stack, vpc: ec2.Vpc) => new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: source(stack), ...props });
/**
 * A fleet over an NFS server: NFSv3 at 10.20.0.5:/srv/data in 10.20.0.0/16 unless `origin` (or a function of the stack
 * that makes it) says otherwise, with more fleet props.
 */
const nfsFleet = (origin: Partial<NfsServerOriginProps> | ((s: Stack) => Partial<NfsServerOriginProps>), props: Partial<CacheFleetProps> = {}) =>
  (stack: Stack, vpc: ec2.Vpc) => new CacheFleet(stack, 'Fleet', {
    vpc,
    ...props,
    origin: CacheOrigin.nfsServer({
      host: '10.20.0.5', exportPath: '/srv/data', version: NfsVersion.NFS_V3, peer: ec2.Peer.ipv4('10.20.0.0/16'),
      ...(typeof origin === 'function' ? origin(stack) : origin),
    }),
  });
/** Two fleets over one file system on one VPC: the second with props of its own (given the first, if a function). */
const twoFleets = (second: Partial<CacheFleetProps> | ((first: CacheFleet) => Partial<CacheFleetProps>), first: Partial<CacheFleetProps> = {}) =>
  (stack: Stack, vpc: ec2.Vpc) => {
    const fileSystem = importedFs(stack);
    const a = new CacheFleet(stack, 'Fleet', { vpc, fileSystem, ...first });
    return new CacheFleet(stack, 'Fleet2', { vpc, fileSystem, ...(typeof second === 'function' ? second(a) : second) });
  };
/**
 * A seeder whose instance type CDK's own template validation (cdk.json `@aws-cdk/core:validateAgainstDefaultRules`,
 * rule E3628) refuses for the region, acknowledged: the row checks the library's warning, which apps without that
 * flag get too (the validation checks AWS::EC2::Instance, not the launch templates of nodes and clients).
 */
const seederInRegion = (props: Partial<DataSeederProps>) => (stack: Stack, vpc: ec2.Vpc) => {
  const s = seeder(props)(stack, vpc);
  Validations.of(s).acknowledge({ id: 'CloudFormation-Validate::E3628', reason: 'the row checks the library\'s own warning' });
  return s;
};
const imported = (s: Stack) => efs.FileSystem.fromFileSystemAttributes(s, 'Fs', {
  fileSystemId: 'fs-0123456789abcdef0',
  securityGroup: ec2.SecurityGroup.fromSecurityGroupId(s, 'Sg', 'sg-0123456789abcdef0'),
});
/** A fleet of another stack or app, known by its attributes (`CacheFleet.fromCacheFleetAttributes`). */
const importedFleet = (stack: Stack, attrs: Partial<CacheFleetAttributes> = {}) => CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
  endpoint: 'cache.efs-cache.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'), ...attrs,
});
const FSIDS = ['0f6a1b2c-3d4e-5f60-8172-93a4b5c6d7e8', '1f6a1b2c-3d4e-5f60-8172-93a4b5c6d7e8'];
/** Imported fleet attributes with these mirrors ([path, exportPath, fsid?]). */
const importedMirrors = (...mirrors: [string, string, string?][]) => (stack: Stack) =>
  importedFleet(stack, { mirrors: mirrors.map(([path, exportPath, fsid], i) => ({ path, exportPath, fsid: fsid ?? FSIDS[i] })) });
/** Clients of a fleet with mirrors /efs/app and /efs/www/vendor, mounting `mirrorPaths` with the given client props. */
const mirrorClient = (options: FleetSourceOptions, props: Partial<FsCacheClientLaunchTemplateProps> = {}) => (stack: Stack, vpc: ec2.Vpc) => {
  const f = new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app', '/efs/www/vendor'] });
  return new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(f, options), ...props });
};
/** Clients of a fleet of the user's own making (an ICacheFleet), whose mirrors no CacheFleet would have. */
const ownFleetClient = (mirrors: [string, string][]) => (stack: Stack, vpc: ec2.Vpc) => {
  const base = importedFleet(stack);
  const own: ICacheFleet = Object.assign(Object.create(base), {
    mirrors: mirrors.map(([path, exportPath], i) => ({ path, exportPath, fsid: FSIDS[i] })),
  });
  return new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(own, { mirrorPaths: mirrors.map(([p]) => p) }) });
};
/** A VPC with isolated subnets only (no NAT, no internet gateway), in `azs` AZs. */
const isolatedVpc = (stack: Stack, azs = 2) => new ec2.Vpc(stack, 'Isolated', {
  maxAzs: azs, natGateways: 0, subnetConfiguration: [{ name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
});
/** A VPC with public, private-with-egress and isolated subnets. */
const mixedVpc = (stack: Stack) => new ec2.Vpc(stack, 'Mixed', {
  maxAzs: 2,
  natGateways: 1,
  subnetConfiguration: [
    { name: 'pub', subnetType: ec2.SubnetType.PUBLIC },
    { name: 'app', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    { name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
  ],
});
/** An image for types whose architecture CDK cannot read from the name (it throws for the default image's lookup). */
const al2023x86 = ec2.MachineImage.fromSsmParameter('/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64');
/** A one-file directory; returns the file's path. */
function aFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-bad-'));
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
  return path.join(dir, 'a.txt');
}

const CASES: BadInput[] = [
  // OriginFileSystem
  { name: 'origin: DESTROY without confirmation', build: origin(() => ({ removalPolicy: RemovalPolicy.DESTROY })), error: /^Invalid removalPolicy: .*confirmDataLoss: true/ },
  { name: 'origin: SNAPSHOT', build: origin(() => ({ removalPolicy: RemovalPolicy.SNAPSHOT })), error: /^Invalid removalPolicy: EFS does not support RemovalPolicy.SNAPSHOT/ },
  { name: 'origin: confirmDataLoss without DESTROY', build: origin(() => ({ confirmDataLoss: true })), error: /^Invalid confirmDataLoss: only has a meaning with removalPolicy/ },
  { name: 'origin: Max I/O with Elastic', build: origin(() => ({ performanceMode: efs.PerformanceMode.MAX_IO })), error: /^Invalid performanceMode: Max I\/O cannot be combined with Elastic/ },
  { name: 'origin: Provisioned without a rate', build: origin(() => ({ throughputMode: efs.ThroughputMode.PROVISIONED })), error: /^Invalid provisionedThroughputPerSecond: is required/ },
  { name: 'origin: a rate without Provisioned', build: origin(() => ({ provisionedThroughputPerSecond: Size.mebibytes(100) })), error: /^Invalid provisionedThroughputPerSecond: is only valid with ThroughputMode.PROVISIONED/ },
  { name: 'origin: import with a removal policy', build: origin((s) => ({ fileSystem: imported(s), removalPolicy: RemovalPolicy.RETAIN })), error: /^Invalid removalPolicy: applies only to a file system created here, but fileSystem imports/ },
  { name: 'origin: import with a key', build: origin((s) => ({ fileSystem: imported(s), kmsKey: new kms.Key(s, 'K') })), error: /^Invalid kmsKey: applies only to a file system created here/ },

  // CachedFileSystem
  { name: 'composition: origin options are checked too', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, origin: { removalPolicy: RemovalPolicy.DESTROY } }), error: /^Invalid removalPolicy: .*confirmDataLoss/ },
  { name: 'composition: monitoring options with dashboard: false', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, dashboard: false, monitoring: {} }), error: /^Invalid monitoring: configures the dashboard and alarms, but dashboard is false/ },
  { name: 'composition: ClientSource.CACHE_FLEET without a fleet', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { source: ClientSource.CACHE_FLEET }), error: /^Invalid source: ClientSource.CACHE_FLEET needs a cache fleet/ },
  {
    name: 'composition: a fleet subnet in an AZ without a mount target',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', {
      vpc,
      vpcSubnets: { subnets: [vpc.privateSubnets[0]] },
      cacheFleet: { vpcSubnets: { subnets: [vpc.privateSubnets[1]] } },
    }),
    error: /^Invalid cacheFleet.vpcSubnets: subnet .* no mount target/,
  },
  { name: 'composition: a fleet in an isolated-only VPC (warning)', build: (stack) => new CachedFileSystem(stack, 'Data', { vpc: isolatedVpc(stack), cacheFleet: { nodeCount: 1 } }), warning: /^vpcSubnets: the instances of .*\/Data\/CacheFleet run in isolated subnets/ },
  { name: 'composition: clients of an isolated-only VPC (warning)', build: (stack) => new CachedFileSystem(stack, 'Data', { vpc: isolatedVpc(stack) }).addClientLaunchTemplate('C'), warning: /^vpc: the instances of .*\/Data\/C run in isolated subnets/ },
  { name: 'composition: the fleet\'s default type where it is not offered (warning)', region: 'eu-central-1', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { nodeCount: 1 } }), warning: /^instanceType: the default c7gn.16xlarge is not offered in eu-central-1/ },
  { name: 'composition: the clients\' default type where it is not offered (warning)', region: 'eu-west-3', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C'), warning: /^instanceType: the default m6id.xlarge is not offered in eu-west-3/ },
  { name: 'alarms: PercentIOLimit threshold over 100', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { percentIoLimitThreshold: 150 } }), error: /^Invalid percentIoLimitThreshold: is a percentage, more than 0 and at most 100, got 150/ },
  { name: 'alarms: throughput threshold of 0', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { throughputUtilizationThreshold: 0 } }), error: /^Invalid throughputUtilizationThreshold: is a percentage/ },
  { name: 'alarms: burst credit threshold of 0 bytes', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, monitoring: { burstCreditBalanceThreshold: Size.bytes(0) } }), error: /^Invalid burstCreditBalanceThreshold: must be more than 0 bytes/ },

  // CacheFleet
  { name: 'fleet: zero nodes', build: fleet({ nodeCount: 0 }), error: /^Invalid nodeCount: a cache fleet needs at least one node/ },
  { name: 'fleet: a fraction of a node', build: fleet({ nodeCount: 1.5 }), error: /^Invalid nodeCount: must be a whole number/ },
  { name: 'fleet: more nodes than one stack holds', build: fleet({ nodeCount: 129 }), error: /^Invalid nodeCount: at most 128 nodes fit in one stack, got 129: .*500 resources per stack/ },
  { name: 'fleet: a relative export path', build: fleet({ exportPath: 'efs' }), error: /^Invalid exportPath: must be an absolute path/ },
  { name: 'fleet: / as export path', build: fleet({ exportPath: '/' }), error: /^Invalid exportPath/ },
  { name: 'fleet: a relative origin path', build: fleet({ originPath: 'data' }), error: /^Invalid originPath: must be an absolute path in the file system/ },
  { name: 'fleet: a warm path outside the export', build: fleet({ warmPaths: ['/data/x'] }), error: /^Invalid warmPaths: '\/data\/x' is outside the export/ },
  { name: 'fleet: a relative warm path', build: fleet({ warmPaths: ['x'] }), error: /^Invalid warmPaths: 'x' is not an absolute path/ },
  { name: 'fleet: re-warming with nothing to warm', build: fleet({ rewarmInterval: Duration.hours(1) }), error: /^Invalid rewarmInterval: needs warmPaths/ },
  { name: 'fleet: warm workers with nothing to warm', build: fleet({ warmWorkers: 4 }), error: /^Invalid warmWorkers: needs warmPaths/ },
  { name: 'fleet: a mirror path outside the export', build: fleet({ mirrorPaths: ['/data/app'] }), error: /^Invalid mirrorPaths: '\/data\/app' is not under the export/ },
  { name: 'fleet: the whole export as a mirror', build: fleet({ mirrorPaths: ['/efs'] }), error: /^Invalid mirrorPaths: '\/efs' is not under the export/ },
  { name: 'fleet: a relative mirror path', build: fleet({ mirrorPaths: ['app'] }), error: /^Invalid mirrorPaths: 'app' is not an absolute path/ },
  { name: 'fleet: a mirror path with ..', build: fleet({ mirrorPaths: ['/efs/../etc'] }), error: /^Invalid mirrorPaths: '\/efs\/\.\.\/etc' is not an absolute path/ },
  { name: 'fleet: a mirror inside another', build: fleet({ mirrorPaths: ['/efs/app', '/efs/app/lib'] }), error: /^Invalid mirrorPaths: '\/efs\/app\/lib' is inside '\/efs\/app'/ },
  { name: 'fleet: a mirror path twice', build: fleet({ mirrorPaths: ['/efs/app', '/efs/app'] }), error: /^Invalid mirrorPaths: lists a path twice/ },
  { name: 'fleet: a mirror interval with nothing to mirror', build: fleet({ mirrorInterval: Duration.minutes(1) }), error: /^Invalid mirrorInterval: needs mirrorPaths/ },
  { name: 'fleet: a mirror storage with nothing to mirror', build: fleet({ mirrorStorage: MirrorStorage.MEMORY }), error: /^Invalid mirrorStorage: needs mirrorPaths/ },
  { name: 'fleet: mirrors on an instance store the nodes do not use', build: fleet({ mirrorPaths: ['/efs/app'], mirrorStorage: MirrorStorage.INSTANCE_STORE }), error: /^Invalid mirrorStorage: INSTANCE_STORE needs the second cache level/ },
  { name: 'fleet: a mirror size with nothing to mirror', build: fleet({ mirrorSize: Size.gibibytes(1) }), error: /^Invalid mirrorSize: needs mirrorPaths/ },
  { name: 'fleet: a mirror interval under 10 s', build: fleet({ mirrorPaths: ['/efs/app'], mirrorInterval: Duration.seconds(5) }), error: /^Invalid mirrorInterval: must be whole seconds from 10 seconds to 24 hours/ },
  { name: 'fleet: a mirror interval of part of a second', build: fleet({ mirrorPaths: ['/efs/app'], mirrorInterval: Duration.millis(10500) }), error: /^Invalid mirrorInterval: must be whole seconds/ },
  { name: 'fleet: a mirror size of part of a MiB', build: fleet({ mirrorPaths: ['/efs/app'], mirrorSize: Size.kibibytes(1536) }), error: /^Invalid mirrorSize: must be whole MiB/ },
  { name: 'fleet: a disk cache on a node type without instance store', build: fleet({ nodeDiskCache: true }), error: /^Invalid nodeDiskCache: c7gn\.16xlarge has no NVMe instance store/ },
  { name: 'fleet: a disk cache on a Xen type whose instance store is not NVMe', build: fleet({ nodeDiskCache: true, instanceType: new ec2.InstanceType('m3.xlarge') }), error: /^Invalid nodeDiskCache: m3\.xlarge has no NVMe instance store/ },
  { name: 'fleet: a disk cache device model with the disk cache off', build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: false, nodeDiskCacheDeviceModel: 'X' }), error: /^Invalid nodeDiskCacheDeviceModel: applies only with nodeDiskCache\. \(at / },
  { name: 'fleet: a disk cache device model on a type where it is off by default', build: fleet({ nodeDiskCacheDeviceModel: 'X' }), error: /^Invalid nodeDiskCacheDeviceModel: applies only with nodeDiskCache, which is off by default for c7gn\.16xlarge/ },
  { name: 'fleet: a disk cache device model with a newline', build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCacheDeviceModel: 'A\nB' }), error: /^Invalid nodeDiskCacheDeviceModel: must be printable ASCII/ },
  { name: 'fleet: a mirror sync timeout under 10 s', build: fleet({ mirrorPaths: ['/efs/app'], mirrorSyncTimeout: Duration.seconds(2) }), error: /^Invalid mirrorSyncTimeout: must be whole seconds from 10 seconds/ },
  { name: 'fleet: no mirror sync jobs', build: fleet({ mirrorPaths: ['/efs/app'], mirrorSyncWorkers: 0 }), error: /^Invalid mirrorSyncWorkers: must be a whole number from 1 to 64, got 0\./ },
  { name: 'fleet: mirror sync jobs with nothing to mirror', build: fleet({ mirrorSyncWorkers: 4 }), error: /^Invalid mirrorSyncWorkers: needs mirrorPaths/ },
  { name: 'fleet: a change marker with nothing to mirror', build: fleet({ mirrorChangeMarker: '.published' }), error: /^Invalid mirrorChangeMarker: needs mirrorPaths/ },
  { name: 'fleet: an absolute change marker', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '/efs/app/.published' }), error: /^Invalid mirrorChangeMarker: '\/efs\/app\/\.published' is not a path relative to each mirror's root/ },
  { name: 'fleet: a change marker above the mirror', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '../.published' }), error: /^Invalid mirrorChangeMarker: '\.\.\/\.published' is not a path relative/ },
  { name: 'fleet: a change marker with a . component', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: 'deploy/./done' }), error: /^Invalid mirrorChangeMarker: 'deploy\/\.\/done' is not a path relative/ },
  { name: 'fleet: an empty change marker', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '' }), error: /^Invalid mirrorChangeMarker: '' is not a path relative/ },
  { name: 'fleet: a change marker with a blank', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: 'a b' }), error: /^Invalid mirrorChangeMarker: 'a b' is not a path relative/ },
  { name: 'fleet: a change marker with an empty component', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: 'deploy//done' }), error: /^Invalid mirrorChangeMarker: 'deploy\/\/done' is not a path relative/ },
  { name: 'fleet: a change marker that is a directory path', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: 'deploy/' }), error: /^Invalid mirrorChangeMarker: 'deploy\/' is not a path relative/ },
  { name: 'fleet: a full sync interval without a change marker', build: fleet({ mirrorPaths: ['/efs/app'], mirrorFullSyncInterval: Duration.hours(2) }), error: /^Invalid mirrorFullSyncInterval: applies only with mirrorChangeMarker/ },
  { name: 'fleet: a full sync interval with nothing to mirror', build: fleet({ mirrorFullSyncInterval: Duration.hours(2) }), error: /^Invalid mirrorFullSyncInterval: needs mirrorPaths/ },
  { name: 'fleet: a full sync interval shorter than the mirror interval', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '.published', mirrorInterval: Duration.minutes(5), mirrorFullSyncInterval: Duration.minutes(2) }), error: /^Invalid mirrorFullSyncInterval: must be at least mirrorInterval \(5 minutes\), got 2 minutes\./ },
  { name: 'fleet: a mirror interval longer than the default full sync interval', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '.published', mirrorInterval: Duration.hours(2) }), error: /^Invalid mirrorFullSyncInterval: must be at least mirrorInterval \(2 hours\), got 1 hour\./ },
  { name: 'fleet: a full sync interval over 7 days', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '.published', mirrorFullSyncInterval: Duration.days(8) }), error: /^Invalid mirrorFullSyncInterval: must be whole seconds from 10 seconds to 7 days, got 8 days\./ },
  { name: 'fleet: a full sync interval of part of a second', build: fleet({ mirrorPaths: ['/efs/app'], mirrorChangeMarker: '.published', mirrorFullSyncInterval: Duration.millis(3600500) }), error: /^Invalid mirrorFullSyncInterval: must be whole seconds/ },
  { name: 'client: a cache device model with a newline (the fleet refuses it too)', build: client({ cacheDeviceModel: 'Amazon EC2 NVMe\nInstance Storage' }), error: /^Invalid cacheDeviceModel: must be printable ASCII without a trailing space, got 'Amazon EC2 NVMe\\nInstance Storage'\. \(at TestStack\/Client; in Python: cache_device_model\)$/ },
  { name: 'client: a cache device model with a trailing space', build: client({ cacheDeviceModel: 'Amazon EC2 NVMe Instance Storage ' }), error: /^Invalid cacheDeviceModel: must be printable ASCII without a trailing space/ },
  { name: 'client: a cache device model from a token', build: (stack, vpc) => client({ cacheDeviceModel: new CfnParameter(stack, 'Model').valueAsString })(stack, vpc), error: /^Invalid cacheDeviceModel: .*token/ },
  { name: 'client: a mirror without a fleet (deprecated props)', build: deprecatedClient({ mirrorPaths: ['/efs/app'] }), error: /^Invalid mirrorPaths: needs cacheFleet/ },
  { name: 'client: a mirror the fleet does not have (deprecated props)', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, cacheFleet: new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app'] }), mirrorPaths: ['/efs/lib'] }), error: /^Invalid mirrorPaths: '\/efs\/lib' is not a mirror of .*\/efs\/app/ },
  { name: 'client: a mirror mount point with nothing to mount (deprecated props)', build: deprecatedClient({ mirrorMountPoint: '/mnt/m' }), error: /^Invalid mirrorMountPoint: needs mirrorPaths/ },
  { name: 'fleet: exporting to everyone', build: fleet({ clientCidrs: ['0.0.0.0/0'] }), error: /^Invalid clientCidrs: 0.0.0.0\/0 would export to everyone/ },
  { name: 'fleet: an address instead of a CIDR block', build: fleet({ clientCidrs: ['10.0.0.1'] }), error: /^Invalid clientCidrs: '10.0.0.1' is not a CIDR block/ },
  { name: 'fleet: an empty client list', build: fleet({ clientCidrs: [] }), error: /^Invalid clientCidrs: is empty/ },
  { name: 'fleet: everyone as 0/0 shorthand', build: fleet({ clientCidrs: ['0/0'] }), error: /^Invalid clientCidrs: 0\/0 would export to everyone: a \/0 prefix matches every address/ },
  { name: 'fleet: everyone as a /0 of a private network', build: fleet({ clientCidrs: ['10.0.0.0/0'] }), error: /^Invalid clientCidrs: 10.0.0.0\/0 would export to everyone/ },
  { name: 'fleet: everyone as /00', build: fleet({ clientCidrs: ['10.0.0.0/00'] }), error: /^Invalid clientCidrs: 10.0.0.0\/00 would export to everyone/ },
  { name: 'fleet: everyone as an all-zero netmask', build: fleet({ clientCidrs: ['10.0.0.0/0.0.0.0'] }), error: /^Invalid clientCidrs: 10.0.0.0\/0.0.0.0 would export to everyone/ },
  { name: 'fleet: every IPv6 address (::/0)', build: fleet({ clientCidrs: ['::/0'] }), error: /^Invalid clientCidrs: ::\/0 would export to everyone/ },
  { name: 'fleet: every IPv6 address (::0/0)', build: fleet({ clientCidrs: ['10.1.0.0/16', '::0/0'] }), error: /^Invalid clientCidrs: ::0\/0 would export to everyone/ },
  { name: 'fleet: every IPv6 address (0000::/0)', build: fleet({ clientCidrs: ['0000::/0'] }), error: /^Invalid clientCidrs: 0000::\/0 would export to everyone/ },
  { name: 'fleet: two IPv4 halves cover everyone', build: fleet({ clientCidrs: ['0.0.0.0/1', '128.0.0.0/1'] }), error: /^Invalid clientCidrs: 0.0.0.0\/1, 128.0.0.0\/1 together would export to everyone: they cover every IPv4 address/ },
  { name: 'fleet: IPv4 quarters and a half cover everyone', build: fleet({ clientCidrs: ['192.0.0.0/2', '10.1.0.0/16', '0.0.0.0/1', '128.0.0.0/2'] }), error: /^Invalid clientCidrs: .* together would export to everyone: they cover every IPv4 address/ },
  { name: 'fleet: two IPv6 halves cover everyone', build: fleet({ clientCidrs: ['::/1', '8000::/1'] }), error: /^Invalid clientCidrs: ::\/1, 8000::\/1 together would export to everyone: they cover every IPv6 address/ },
  { name: 'fleet: an IPv4 prefix over 32', build: fleet({ clientCidrs: ['10.0.0.0/33'] }), error: /^Invalid clientCidrs: '10.0.0.0\/33' has an invalid prefix length '33': an IPv4 prefix is a whole number from 1 to 32/ },
  { name: 'fleet: a negative prefix', build: fleet({ clientCidrs: ['10.0.0.0/-1'] }), error: /^Invalid clientCidrs: '10.0.0.0\/-1' has an invalid prefix length/ },
  { name: 'fleet: an IPv6 prefix over 128', build: fleet({ clientCidrs: ['fd00::/129'] }), error: /^Invalid clientCidrs: 'fd00::\/129' has an invalid prefix length '129': an IPv6 prefix is a whole number from 1 to 128/ },
  { name: 'fleet: a prefix with a leading zero', build: fleet({ clientCidrs: ['10.0.0.0/08'] }), error: /^Invalid clientCidrs: '10.0.0.0\/08' has an invalid prefix length/ },
  { name: 'fleet: an octet over 255', build: fleet({ clientCidrs: ['999.1.1.1/8'] }), error: /^Invalid clientCidrs: '999.1.1.1\/8' is not a CIDR block: '999.1.1.1' is not an IPv4 address/ },
  { name: 'fleet: an octet with a leading zero (octal to inet_aton)', build: fleet({ clientCidrs: ['010.0.0.0/8'] }), error: /^Invalid clientCidrs: '010.0.0.0\/8' is not a CIDR block/ },
  { name: 'fleet: a shortened IPv4 address', build: fleet({ clientCidrs: ['10/8'] }), error: /^Invalid clientCidrs: '10\/8' is not a CIDR block/ },
  { name: 'fleet: an IPv6 address with two ::', build: fleet({ clientCidrs: ['fd00::1::/64'] }), error: /^Invalid clientCidrs: 'fd00::1::\/64' is not a CIDR block/ },
  { name: 'fleet: an IPv6 address with a zone', build: fleet({ clientCidrs: ['fe80::1%eth0/64'] }), error: /^Invalid clientCidrs: 'fe80::1%eth0\/64' is not a CIDR block/ },
  { name: 'fleet: garbage', build: fleet({ clientCidrs: ['10.1.0.0/16', 'my clients'] }), error: /^Invalid clientCidrs: 'my clients' is not a CIDR block: write address\/prefix length/ },
  { name: 'fleet: an IPv4 network with host bits set', build: fleet({ clientCidrs: ['10.0.0.1/8'] }), error: /^Invalid clientCidrs: '10.0.0.1\/8' has host bits set: the network is 10.0.0.0\/8; for the one address write 10.0.0.1\/32/ },
  { name: 'fleet: an IPv6 network with host bits set', build: fleet({ clientCidrs: ['fd00::1/64'] }), error: /^Invalid clientCidrs: 'fd00::1\/64' has host bits set: the network is fd00::\/64; for the one address write fd00::1\/128/ },
  { name: 'fleet: an IPv4-mapped IPv6 network', build: fleet({ clientCidrs: ['::ffff:10.0.0.0/104'] }), error: /^Invalid clientCidrs: '::ffff:10.0.0.0\/104' is an IPv4-mapped IPv6 network; write IPv4 clients as IPv4 \(10.0.0.0\/8\)/ },
  { name: 'fleet: zero nfsd threads', build: fleet({ nfsdThreads: 0 }), error: /^Invalid nfsdThreads/ },
  { name: 'fleet: an attribute cache timeout over an hour', build: fleet({ attributeCacheTimeout: Duration.hours(2) }), error: /^Invalid attributeCacheTimeout: must be between 0 and 60 minutes/ },
  { name: 'fleet: a bootstrap timeout past CloudFormation\'s 12 hours', build: fleet({ bootstrapTimeout: Duration.hours(13) }), error: /^Invalid bootstrapTimeout: must be whole seconds from 5 minutes to 12 hours, got 13 hours/ },
  { name: 'fleet: a bootstrap timeout too short to boot', build: fleet({ bootstrapTimeout: Duration.seconds(30) }), error: /^Invalid bootstrapTimeout/ },
  { name: 'fleet: a root volume smaller than the image', build: fleet({ rootVolumeSize: Size.gibibytes(4) }), error: /^Invalid rootVolumeSize: must be whole GiB from 8 to 16384, got 4 GiB/ },
  { name: 'fleet: a read-ahead of 1 TiB', build: fleet({ readAhead: Size.tebibytes(1) }), error: /^Invalid readAhead: must be whole KiB from 0 to 1 GiB/ },
  { name: 'fleet: an empty working set', build: fleet({ workingSetSize: Size.gibibytes(0) }), error: /^Invalid workingSetSize: must be more than 0 bytes/ },
  { name: 'fleet: an elastic fleet in isolated subnets (warning names S3 for the code and Auto Scaling)', build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: isolatedVpc(stack), fileSystem: importedFs(stack), fanOut: FanOutMode.NETWORK_LOAD_BALANCER, elastic: { maxNodes: 4 } }), warning: /^vpcSubnets: the instances of .*\/Fleet run in isolated subnets .*S3 \(the instances' code: a gateway endpoint\).*Auto Scaling \(an elastic node completes its lifecycle hooks: without it every node is abandoned\)/ },
  { name: 'fleet: isolated subnets by default (warning)', build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: isolatedVpc(stack), fileSystem: importedFs(stack) }), warning: /^vpcSubnets: the instances of .*\/Fleet run in isolated subnets .*package repositories.*CloudFormation.*EC2.*CloudWatch.*SSM/ },
  { name: 'fleet: isolated subnets chosen in a mixed VPC (warning)', build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: mixedVpc(stack), fileSystem: importedFs(stack), vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } }), warning: /^vpcSubnets: the instances of .*\/Fleet run in isolated subnets/ },
  { name: 'fleet: isolated subnets behind an NLB, metrics off (warning)', build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: isolatedVpc(stack, 1), fileSystem: importedFs(stack), fanOut: FanOutMode.NETWORK_LOAD_BALANCER, metrics: false }), warning: /^vpcSubnets: (?!.*EC2 \(attaching)(?!.*CloudWatch).*endpoints for the package repositories .*CloudFormation.*SSM, ssmmessages/ },
  { name: 'fleet: a node type of unknown memory (warning)', build: fleet({ instanceType: new ec2.InstanceType('x2gd.4xlarge') }), warning: /^instanceType: the memory of x2gd.4xlarge is not known here, so workingSetSize cannot be checked against its memory/ },
  { name: 'fleet: a burstable node type (warning)', build: fleet({ instanceType: new ec2.InstanceType('t4g.large'), workingSetSize: Size.gibibytes(100) }), warning: /^instanceType: the memory of t4g.large is not known here, so workingSetSize cannot be checked/ },
  { name: 'fleet: a Xen node type whose memory ratio differs (warning)', build: fleet({ instanceType: new ec2.InstanceType('c4.8xlarge') }), warning: /^instanceType: the memory of c4.8xlarge is not known here/ },
  { name: 'fleet: a bare-metal node type (warning)', build: fleet({ instanceType: new ec2.InstanceType('c7gn.metal') }), warning: /^instanceType: the vCPUs and memory of c7gn.metal are not known here, so each node runs 64 nfsd threads by default \(set nfsdThreads to size them\), and workingSetSize cannot be checked/ },
  { name: 'fleet: a node type name that does not parse (warning)', build: fleet({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge'), machineImage: al2023x86 }), warning: /^instanceType: the vCPUs and memory of u-6tb1.112xlarge are not known here, so each node runs 64 nfsd threads/ },
  { name: 'fleet: unknown vCPUs with nfsdThreads given (warning)', build: fleet({ instanceType: new ec2.InstanceType('m7i.metal-48xl'), nfsdThreads: 192 }), warning: /^instanceType: the vCPUs and memory of m7i.metal-48xl are not known here, so workingSetSize cannot be checked/ },
  { name: 'fleet: the default type where it is not offered (warning)', region: 'ap-south-1', build: fleet({}), warning: /^instanceType: the default c7gn.16xlarge is not offered in ap-south-1 \(per cfn-lint [0-9.]+ .*\), so instances would fail to launch there. Pass instanceType, for example c8gn.16xlarge or c6gn.16xlarge, offered in ap-south-1/ },
  { name: 'fleet: the default type where the next alternative is x86_64 (warning)', region: 'me-central-1', build: fleet({ nodeCount: 1 }), warning: /^instanceType: the default c7gn.16xlarge is not offered in me-central-1 .*for example c8gn.16xlarge or c6in.16xlarge \(x86_64\)/ },
  { name: 'fleet: the default type in a GovCloud region (warning)', region: 'us-gov-west-1', build: fleet({ workingSetSize: Size.gibibytes(64) }), warning: /^instanceType: the default c7gn.16xlarge is not offered in us-gov-west-1/ },
  {
    name: 'fleet: a working set larger than the node type\'s memory (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gn.4xlarge'), workingSetSize: Size.gibibytes(100) }),
    warning: /^workingSetSize: 100 GiB does not fit .* \(32 GiB\)/,
  },

  // FanOut (mode-specific options of the fleet)
  { name: 'fan-out: a record name under NLB', build: fleet({ fanOut: FanOutMode.NETWORK_LOAD_BALANCER, recordName: 'x' }), error: /^Invalid recordName: applies only with fanOut: FanOutMode.ROUTE53/ },
  { name: 'fan-out: a record TTL under NLB', build: fleet({ fanOut: FanOutMode.NETWORK_LOAD_BALANCER, recordTtl: Duration.seconds(5) }), error: /^Invalid recordTtl: applies only with fanOut: FanOutMode.ROUTE53/ },
  { name: 'fan-out: an NLB idle timeout under Route 53', build: fleet({ loadBalancerIdleTimeout: Duration.minutes(10) }), error: /^Invalid loadBalancerIdleTimeout: applies only with fanOut: FanOutMode.NETWORK_LOAD_BALANCER/ },
  { name: 'fan-out: NLB access logs under Route 53', build: (stack: Stack, vpc: ec2.Vpc) => fleet({ loadBalancerAccessLogs: s3.Bucket.fromBucketName(stack, 'Logs', 'logs') })(stack, vpc), error: /^Invalid loadBalancerAccessLogs: applies only with fanOut: FanOutMode.NETWORK_LOAD_BALANCER/ },
  { name: 'fan-out: an access-log prefix without a bucket', build: fleet({ fanOut: FanOutMode.NETWORK_LOAD_BALANCER, loadBalancerAccessLogsPrefix: 'x' }), error: /^Invalid loadBalancerAccessLogsPrefix: is the prefix of the access logs, but loadBalancerAccessLogs gives no bucket/ },
  { name: 'fan-out: an access-log prefix ELB refuses', build: (stack: Stack, vpc: ec2.Vpc) => fleet({ fanOut: FanOutMode.NETWORK_LOAD_BALANCER, loadBalancerAccessLogs: s3.Bucket.fromBucketName(stack, 'Logs', 'logs'), loadBalancerAccessLogsPrefix: 'logs/AWSLogs' })(stack, vpc), error: /^Invalid loadBalancerAccessLogsPrefix: 'logs\/AWSLogs' cannot start or end with \/ nor contain AWSLogs/ },
  { name: 'fan-out: cross-zone under Route 53', build: fleet({ crossZone: true }), error: /^Invalid crossZone: applies only with fanOut: FanOutMode.NETWORK_LOAD_BALANCER/ },
  { name: 'fan-out: an NLB idle timeout out of range', build: fleet({ fanOut: FanOutMode.NETWORK_LOAD_BALANCER, loadBalancerIdleTimeout: Duration.seconds(10) }), error: /^Invalid loadBalancerIdleTimeout: must be between 60 and 6000/ },
  { name: 'fan-out: a bad zone name', build: fleet({ zoneName: 'Not A Zone' }), error: /^Invalid zoneName/ },
  { name: 'fan-out: a record name with a space', build: fleet({ recordName: 'my cache' }), error: /^Invalid recordName: 'my cache' is not a valid DNS name/ },
  { name: 'fan-out: a record TTL over a day', build: fleet({ recordTtl: Duration.days(2) }), error: /^Invalid recordTtl: must be between 0 seconds and 1 day/ },

  // FsCacheClientLaunchTemplate
  { name: 'client: cull limits out of order', build: client({ cullLimits: { blocksRun: 5, blocksCull: 7, blocksStop: 3 } }), error: /^Invalid cullLimits.blocksCull: needs 0 <= blocksStop < blocksCull < blocksRun < 100/ },
  { name: 'client: stop equal to cull', build: client({ cullLimits: { filesCull: 3, filesStop: 3 } }), error: /^Invalid cullLimits.filesCull/ },
  { name: 'client: a limit of 100', build: client({ cullLimits: { blocksRun: 100 } }), error: /^Invalid cullLimits.blocksRun: must be a whole percentage from 0 to 99/ },
  { name: 'client: a type known to have no instance store', build: client({ instanceType: new ec2.InstanceType('c7gn.large') }), error: /^Invalid instanceType: c7gn.large has no instance store .*CacheStorage.EBS/ },
  { name: 'client: a relative cache directory', build: client({ cacheDirectory: 'var/cache' }), error: /^Invalid cacheDirectory: must be an absolute path/ },
  { name: 'client: / as the cache directory', build: client({ cacheDirectory: '/' }), error: /^Invalid cacheDirectory/ },
  { name: 'client: mount point = cache directory', build: client({ mountPoint: '/var/cache/fscache' }), error: /^Invalid mountPoint: must differ from cacheDirectory/ },
  { name: 'client: a relative mount point', build: client({ mountPoint: 'mnt' }), error: /^Invalid mountPoint: must be an absolute path/ },
  { name: 'client: options without fsc', build: client({ mountOptions: ['hard', 'nfsvers=4.1'] }), error: /^Invalid mountOptions: must include fsc/ },
  { name: 'client: an option with a space', build: client({ mountOptions: ['fsc', 'hard', 'a b'] }), error: /^Invalid mountOptions: 'a b' is not a mount option/ },
  { name: 'client: an EBS size with instance store', build: client({ cacheVolumeSize: Size.gibibytes(10) }), error: /^Invalid cacheVolumeSize: applies only with cacheStorage: CacheStorage.EBS/ },
  { name: 'client: an EBS cache of 0 GiB', build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), cacheStorage: CacheStorage.EBS, cacheVolumeSize: Size.gibibytes(0) }), error: /^Invalid cacheVolumeSize: must be whole GiB from 1 to 16384, got 0 GiB/ },
  { name: 'client: initializing an EBS cache volume', build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), cacheStorage: CacheStorage.EBS, initializeCacheDevices: true }), error: /^Invalid initializeCacheDevices: applies only with cacheStorage: CacheStorage.INSTANCE_STORE/ },
  { name: 'client: a root volume smaller than the image', build: client({ rootVolumeSize: Size.gibibytes(2) }), error: /^Invalid rootVolumeSize: must be whole GiB from 8/ },
  { name: 'client: a TLS port with plain NFS', build: client({ mountHelper: MountHelper.NFS, tlsPort: 20100 }), error: /^Invalid tlsPort: applies only with mountHelper: MountHelper.EFS_UTILS/ },
  { name: 'client: a TLS port out of range', build: client({ tlsPort: 80 }), error: /^Invalid tlsPort: must be a port from 1024 to 65535/ },
  { name: 'client: a bad cache tag', build: client({ cacheTag: 'my tag' }), error: /^Invalid cacheTag/ },
  { name: 'client: no source', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', { vpc }), error: /^Invalid source: is required: MountSource.fileSystem\(fileSystem\) mounts EFS directly, MountSource.cacheFleet\(fleet\) mounts the cache tier/ },
  {
    name: 'client: source and the deprecated fileSystem',
    build: (stack, vpc) => { const fileSystem = importedFs(stack); return new FsCacheClientLaunchTemplate(stack, 'C', { vpc, source: MountSource.fileSystem(fileSystem), fileSystem }); },
    error: /^Invalid fileSystem: is replaced by source and cannot be combined with it: give fileSystem through source alone/,
  },
  {
    name: 'client: source and the deprecated mirrorPaths',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', {
      vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app'] })), mirrorPaths: ['/efs/app'],
    }),
    error: /^Invalid mirrorPaths: is replaced by source .*MountSource.cacheFleet\(fleet, \{ mirrorPaths, mirrorMountPoint \}\)/,
  },
  {
    name: 'client: source with the deprecated cacheFleet and mirrorMountPoint',
    build: (stack, vpc) => {
      const fleetOf = new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack) });
      return new FsCacheClientLaunchTemplate(stack, 'C', { vpc, source: MountSource.cacheFleet(fleetOf), cacheFleet: fleetOf, mirrorMountPoint: '/mnt/m' });
    },
    error: /^Invalid cacheFleet: is replaced by source .*give cacheFleet, mirrorMountPoint through source alone/,
  },
  { name: 'client: a source mirror the fleet does not have', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app'] }), { mirrorPaths: ['/efs/lib'] }) }), error: /^Invalid source\.mirrorPaths: '\/efs\/lib' is not a mirror of .*\/efs\/app/ },
  { name: 'client: a source mirror mount point with nothing to mount', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack) }), { mirrorMountPoint: '/mnt/m' }) }), error: /^Invalid source\.mirrorMountPoint: needs mirrorPaths/ },
  { name: 'client: a relative source mirror mount point', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app'] }), { mirrorPaths: ['/efs/app'], mirrorMountPoint: 'mnt' }) }), error: /^Invalid source\.mirrorMountPoint: must be an absolute path/ },
  { name: 'client: a fleet source asked to write', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack) })), readOnly: false }), error: /^Invalid readOnly: a cache fleet exports read-only/ },
  {
    name: 'client: both file system and fleet',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', {
      vpc, fileSystem: importedFs(stack), cacheFleet: new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { nodeCount: 1 } }).cacheFleet,
    }),
    error: /^Invalid cacheFleet: give exactly one of fileSystem .* and cacheFleet/,
  },
  { name: 'client: a fleet client asked to write', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { nodeCount: 1 } }).addClientLaunchTemplate('C', { readOnly: false }), error: /^Invalid readOnly: a cache fleet exports read-only/ },
  { name: 'client: a fleet client with amazon-efs-utils', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { nodeCount: 1 } }).addClientLaunchTemplate('C', { mountHelper: MountHelper.EFS_UTILS }), error: /^Invalid mountHelper: a cache fleet is mounted over plain NFSv4.1/ },
  { name: 'client: a fleet client with a TLS port', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { nodeCount: 1 } }).addClientLaunchTemplate('C', { tlsPort: 20100 }), error: /^Invalid tlsPort: applies only when mounting EFS with amazon-efs-utils/ },
  { name: 'client: a VPC with isolated subnets only (warning)', build: (stack) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc: isolatedVpc(stack, 1), source: MountSource.fileSystem(importedFs(stack)) }), warning: /^vpc: the instances of .*\/Client run in isolated subnets .*package repositories.*CloudWatch.*SSM/ },
  { name: 'client: an EBS cache on a Xen type (t2)', build: client({ instanceType: new ec2.InstanceType('t2.large'), cacheStorage: CacheStorage.EBS }), error: /^Invalid instanceType: t2.large is Xen-based: its EBS volumes attach as \/dev\/xvd\* block devices with no NVMe model, so the bootstrap can never find the cache volume/ },
  { name: 'client: an EBS cache on a Xen type (m4)', build: client({ instanceType: new ec2.InstanceType('m4.xlarge'), cacheStorage: CacheStorage.EBS }), error: /^Invalid instanceType: m4.xlarge is Xen-based/ },
  { name: 'client: an EBS cache on a Xen type with a custom device model', build: client({ instanceType: new ec2.InstanceType('c4.2xlarge'), cacheStorage: CacheStorage.EBS, cacheDeviceModel: 'Xen Virtual Block Device' }), error: /^Invalid instanceType: c4.2xlarge is Xen-based/ },
  { name: 'client: an EBS cache on a Xen type with NVMe instance store (i3)', build: client({ instanceType: new ec2.InstanceType('i3.large'), cacheStorage: CacheStorage.EBS }), error: /^Invalid instanceType: i3.large is Xen-based/ },
  { name: 'client: Xen SSD instance store (m3)', build: client({ instanceType: new ec2.InstanceType('m3.xlarge') }), error: /^Invalid instanceType: m3.xlarge is Xen-based and its instance store is not NVMe: the disks attach as \/dev\/xvd\*/ },
  { name: 'client: Xen SSD instance store (c3)', build: client({ instanceType: new ec2.InstanceType('c3.2xlarge') }), error: /^Invalid instanceType: c3.2xlarge is Xen-based and its instance store is not NVMe/ },
  { name: 'client: Xen SSD instance store (r3)', build: client({ instanceType: new ec2.InstanceType('r3.large') }), error: /^Invalid instanceType: r3.large is Xen-based and its instance store is not NVMe/ },
  { name: 'client: Xen SSD instance store (i2)', build: client({ instanceType: new ec2.InstanceType('i2.xlarge') }), error: /^Invalid instanceType: i2.xlarge is Xen-based and its instance store is not NVMe/ },
  { name: 'client: Xen HDD instance store (d2)', build: client({ instanceType: new ec2.InstanceType('d2.xlarge') }), error: /^Invalid instanceType: d2.xlarge is Xen-based and its instance store is not NVMe/ },
  { name: 'client: Xen SSD instance store (x1e)', build: client({ instanceType: new ec2.InstanceType('x1e.xlarge') }), error: /^Invalid instanceType: x1e.xlarge is Xen-based and its instance store is not NVMe/ },
  { name: 'client: a Xen type without instance store (r4)', build: client({ instanceType: new ec2.InstanceType('r4.large') }), error: /^Invalid instanceType: r4.large has no instance store, and as a Xen-based type cannot hold the cache on EBS either/ },
  { name: 'client: a Xen type without instance store (t2)', build: client({ instanceType: new ec2.InstanceType('t2.medium') }), error: /^Invalid instanceType: t2.medium has no instance store, and as a Xen-based type/ },
  { name: 'client: a type name that does not parse, instance store (warning)', build: client({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge'), machineImage: al2023x86 }), warning: /^instanceType: whether u-6tb1.112xlarge has NVMe instance store is not known here \(the name does not read as family, generation and size/ },
  { name: 'client: a type name that does not parse, EBS (warning)', build: client({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge'), machineImage: al2023x86, cacheStorage: CacheStorage.EBS }), warning: /^instanceType: u-6tb1.112xlarge does not read as family, generation and size .*whether it is Nitro-based is not known/ },
  { name: 'client: an unknown family (warning)', build: client({ instanceType: new ec2.InstanceType('zz9.xlarge') }), warning: /^instanceType: whether zz9.xlarge has NVMe instance store is not known here; if it has none/ },
  { name: 'client: the default type where it is not offered (warning)', region: 'eu-north-1', build: client({}), warning: /^instanceType: the default m6id.xlarge is not offered in eu-north-1 .*for example m5d.xlarge or i4i.xlarge, offered in eu-north-1/ },
  { name: 'client: the default type in China (warning)', region: 'cn-north-1', build: client({ cacheStorage: CacheStorage.EBS }), warning: /^instanceType: the default m6id.xlarge is not offered in cn-north-1 .*for example m5d.xlarge or i4i.xlarge/ },
  { name: 'client: a soft mount (warning)', build: client({ mountOptions: ['fsc', 'soft', 'nfsvers=4.1'] }), warning: /^mountOptions: without hard/ },
  { name: 'client: an instance type of unknown storage (warning)', build: client({ instanceType: new ec2.InstanceType('p5.48xlarge') }), warning: /^instanceType: whether p5.48xlarge has NVMe instance store is not known/ },

  // DataSeeder
  { name: 'seeder: no workers', build: seeder({ workers: 0 }), error: /^Invalid workers: must be a whole number from 1 to 512, got 0/ },
  { name: 'seeder: too many workers', build: seeder({ workers: 513 }), error: /^Invalid workers/ },
  { name: 'seeder: a fraction of a worker', build: seeder({ workers: 1.5 }), error: /^Invalid workers/ },
  { name: 'seeder: empty parts', build: seeder({ filesPerPart: 0 }), error: /^Invalid filesPerPart/ },
  { name: 'seeder: a relative target', build: seeder({ targetPath: 'data' }), error: /^Invalid targetPath: must be an absolute path/ },
  { name: 'seeder: a target with ..', build: seeder({ targetPath: '/a/../b' }), error: /^Invalid targetPath/ },
  { name: 'seeder: a version with a space', build: seeder({ version: 'v 2' }), error: /^Invalid version/ },
  { name: 'seeder: a timeout past CloudFormation\'s 12 hours', build: seeder({ timeout: Duration.hours(13) }), error: /^Invalid timeout: must be whole seconds from 5 minutes to 12 hours/ },
  { name: 'seeder: a very short timeout', build: seeder({ timeout: Duration.minutes(1) }), error: /^Invalid timeout/ },
  { name: 'seeder: a short mount timeout', build: seeder({ mountTimeout: Duration.seconds(5) }), error: /^Invalid mountTimeout/ },
  { name: 'seeder: a fractional progress interval', build: seeder({ progressInterval: Duration.millis(500) }), error: /^Invalid progressInterval/ },
  { name: 'seeder: a small volume', build: seeder({ volumeSize: Size.gibibytes(4) }), error: /^Invalid volumeSize: must be whole GiB from 8 to 16384, got 4 GiB/ },
  { name: 'seeder: a prefix with a space', build: seeder({}, (s) => SeedSource.fromBucket(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), 'my data/')), error: /^Invalid source: the S3 prefix/ },
  { name: 'seeder: a relative instance directory', build: seeder({}, () => SeedSource.fromInstanceDirectory('data')), error: /^Invalid source: the instance directory must be an absolute path/ },
  { name: 'seeder: / as instance directory', build: seeder({}, () => SeedSource.fromInstanceDirectory('/')), error: /^Invalid source/ },
  { name: 'seeder: a missing asset', build: seeder({}, () => SeedSource.fromAsset('/no/such/dir')), error: /^Invalid source: the asset path \/no\/such\/dir does not exist/ },
  { name: 'seeder: a single file as asset', build: seeder({}, () => SeedSource.fromAsset(aFile())), error: /^Invalid source: .* is a single file/ },
  { name: 'seeder: an isolated-only VPC (warning, not CDK\'s "no Private subnet groups")', build: (stack) => new DataSeeder(stack, 'Seeder', { vpc: isolatedVpc(stack), fileSystem: importedFs(stack), source: SeedSource.fromInstanceDirectory('/srv/data') }), warning: /^vpcSubnets: the instances of .*\/Seeder run in isolated subnets (?!.*S3 \(the seed)(?!.*SSM).*package repositories.*CloudFormation/ },
  { name: 'seeder: an S3 source from isolated subnets (warning)', build: (stack) => new DataSeeder(stack, 'Seeder', { vpc: mixedVpc(stack), vpcSubnets: { subnetGroupName: 'iso' }, fileSystem: importedFs(stack), source: SeedSource.fromBucket(s3.Bucket.fromBucketName(stack, 'B', 'my-bucket'), 'data/') }), warning: /^vpcSubnets: the instances of .*\/Seeder run in isolated subnets .*S3 \(the instances' code, the seed source/ },
  { name: 'seeder: the default type where it is not offered (warning)', region: 'eu-south-1', build: seederInRegion({}), warning: /^instanceType: the default m7g.xlarge is not offered in eu-south-1 .*for example m6g.xlarge or m7i.xlarge \(x86_64\), offered in eu-south-1/ },
  { name: 'seeder: the default type in ca-west-1 (warning)', region: 'ca-west-1', build: seederInRegion({ workers: 8 }), warning: /^instanceType: the default m7g.xlarge is not offered in ca-west-1/ },
  { name: 'seeder: deleting extraneous files at the root (warning)', build: seeder({ deleteExtraneous: true }), warning: /^deleteExtraneous: with targetPath '\/', every file of the file system/ },
  // Messages: instance type names aws-cdk-lib cannot read, and tokens where a value is needed at synth
  { name: 'fleet: an instance type name without its dot', build: fleet({ instanceType: new ec2.InstanceType('c7gn16xlarge') }), error: /^Invalid instanceType: 'c7gn16xlarge' is not an EC2 instance type name: a name reads <family><generation><attributes>\.<size> in lower case, for example c7gn\.16xlarge/ },
  { name: 'client: an instance type name in upper case', build: client({ instanceType: new ec2.InstanceType('M6ID.XLARGE') }), error: /^Invalid instanceType: 'M6ID.XLARGE' is not an EC2 instance type name/ },
  { name: 'seeder: an instance type name without a size', build: seeder({ instanceType: new ec2.InstanceType('m7g') }), error: /^Invalid instanceType: 'm7g' is not an EC2 instance type name/ },
  { name: 'fleet: a Windows image', build: fleet({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.latestWindows(ec2.WindowsVersion.WINDOWS_SERVER_2022_ENGLISH_FULL_BASE) }), error: /^Invalid machineImage: is a Windows image: the instances run bash scripts as Linux user data\. Use Amazon Linux 2023/ },
  { name: 'client: a Windows image by its id', build: client({ instanceType: new ec2.InstanceType('c6id.xlarge'), machineImage: ec2.MachineImage.genericWindows({ 'us-east-1': 'ami-0123456789abcdef0' }) }), error: /^Invalid machineImage: is a Windows image/ },
  { name: 'seeder: a Windows image from a parameter', build: seeder({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.fromSsmParameter('/my/windows', { os: ec2.OperatingSystemType.WINDOWS }) }), error: /^Invalid machineImage: is a Windows image/ },
  { name: 'fleet: Amazon Linux 2', build: fleet({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.latestAmazonLinux2() }), error: /^Invalid machineImage: is Amazon Linux 2 or older \('\/aws\/service\/ami-amazon-linux-latest\/amzn2-ami-kernel-5\.10-hvm-x86_64-gp2'\): the scripts install packages with dnf/ },
  { name: 'client: Amazon Linux 2 from its public parameter', build: client({ instanceType: new ec2.InstanceType('c6id.xlarge'), machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2') }), error: /^Invalid machineImage: is Amazon Linux 2 or older \('\/aws\/service\/ami-amazon-linux-latest\/amzn2-ami-hvm-x86_64-gp2'\)/ },
  { name: 'seeder: the first Amazon Linux', build: seeder({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/ami-amazon-linux-latest/amzn-ami-hvm-x86_64-gp2') }), error: /^Invalid machineImage: is Amazon Linux 2 or older/ },
  { name: 'fleet: a type whose architecture CDK cannot read, with the default image', build: fleet({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge') }), error: /^Invalid instanceType: the architecture of u-6tb1\.112xlarge cannot be read from its name .*give a machineImage/ },
  { name: 'seeder: a type as a token, with the default image', build: (stack, vpc) => seeder({ instanceType: new ec2.InstanceType(new CfnParameter(stack, 'Type').valueAsString) })(stack, vpc), error: /^Invalid instanceType: is parameter Type \(a token, known at deploy time\), and the default machineImage follows/ },
  { name: 'fleet: a node count as a token', build: (stack, vpc) => fleet({ nodeCount: new CfnParameter(stack, 'Nodes', { type: 'Number' }).valueAsNumber })(stack, vpc), error: /^Invalid nodeCount: must be known at synth .*got parameter Nodes \(a token, known at deploy time\)/ },
  { name: 'client: a mount timeout as a token in minutes', build: (stack, vpc) => client({ mountTimeout: Duration.minutes(new CfnParameter(stack, 'T', { type: 'Number' }).valueAsNumber) })(stack, vpc), error: /^Invalid mountTimeout: is a token .* given as Duration\.minutes\(\).*give it as Duration\.seconds/ },
  { name: 'seeder: a relative instance directory names the seeder', build: seeder({}, () => SeedSource.fromInstanceDirectory('srv')), error: /^Invalid source: the instance directory must be an absolute path .*got 'srv'\. \(at TestStack\/Seeder\)$/ },
  { name: 'seeder: a prefix with a .. component', build: seeder({}, (s) => SeedSource.fromBucket(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), 'data/../other/')), error: /^Invalid source: the S3 prefix 'data\/\.\.\/other\/' .*\(no empty, \. or \.\. component\)/ },
  { name: 'seeder: a prefix with a . component', build: seeder({}, (s) => SeedSource.fromBucket(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), './data/')), error: /^Invalid source: the S3 prefix '\.\/data\/'/ },
  { name: 'seeder: a bad S3 prefix names the seeder', build: seeder({}, (s) => SeedSource.fromBucket(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), 'a//b/')), error: /^Invalid source: the S3 prefix 'a\/\/b\/' .* \(at TestStack\/Seeder\)$/ },
  // Route 53 names that two fleets would both claim (Route 53 refuses the second at deploy)
  { name: 'fleets: two with the default zone on one VPC', build: twoFleets({}), error: /^Invalid zoneName: a private hosted zone named 'efs-cache.internal' on this VPC already belongs to the fleet TestStack\/Fleet: .*another zoneName/ },
  { name: 'fleets: two cached file systems with fleets in one stack', build: (stack, vpc) => [1, 2].map((i) => new CachedFileSystem(stack, `Data${i}`, { vpc, cacheFleet: {} })), error: /^Invalid zoneName: .*already belongs to the fleet TestStack\/Data1\/CacheFleet/ },
  { name: 'fleets: one zone name with a trailing dot', build: twoFleets({ zoneName: 'data.example.internal.' }, { zoneName: 'data.example.internal' }), error: /^Invalid zoneName: a private hosted zone named 'data.example.internal.' on this VPC/ },
  {
    name: 'fleets: the same zone name in two stacks on one imported VPC',
    build: (stack) => ['Other', 'Mine'].map((id) => {
      const s = id === 'Mine' ? stack : new Stack(stack.node.root as App, id);
      const vpc = ec2.Vpc.fromVpcAttributes(s, 'Shared', { vpcId: 'vpc-0123456789abcdef0', vpcCidrBlock: '10.0.0.0/16', availabilityZones: ['us-east-1a'], privateSubnetIds: ['subnet-0123456789abcdef0'] });
      return new CacheFleet(s, 'Fleet', { vpc, fileSystem: importedFs(s) });
    }),
    error: /^Invalid zoneName: .*already belongs to the fleet Other\/Fleet/,
  },
  { name: 'fleets: a shared hosted zone with the default record name', build: twoFleets((first) => ({ hostedZone: first.fanOut.hostedZone })), error: /^Invalid recordName: the record 'cache' in this hosted zone already belongs to the fleet TestStack\/Fleet: .*its own recordName/ },
  { name: 'fleets: a record name that is another fleet\'s node name', build: twoFleets((first) => ({ hostedZone: first.fanOut.hostedZone, recordName: 'node2.cache' })), error: /^Invalid recordName: the record 'node2.cache' in this hosted zone already belongs to the fleet TestStack\/Fleet/ },
  // Mounts that contradict the TLS-only origin this library creates, and images that may lack amazon-efs-utils
  { name: 'tls: a client mounting a created origin with plain NFS', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { mountHelper: MountHelper.NFS }), error: /^Invalid mountHelper: the file system was created by this library with a policy that denies non-TLS access.*MountHelper.EFS_UTILS/ },
  { name: 'tls: client options without tls on a created origin', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { mountOptions: ['fsc', 'hard', 'iam', 'nfsvers=4.1'] }), error: /^Invalid mountOptions: must include tls/ },
  { name: 'tls: a client template over an OriginFileSystem with plain NFS', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', { vpc, source: MountSource.fileSystem(new OriginFileSystem(stack, 'O', { vpc }).fileSystem), mountHelper: MountHelper.NFS }), error: /^Invalid mountHelper: .*denies non-TLS/ },
  { name: 'tls: a fleet mounting a created origin with plain NFS', build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { originMountHelper: MountHelper.NFS } }), error: /^Invalid originMountHelper: .*denies non-TLS/ },
  { name: 'tls: a fleet over an OriginFileSystem with plain NFS', build: (stack, vpc) => new CacheFleet(stack, 'F', { vpc, fileSystem: new OriginFileSystem(stack, 'O', { vpc }).fileSystem, originMountHelper: MountHelper.NFS }), error: /^Invalid originMountHelper: .*denies non-TLS/ },
  { name: 'tls: a seeder writing to a created origin with plain NFS', build: (stack, vpc) => new DataSeeder(stack, 'S', { vpc, fileSystem: new OriginFileSystem(stack, 'O', { vpc }).fileSystem, mountHelper: MountHelper.NFS, source: SeedSource.fromInstanceDirectory('/srv/data') }), error: /^Invalid mountHelper: .*denies non-TLS/ },
  { name: 'efs-utils: a client on a custom image (warning)', build: client({ machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/debian/release/bookworm/latest/amd64') }), warning: /^machineImage: with MountHelper.EFS_UTILS the image must have amazon-efs-utils.*Debian and Ubuntu package it nowhere/ },
  { name: 'efs-utils: a fleet on a custom image (warning)', build: fleet({ machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/canonical/ubuntu/server/24.04/stable/current/arm64/hvm/ebs-gp3/ami-id') }), warning: /^machineImage: with MountHelper.EFS_UTILS/ },
  { name: 'efs-utils: a seeder on a custom image (warning)', build: seeder({ machineImage: ec2.MachineImage.genericLinux({ 'us-east-1': 'ami-0123456789abcdef0' }) }), warning: /^machineImage: with MountHelper.EFS_UTILS/ },
  // Sizes, images, zones and paths the library can check: mirrors larger than the node type's RAM or half its
  // instance store, images of the other architecture, a zone of the user's with the fleet's zone name, system directories
  { name: 'mirrors: in memory, as large as the node type\'s RAM', build: fleet({ instanceType: new ec2.InstanceType('c7gn.large'), mirrorPaths: ['/efs/app'], mirrorSize: Size.gibibytes(4) }), error: /^Invalid mirrorSize: 4 GiB in memory \(MirrorStorage.MEMORY\) is not less than the 4 GiB of RAM of c7gn.large: .*Choose at most 2 GiB/ },
  { name: 'mirrors: in memory, more than the default type\'s RAM', build: fleet({ mirrorPaths: ['/efs/app'], mirrorSize: Size.gibibytes(200) }), error: /^Invalid mirrorSize: 200 GiB in memory \(MirrorStorage.MEMORY\) is not less than the 128 GiB of RAM of c7gn.16xlarge/ },
  { name: 'mirrors: in memory, more than half the RAM (warning)', build: fleet({ instanceType: new ec2.InstanceType('c7gn.xlarge'), mirrorPaths: ['/efs/app'], mirrorSize: Size.gibibytes(5) }), warning: /^mirrorSize: 5 GiB in memory is more than half of the 8 GiB of RAM of c7gn.xlarge/ },
  { name: 'mirrors: on the instance store, more than half of it', build: fleet({ instanceType: new ec2.InstanceType('c6gd.large'), mirrorPaths: ['/efs/app'], mirrorSize: Size.gibibytes(60) }), error: /^Invalid mirrorSize: 60 GiB on the instance store \(MirrorStorage.INSTANCE_STORE\) is more than half of the 118 GB of c6gd.large: every node would refuse to serve at boot.*Choose at most 53 GiB/ },
  { name: 'mirrors: on an i4i\'s instance store, more than half of it', build: fleet({ instanceType: new ec2.InstanceType('i4i.2xlarge'), mirrorPaths: ['/efs/app'], mirrorStorage: MirrorStorage.INSTANCE_STORE, mirrorSize: Size.tebibytes(1) }), error: /^Invalid mirrorSize: 1024 GiB on the instance store .* half of the 1875 GB of i4i.2xlarge/ },
  { name: 'mirrors: on the instance store, within ext4\'s overhead of half of it (warning)', build: fleet({ instanceType: new ec2.InstanceType('c6gd.large'), mirrorPaths: ['/efs/app'], mirrorSize: Size.gibibytes(54) }), warning: /^mirrorSize: 54 GiB is within 3% of half of the 118 GB instance store of c6gd.large.*Choose at most 53 GiB/ },
  { name: 'images: an x86_64 Amazon Linux 2023 on the default arm64 node type', build: fleet({ machineImage: ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.X86_64 }) }), error: /^Invalid machineImage: the image is for x86_64 \(SSM parameter '\/aws\/service\/ami-amazon-linux-latest\/al2023-ami-kernel-[0-9.]+-x86_64'\), but c7gn.16xlarge is arm64: .*AmazonLinuxCpuType.ARM_64/ },
  { name: 'images: an arm64 Amazon Linux 2 on an x86_64 node type', build: fleet({ instanceType: new ec2.InstanceType('c6in.16xlarge'), machineImage: ec2.MachineImage.latestAmazonLinux2({ cpuType: ec2.AmazonLinuxCpuType.ARM_64 }) }), error: /^Invalid machineImage: the image is for arm64 .*but c6in.16xlarge is x86_64/ },
  { name: 'images: an arm64 Ubuntu parameter on the default x86_64 client type', build: client({ machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/canonical/ubuntu/server/24.04/stable/current/arm64/hvm/ebs-gp3/ami-id') }), error: /^Invalid machineImage: the image is for arm64 \(SSM parameter '\/aws\/service\/canonical\/ubuntu\/server\/24.04\/stable\/current\/arm64\/hvm\/ebs-gp3\/ami-id'\), but m6id.xlarge is x86_64/ },
  { name: 'images: an amd64 Debian parameter resolved at launch on an arm64 client type', build: client({ instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: ec2.MachineImage.resolveSsmParameterAtLaunch('/aws/service/debian/release/bookworm/latest/amd64') }), error: /^Invalid machineImage: the image is for x86_64 .*but m6gd.xlarge is arm64/ },
  { name: 'images: an x86_64 lookup on the default arm64 seeder type', build: seeder({ machineImage: ec2.MachineImage.lookup({ name: 'my-image-*', filters: { architecture: ['x86_64'] } }) }), error: /^Invalid machineImage: the image is for x86_64 \(lookup filter architecture 'x86_64'\), but m7g.xlarge is arm64/ },
  {
    name: 'zones: a private zone of the user\'s with the fleet\'s zone name on its VPC',
    build: (stack, vpc) => {
      new route53.PrivateHostedZone(stack, 'Mine', { zoneName: 'EFS-Cache.Internal.', vpc });
      return fleet({})(stack, vpc);
    },
    error: /^Invalid zoneName: the private hosted zone TestStack\/Mine is also named 'efs-cache.internal' and is associated with this VPC: Route 53 refuses/,
  },
  {
    name: 'zones: a CfnHostedZone in another stack with a fleet\'s zone name on one imported VPC',
    build: (stack) => {
      const attrs = { vpcId: 'vpc-0123456789abcdef0', vpcCidrBlock: '10.0.0.0/16', availabilityZones: ['us-east-1a'], privateSubnetIds: ['subnet-0123456789abcdef0'] };
      const other = new Stack(stack.node.root as App, 'Other');
      new route53.CfnHostedZone(other, 'Zone', { name: 'data.example.internal', vpcs: [{ vpcId: attrs.vpcId, vpcRegion: 'us-east-1' }] });
      const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Shared', attrs);
      return new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), zoneName: 'data.example.internal' });
    },
    error: /^Invalid zoneName: the private hosted zone Other\/Zone is also named 'data.example.internal'/,
  },
  { name: 'paths: /var as export path', build: fleet({ exportPath: '/var' }), error: /^Invalid exportPath: '\/var' is the system directory \/var: the nodes' mount of the origin would hide or break/ },
  { name: 'paths: /etc as export path', build: fleet({ exportPath: '/etc' }), error: /^Invalid exportPath: '\/etc' is the system directory \/etc/ },
  { name: 'paths: /usr as export path', build: fleet({ exportPath: '/usr' }), error: /^Invalid exportPath: '\/usr' is the system directory \/usr/ },
  { name: 'paths: an export path inside /proc', build: fleet({ exportPath: '/proc/efs' }), error: /^Invalid exportPath: '\/proc\/efs' is inside \/proc/ },
  { name: 'paths: an export path inside /run', build: fleet({ exportPath: '/run/efs' }), error: /^Invalid exportPath: '\/run\/efs' is inside \/run/ },
  { name: 'paths: /mirror as export path of a fleet with mirrors', build: fleet({ exportPath: '/mirror', mirrorPaths: ['/mirror/app'] }), error: /^Invalid exportPath: '\/mirror' is \/mirror, where each node mounts the root of the mirrors/ },
  { name: 'paths: an export path inside the nodes\' disk cache', build: fleet({ instanceType: new ec2.InstanceType('c6gd.16xlarge'), exportPath: '/var/cache/fscache/efs' }), error: /^Invalid exportPath: '\/var\/cache\/fscache\/efs' is inside \/var\/cache\/fscache, where each node mounts the disk cache/ },
  { name: 'paths: /home as client mount point', build: client({ mountPoint: '/home' }), error: /^Invalid mountPoint: '\/home' is the system directory \/home/ },
  { name: 'paths: a client mount point inside /sys', build: client({ mountPoint: '/sys/efs' }), error: /^Invalid mountPoint: '\/sys\/efs' is inside \/sys/ },
  { name: 'paths: /var/lib as client cache directory', build: client({ cacheDirectory: '/var/lib' }), error: /^Invalid cacheDirectory: '\/var\/lib' is the system directory \/var\/lib/ },
  // The origin of a fleet (CacheOrigin): one of origin and the deprecated fileSystem; an NFS server that can be reached
  { name: 'fleet: origin and fileSystem together', build: (stack, vpc) => {
    const fileSystem = importedFs(stack);
    return new CacheFleet(stack, 'Fleet', { vpc, fileSystem, origin: CacheOrigin.efs(fileSystem) });
  }, error: /^Invalid fileSystem: is replaced by origin and cannot be combined with it: .*CacheOrigin\.efs\(fileSystem\)/ },
  { name: 'fleet: neither origin nor fileSystem', build: (stack, vpc) => new CacheFleet(stack, 'Fleet', { vpc }), error: /^Invalid origin: is required: CacheOrigin\.efs\(fileSystem\) .*CacheOrigin\.nfsServer/ },
  { name: 'nfs origin: the node itself (127.0.0.1)', build: nfsFleet({ host: '127.0.0.1', peer: ec2.Peer.ipv4('127.0.0.0/8') }), error: /^Invalid origin\.host: must name the NFS server as the nodes reach it, got '127\.0\.0\.1': .*loopback/ },
  { name: 'nfs origin: localhost', build: nfsFleet({ host: 'localhost' }), error: /^Invalid origin\.host: .*got 'localhost'/ },
  { name: 'nfs origin: the metadata service', build: nfsFleet({ host: '169.254.169.254', peer: ec2.Peer.ipv4('169.254.0.0/16') }), error: /^Invalid origin\.host: .*got '169\.254\.169\.254': .*metadata service/ },
  { name: 'nfs origin: no export path', build: nfsFleet({ exportPath: '' }), error: /^Invalid origin\.exportPath: must be the absolute path the server exports .*got ''/ },
  { name: 'nfs origin: a relative export path', build: nfsFleet({ exportPath: 'srv/data' }), error: /^Invalid origin\.exportPath: .*got 'srv\/data'/ },
  { name: 'nfs origin: an export path with ..', build: nfsFleet({ exportPath: '/srv/../etc' }), error: /^Invalid origin\.exportPath: .*got '\/srv\/\.\.\/etc'/ },
  { name: 'nfs origin: an export path with a trailing /', build: nfsFleet({ exportPath: '/srv/data/' }), error: /^Invalid origin\.exportPath: .*no trailing \/.*got '\/srv\/data\/'/ },
  { name: 'nfs origin: an export path with a space', build: nfsFleet({ exportPath: '/srv/my data' }), error: /^Invalid origin\.exportPath: / },
  { name: 'nfs origin: an export path as a token', build: nfsFleet((s) => ({ exportPath: new CfnParameter(s, 'Export').valueAsString })), error: /^Invalid origin\.exportPath: must be known at synth \(the fleet's fsid is derived from it\), got parameter Export/ },
  { name: 'nfs origin: no host', build: nfsFleet({ host: '' }), error: /^Invalid origin\.host: must be the server's DNS name .* or IPv4 address .*got ''/ },
  { name: 'nfs origin: a host with a space', build: nfsFleet({ host: 'nas example' }), error: /^Invalid origin\.host: .*got 'nas example'/ },
  { name: 'nfs origin: host and path in one', build: nfsFleet({ host: 'nas.example.internal:/srv' }), error: /^Invalid origin\.host: .*got 'nas\.example\.internal:\/srv'/ },
  { name: 'nfs origin: an IPv6 host', build: nfsFleet({ host: 'fd00::5', peer: ec2.Peer.ipv6('fd00::/64') }), error: /^Invalid origin\.host: .*an IPv6 address needs a DNS name.*got 'fd00::5'/ },
  { name: 'nfs origin: a host address out of range', build: nfsFleet({ host: '10.20.0.256' }), error: /^Invalid origin\.host: .*got '10\.20\.0\.256'/ },
  { name: 'nfs origin: nfsd on port 0', build: nfsFleet({ ports: { nfs: 0 } }), error: /^Invalid origin\.ports\.nfs: must be a TCP port, a whole number from 1 to 65535, got 0\./ },
  { name: 'nfs origin: mountd on port 65536', build: nfsFleet({ ports: { mountd: 65536 } }), error: /^Invalid origin\.ports\.mountd: must be a TCP port, .*got 65536\./ },
  { name: 'nfs origin: lockd on port 4045.5', build: nfsFleet({ ports: { lockd: 4045.5 } }), error: /^Invalid origin\.ports\.lockd: must be a TCP port, .*got 4045\.5\./ },
  { name: 'nfs origin: a port as a token', build: nfsFleet((s) => ({ ports: { mountd: new CfnParameter(s, 'Mountd', { type: 'Number' }).valueAsNumber } })), error: /^Invalid origin\.ports\.mountd: must be known at synth \(it is a security group rule and a mount option\)/ },
  { name: 'nfs origin: mountd with NFSv4.1', build: nfsFleet({ version: NfsVersion.NFS_V4_1, ports: { mountd: 20048 } }), error: /^Invalid origin\.ports\.mountd: applies to NfsVersion\.NFS_V3 only: NFSv4\.1 needs nfsd's port alone/ },
  { name: 'nfs origin: lockd with NFSv4.2', build: nfsFleet({ version: NfsVersion.NFS_V4_2, ports: { lockd: 4045 } }), error: /^Invalid origin\.ports\.lockd: applies to NfsVersion\.NFS_V3 only/ },
  { name: 'nfs origin: rpcbind with NFSv4.1', build: nfsFleet({ version: NfsVersion.NFS_V4_1, ports: { rpcbind: true } }), error: /^Invalid origin\.ports\.rpcbind: applies to NfsVersion\.NFS_V3 only/ },
  { name: 'nfs origin: lockd without rpcbind', build: nfsFleet({ ports: { lockd: 4045, rpcbind: false } }), error: /^Invalid origin\.ports\.rpcbind: cannot be false with lockd: .*finds the server's lockd through rpcbind/ },
  { name: 'nfs origin: mountd on nfsd\'s port', build: nfsFleet({ ports: { mountd: 2049 } }), error: /^Invalid origin\.ports: names port 2049 twice/ },
  { name: 'nfs origin: lockd on rpcbind\'s port', build: nfsFleet({ ports: { lockd: 111 } }), error: /^Invalid origin\.ports: names port 111 twice/ },
  { name: 'nfs origin: every IPv4 address as the peer', build: nfsFleet({ peer: ec2.Peer.anyIpv4() }), error: /^Invalid origin\.peer: 0\.0\.0\.0\/0 would open the origin's ports to every address/ },
  { name: 'nfs origin: every IPv6 address as the peer', build: nfsFleet({ host: 'nas.example.internal', peer: ec2.Peer.anyIpv6() }), error: /^Invalid origin\.peer: ::\/0 would open the origin's ports to every address/ },
  { name: 'nfs origin: a peer with host bits set', build: nfsFleet({ peer: ec2.Peer.ipv4('10.20.0.5/16') }), error: /^Invalid origin\.peer: '10\.20\.0\.5\/16' has host bits set: the network is 10\.20\.0\.0\/16/ },
  { name: 'nfs origin: a peer that does not hold the host', build: nfsFleet({ peer: ec2.Peer.ipv4('10.30.0.0/16') }), error: /^Invalid origin\.peer: 10\.30\.0\.0\/16 does not hold the host 10\.20\.0\.5/ },
  { name: 'nfs origin: originMountHelper', build: nfsFleet({}, { originMountHelper: MountHelper.NFS }), error: /^Invalid originMountHelper: applies to an EFS origin only: .*mount -t nfs\)/ },
  // NFSv3 to the origin works with every fan-out (test/cache-fleet/nfs-origin.test.ts); NFSv3 to the clients needs Route 53 whatever the origin.
  { name: 'nfs origin: NFSv3 clients behind an NLB', build: nfsFleet({}, { fanOut: FanOutMode.NETWORK_LOAD_BALANCER, clientProtocol: ClientProtocol.NFS_V3 }), error: /^Invalid clientProtocol: ClientProtocol\.NFS_V3 needs fanOut: FanOutMode\.ROUTE53/ },
  // Fleets of another stack or app (CacheFleet.fromCacheFleetAttributes): the rules of a CacheFleet's own values
  { name: 'imported fleet: an endpoint with a space', build: (stack) => importedFleet(stack, { endpoint: 'cache efs' }), error: /^Invalid endpoint: must be the fleet's endpoint, a DNS name .* or an IPv4 address, got 'cache efs'\./ },
  { name: 'imported fleet: an endpoint as a URL', build: (stack) => importedFleet(stack, { endpoint: 'nfs://cache.efs-cache.internal' }), error: /^Invalid endpoint: must be the fleet's endpoint/ },
  { name: 'imported fleet: an endpoint of an address out of range', build: (stack) => importedFleet(stack, { endpoint: '10.0.0.256' }), error: /^Invalid endpoint: .*got '10\.0\.0\.256'/ },
  { name: 'imported fleet: an IPv6 endpoint', build: (stack) => importedFleet(stack, { endpoint: 'fd00::1' }), error: /^Invalid endpoint: .*got 'fd00::1'/ },
  { name: 'imported fleet: an endpoint label over 63 characters', build: (stack) => importedFleet(stack, { endpoint: `${'a'.repeat(64)}.internal` }), error: /^Invalid endpoint: / },
  { name: 'imported fleet: a relative export path', build: (stack) => importedFleet(stack, { exportPath: 'efs' }), error: /^Invalid exportPath: must be an absolute path other than \/ .*got 'efs'/ },
  { name: 'imported fleet: / as the export path', build: (stack) => importedFleet(stack, { exportPath: '/' }), error: /^Invalid exportPath: must be an absolute path other than \// },
  { name: 'imported fleet: an export path with ..', build: (stack) => importedFleet(stack, { exportPath: '/efs/../etc' }), error: /^Invalid exportPath: .*got '\/efs\/\.\.\/etc'/ },
  { name: 'imported fleet: an attribute cache timeout over an hour', build: (stack) => importedFleet(stack, { attributeCacheTimeout: Duration.hours(2) }), error: /^Invalid attributeCacheTimeout: must be between 0 and 60 minutes/ },
  { name: 'imported fleet: a relative mirror path', build: importedMirrors(['app', '/mirror/app']), error: /^Invalid mirrors: mirrors\[0\]\.path 'app' is not an absolute path.*e\.g\. '\/efs\/app'/ },
  { name: 'imported fleet: a mirror path with ..', build: importedMirrors(['/efs/../etc', '/mirror/../etc']), error: /^Invalid mirrors: mirrors\[0\]\.path '\/efs\/\.\.\/etc' is not an absolute path/ },
  { name: 'imported fleet: a mirror path with //', build: importedMirrors(['/efs//app', '/mirror//app']), error: /^Invalid mirrors: mirrors\[0\]\.path '\/efs\/\/app' is not an absolute path/ },
  { name: 'imported fleet: a mirror path outside the export', build: importedMirrors(['/data/app', '/mirror/app']), error: /^Invalid mirrors: mirrors\[0\]\.path '\/data\/app' is not under the fleet's exportPath '\/efs'/ },
  { name: 'imported fleet: a mirror export path outside /mirror', build: importedMirrors(['/efs/app', '/efs/app']), error: /^Invalid mirrors: mirrors\[0\]\.exportPath '\/efs\/app' is not a path under \/mirror/ },
  { name: 'imported fleet: a mirror export path with ..', build: importedMirrors(['/efs/app', '/mirror/../../etc']), error: /^Invalid mirrors: mirrors\[0\]\.exportPath '\/mirror\/\.\.\/\.\.\/etc' is not a path under \/mirror/ },
  { name: 'imported fleet: a mirror export path of another tree', build: importedMirrors(['/efs/app', '/mirror/lib']), error: /^Invalid mirrors: mirrors\[0\]\.exportPath '\/mirror\/lib' is not where the fleet exports '\/efs\/app': .*'\/mirror\/app'/ },
  { name: 'imported fleet: a mirror fsid that is not a UUID', build: importedMirrors(['/efs/app', '/mirror/app', 'f']), error: /^Invalid mirrors: mirrors\[0\]\.fsid 'f' is not a UUID/ },
  { name: 'imported fleet: a mirror twice', build: importedMirrors(['/efs/app', '/mirror/app'], ['/efs/app', '/mirror/app']), error: /^Invalid mirrors: mirrors\[0\] and mirrors\[1\] have the same path '\/efs\/app'/ },
  { name: 'imported fleet: a mirror inside another', build: importedMirrors(['/efs/app', '/mirror/app'], ['/efs/app/lib', '/mirror/app/lib']), error: /^Invalid mirrors: the path '\/efs\/app\/lib' is inside '\/efs\/app' \(mirrors\[0\] and mirrors\[1\]\)/ },
  { name: 'imported fleet: two mirrors with one fsid', build: importedMirrors(['/efs/app', '/mirror/app', FSIDS[0]], ['/efs/lib', '/mirror/lib', FSIDS[0]]), error: /^Invalid mirrors: mirrors\[0\] and mirrors\[1\] have the same fsid/ },
  { name: 'fleet: a mirror path with //', build: fleet({ mirrorPaths: ['/efs/app', '/efs//app'] }), error: /^Invalid mirrorPaths: '\/efs\/\/app' is not an absolute path/ },
  // The directories a client mounts on: none on or inside another
  { name: 'client: a source mirror twice', build: mirrorClient({ mirrorPaths: ['/efs/app', '/efs/app'] }), error: /^Invalid source\.mirrorPaths: lists '\/efs\/app' twice/ },
  { name: 'client: a mirror twice (deprecated props)', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, cacheFleet: new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app'] }), mirrorPaths: ['/efs/app', '/efs/app'] }), error: /^Invalid mirrorPaths: lists '\/efs\/app' twice/ },
  { name: 'client: mirrors inside the fsc mount', build: mirrorClient({ mirrorPaths: ['/efs/app'], mirrorMountPoint: '/mnt/efs' }), error: /^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/mnt\/efs\/app', inside mountPoint '\/mnt\/efs' \(the fsc mount .*\): choose a source\.mirrorMountPoint apart from it, e\.g\. '\/mnt\/mirror', or another mountPoint\./ },
  { name: 'client: a mirror on the fsc mount\'s directory', build: mirrorClient({ mirrorPaths: ['/efs/app'], mirrorMountPoint: '/mnt' }, { mountPoint: '/mnt/app' }), error: /^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/mnt\/app', on the very directory of mountPoint '\/mnt\/app'/ },
  { name: 'client: the fsc mount inside a mirror', build: mirrorClient({ mirrorPaths: ['/efs/www/vendor'] }, { mountPoint: '/mnt/mirror/www/vendor/efs' }), error: /^Invalid source\.mirrorMountPoint: the mirror '\/efs\/www\/vendor' would be mounted at '\/mnt\/mirror\/www\/vendor', over mountPoint '\/mnt\/mirror\/www\/vendor\/efs'.*e\.g\. '\/srv\/mirror'/ },
  { name: 'client: a mirror inside the cache directory', build: mirrorClient({ mirrorPaths: ['/efs/app'], mirrorMountPoint: '/var/cache/fscache/mirror' }), error: /^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/var\/cache\/fscache\/mirror\/app', inside cacheDirectory '\/var\/cache\/fscache' \(cachefilesd's cache\): .*or another cacheDirectory\./ },
  { name: 'client: the cache directory inside a mirror (deprecated props)', build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, cacheFleet: new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack), mirrorPaths: ['/efs/app'] }), mirrorPaths: ['/efs/app'], cacheDirectory: '/mnt/mirror/app/cache' }), error: /^Invalid mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/mnt\/mirror\/app', over cacheDirectory '\/mnt\/mirror\/app\/cache'/ },
  { name: 'client: two mirrors of a fleet of its own on one directory', build: ownFleetClient([['/efs/a', '/mirror/app'], ['/efs/b', '/mirror/app']]), error: /^Invalid source\.mirrorPaths: '\/efs\/a' and '\/efs\/b' would both be mounted at '\/mnt\/mirror\/app'/ },
  { name: 'client: a mirror of a fleet of its own inside another', build: ownFleetClient([['/efs/a', '/mirror/app'], ['/efs/b', '/mirror/app/lib']]), error: /^Invalid source\.mirrorPaths: the mirror '\/efs\/b' would be mounted at '\/mnt\/mirror\/app\/lib', inside the mount of '\/efs\/a'/ },
  { name: 'client: a mirror of a fleet of its own at a path outside /mirror', build: ownFleetClient([['/efs/a', '/etc']]), error: /^Invalid source\.mirrorPaths: '\/efs\/a' is served by .* at '\/etc', which is not a path under \/mirror/ },
  { name: 'client: the mount point inside the cache directory', build: client({ mountPoint: '/var/cache/fscache/efs' }), error: /^Invalid mountPoint: '\/var\/cache\/fscache\/efs' is inside cacheDirectory '\/var\/cache\/fscache': .*Choose a mountPoint and a cacheDirectory apart/ },
  { name: 'client: the cache directory inside the mount point', build: client({ cacheDirectory: '/mnt/efs/cache' }), error: /^Invalid mountPoint: '\/mnt\/efs' contains cacheDirectory '\/mnt\/efs\/cache': the file system would be mounted over the cache file system/ },
];

describe('bad input names the prop', () => {
  test('the table is what the issue asks for: at least 20 cases, each message naming a prop', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    for (const c of CASES) {
      expect([c.error, c.warning].filter(Boolean)).toHaveLength(1);
      if (c.error) expect(c.error.source).toMatch(/^\^Invalid [A-Za-z]+(\\?\.[A-Za-z]+)*(:|$)/);
      if (c.warning) expect(c.warning.source).toMatch(/^\^[A-Za-z]+(\\?\.[A-Za-z]+)*:/);
    }
  });

  test.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const { stack, vpc } = stackWithVpc(undefined, undefined, c.region ? { region: c.region } : undefined);
    if (c.error) {
      expect(() => c.build(stack, vpc)).toThrow(c.error);
    } else {
      c.build(stack, vpc);
      Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp(c.warning!.source));
    }
  });
});
