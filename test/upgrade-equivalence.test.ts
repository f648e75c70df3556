import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Duration, RemovalPolicy, Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  DiskCache,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MirrorStorage,
  MountHelper,
  MountSource,
  NfsVersion,
  NodeDiskCache,
  SeedSource,
} from '../lib';
import { MATRIX } from './heavy/gates/matrix';
import { importedFs, newApp, stackWithVpc } from './util';
import { flatten, parameters } from './util/user-data';

/**
 * What a deployed stack keeps when the library changes how it is written (the 0.2 vocabulary, grouped props, modes as
 * union classes): for each configuration, every stack's logical ids and resource types, the `EFSC_*` parameters of
 * every launch template and instance, and a digest of the whole template. A refactor that means to change none of
 * these must leave this file's snapshot as it is; one that changes them on purpose says so in the CHANGELOG and the
 * upgrade table, and its commit updates the snapshot with `jest -u` and says why.
 *
 * The cases are the gates' configurations (test/heavy/gates/matrix.ts, which touch every option family once) and one case
 * for each prop those leave at its default. Two things vary with the code and not with the configuration, and are
 * replaced before the snapshot: asset hashes (`[HASH]`), and the suffix a DataSeeder's instance id takes from a hash of
 * its user data (`[REPLACED ON CHANGE]`), which names the code's asset.
 */

interface Case {
  readonly name: string;
  readonly build: (app: App) => void;
}

const armClient = new ec2.InstanceType('c6gd.2xlarge');
/** A DataSeeder's asset: one small file (its hash is replaced in the snapshot, like every asset's). */
const assetDir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-equivalence-'));
fs.writeFileSync(path.join(assetDir, 'a.txt'), 'hello\n');
afterAll(() => fs.rmSync(assetDir, { recursive: true, force: true }));

const EXTRA: Case[] = [
  {
    name: 'FleetEveryTuningAndWarming',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Tuned');
      new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(2), originPath: '/data', exportPath: '/cache',
        clientCidrs: ['10.50.0.0/16'],
        attributeCacheTimeout: Duration.seconds(30), directoryCacheTimeout: Duration.seconds(20), closeToOpenConsistency: true,
        tuning: { nfsdThreads: 128, readAhead: Size.mebibytes(4), sunrpcSlotTableEntries: 256, vfsCachePressure: 50 },
        warming: { paths: ['/cache/models'], workers: 8, rewarmInterval: Duration.hours(6) }, workingSetSize: Size.gibibytes(40),
        mountTimeout: Duration.minutes(3), signalTimeout: Duration.minutes(30), rootVolumeSize: Size.gibibytes(40),
        metrics: false,
      });
    },
  },
  {
    name: 'FleetDiskCacheChoices',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'DiskCache');
      const origin = CacheOrigin.efs(importedFs(stack));
      new CacheFleet(stack, 'Off', {
        vpc, origin, capacity: Capacity.nodes(1), instanceType: new ec2.InstanceType('c7gd.16xlarge'),
        nodeDiskCache: NodeDiskCache.none(),
      });
      new CacheFleet(stack, 'Strict', {
        vpc, origin, capacity: Capacity.nodes(1), instanceType: new ec2.InstanceType('c7gd.16xlarge'),
        nodeDiskCache: NodeDiskCache.instanceStore({ deviceModel: 'Amazon EC2 NVMe Instance Storage', requireSelfTest: true }),
        fanOut: FanOut.route53({ zoneName: 'strict.internal' }),
      });
    },
  },
  {
    name: 'FleetMirrorsEverySetting',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Mirrors');
      const bucket = s3.Bucket.fromBucketName(stack, 'Site', 'example-site');
      const fleet = new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(2),
        mirrors: [
          Mirror.path('/efs/app'), Mirror.path('/efs/www/static'),
          Mirror.s3(bucket, 'site/'), Mirror.s3(bucket, '', { name: 'all' }),
        ],
        mirroring: {
          interval: Duration.minutes(10), size: Size.gibibytes(20), storage: MirrorStorage.INSTANCE_STORE,
          syncTimeout: Duration.minutes(20), syncWorkers: 8, changeMarker: '.release', fullSyncInterval: Duration.hours(12),
        },
        instanceType: new ec2.InstanceType('c7gd.16xlarge'),
      });
      new FsCacheClientLaunchTemplate(stack, 'Clients', {
        vpc, instanceType: armClient, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app', '/mirror/site'], mirrorMountPoint: '/srv/mirrors' }),
      });
    },
  },
  {
    name: 'Route53OwnZoneManyNodes',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'OwnZone');
      const hostedZone = new route53.PrivateHostedZone(stack, 'Zone', { zoneName: 'corp.internal', vpc });
      new CacheFleet(stack, 'Given', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(2),
        fanOut: FanOut.route53({ hostedZone, recordName: 'models', recordTtl: Duration.seconds(30) }),
      });
      // Eleven nodes under a CachedFileSystem: its dashboard's per-node alarms, and the composite alarm over them.
      new CachedFileSystem(stack, 'Eleven', {
        vpc, cacheFleet: { capacity: Capacity.nodes(11), fanOut: FanOut.route53({ zoneName: 'eleven.internal', recordName: 'data' }) },
        monitoring: { dashboardName: 'eleven', percentIoLimitThreshold: 80, throughputUtilizationThreshold: 70 },
      });
    },
  },
  {
    name: 'NlbEverySetting',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Nlb');
      new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(3),
        fanOut: FanOut.networkLoadBalancer({
          idleTimeout: Duration.minutes(10), crossZone: false,
          accessLogs: { bucket: s3.Bucket.fromBucketName(stack, 'Logs', 'example-nlb-logs'), prefix: 'efs-cache' },
        }),
      });
    },
  },
  {
    name: 'ElasticEveryField',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Elastic');
      new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer(),
        capacity: Capacity.elastic({
          minNodes: 2, maxNodes: 12, targetNetworkOutPerNode: Size.gibibytes(2), scaleInCooldown: Duration.minutes(20),
          drainTimeout: Duration.minutes(3),
        }),
        signalTimeout: Duration.minutes(25),
      });
    },
  },
  {
    name: 'NfsServerV3ClientsDeprecatedFileSystem',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Legacy');
      new CacheFleet(stack, 'Nfs', {
        vpc, capacity: Capacity.nodes(2), clientNfsVersion: NfsVersion.NFS_V3,
        origin: CacheOrigin.nfsServer({
          host: '10.20.0.5', exportPath: '/srv', nfsVersion: NfsVersion.NFS_V3, ports: { lockd: 4045, mountd: 20048 },
          peer: ec2.Peer.ipv4('10.20.0.0/24'),
        }),
      });
      // Given in 0.1 as the `fileSystem` prop, which 0.2 removed (the case keeps its name, the snapshot's key).
      new CacheFleet(stack, 'EfsFleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), fanOut: FanOut.route53({ zoneName: 'legacy.internal' }),
      });
    },
  },
  {
    name: 'ImportedFleetClientsInAnotherStack',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Fleet');
      const fleet = new CacheFleet(stack, 'Fleet', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(2), mirrors: [Mirror.path('/efs/app')], clientNfsVersion: NfsVersion.NFS_V3,
      });
      const clients = new Stack(app, 'Clients');
      const clientVpc = ec2.Vpc.fromVpcAttributes(clients, 'Vpc', {
        vpcId: 'vpc-0123456789abcdef0', availabilityZones: ['us-east-1a', 'us-east-1b'],
        privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
      });
      const imported = CacheFleet.fromCacheFleetAttributes(clients, 'Imported', {
        endpoint: 'cache.efs-cache.internal',
        securityGroup: ec2.SecurityGroup.fromSecurityGroupId(clients, 'FleetSg', 'sg-0123456789abcdef1'),
        exportPath: fleet.exportPath, clientNfsVersion: NfsVersion.NFS_V3,
        mirrorExports: fleet.mirrorExports.map((m) => ({ path: m.path, exportPath: m.exportPath })),
      });
      new FsCacheClientLaunchTemplate(clients, 'Readers', {
        vpc: clientVpc, instanceType: armClient, source: MountSource.cacheFleet(imported, { mirrorPaths: ['/efs/app'] }),
      });
    },
  },
  {
    name: 'ClientEveryOption',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Client');
      const fileSystem = importedFs(stack);
      new FsCacheClientLaunchTemplate(stack, 'Ebs', {
        vpc, source: MountSource.fileSystem(fileSystem), instanceType: new ec2.InstanceType('c7g.xlarge'),
        diskCache: DiskCache.ebs({ volumeSize: Size.gibibytes(200) }), cacheDirectory: '/var/cache/fs', cacheTag: 'models',
        cullLimits: { blocksRun: 12, blocksCull: 8, blocksStop: 4, filesRun: 12, filesCull: 8, filesStop: 4 },
        mountPoint: '/data', mountOptions: ['fsc', 'nconnect=8'], mountHelper: MountHelper.EFS_UTILS, tlsPort: 20449,
        mountTimeout: Duration.minutes(4), readOnly: true, rootVolumeSize: Size.gibibytes(30), metrics: false,
      });
      new FsCacheClientLaunchTemplate(stack, 'InstanceStore', {
        vpc, source: MountSource.fileSystem(fileSystem), instanceType: new ec2.InstanceType('m6id.xlarge'),
        diskCache: DiskCache.instanceStore({ deviceModel: 'Amazon EC2 NVMe Instance Storage', initializeDevices: true }),
        securityGroup: new ec2.SecurityGroup(stack, 'ClientSg', { vpc, allowAllOutbound: false }),
        role: new iam.Role(stack, 'ClientRole', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') }),
      });
    },
  },
  {
    name: 'SeederOfEachSource',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Seeders');
      const fileSystem = importedFs(stack);
      new DataSeeder(stack, 'FromBucket', {
        vpc, fileSystem, source: SeedSource.s3(s3.Bucket.fromBucketName(stack, 'Data', 'example-data'), 'train/'),
        targetPath: '/train', workers: 16, filesPerPart: 500, deleteExtraneous: true, version: '2',
        mountHelper: MountHelper.NFS, mountTimeout: Duration.minutes(4), signalTimeout: Duration.hours(3),
        progressInterval: Duration.minutes(2), rootVolumeSize: Size.gibibytes(50),
      });
      new DataSeeder(stack, 'FromAsset', { vpc, fileSystem, source: SeedSource.asset(assetDir), targetPath: '/asset' });
      new DataSeeder(stack, 'FromDirectory', { vpc, fileSystem, source: SeedSource.instanceDirectory('/opt/data'), targetPath: '/local' });
    },
  },
  {
    name: 'CachedFileSystemOriginOptionsNoDashboard',
    build: (app) => {
      const { stack, vpc } = stackWithVpc(app, 'Cfs');
      const cfs = new CachedFileSystem(stack, 'Data', {
        vpc,
        originFileSystem: {
          removalPolicy: RemovalPolicy.DESTROY, confirmDataLoss: true, kmsKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }),
          throughputMode: efs.ThroughputMode.PROVISIONED, provisionedThroughputPerSecond: Size.mebibytes(256),
          performanceMode: efs.PerformanceMode.MAX_IO, enableAutomaticBackups: false, fileSystemName: 'models',
        },
        cacheFleet: { capacity: Capacity.nodes(1) },
        dashboard: false,
      });
      cfs.addClientLaunchTemplate('Direct', { instanceType: armClient, source: MountSource.fileSystem(cfs.originFileSystem.fileSystem) });
      cfs.addClientLaunchTemplate('Cached', { instanceType: armClient, source: MountSource.cacheFleet(cfs.cacheFleet!) });
    },
  },
];

/** An id that ends with a DataSeeder's replace-on-change suffix (16 upper-case hex digits after CDK's own 8). */
const SEEDER_SUFFIX = /^(.*[0-9A-F]{8})[0-9A-F]{16}$/;

interface StackSummary {
  readonly resources: string[];
  readonly parameters: Record<string, Record<string, string>>;
  readonly digest: string;
}

function summarize(app: App): Record<string, StackSummary> {
  const out: Record<string, StackSummary> = {};
  const stacks = [...app.synth().stacks].sort((a, b) => a.stackName.localeCompare(b.stackName));
  for (const artifact of stacks) {
    let text = JSON.stringify(artifact.template);
    const resources = artifact.template.Resources as Record<string, { Type: string; Properties?: Record<string, any> }>;
    for (const [id, r] of Object.entries(resources)) {
      const m = r.Type === 'AWS::EC2::Instance' ? SEEDER_SUFFIX.exec(id) : null;
      if (m) text = text.split(id).join(`${m[1]}[REPLACED ON CHANGE]`);
    }
    text = text.replace(/[0-9a-f]{64}/g, '[HASH]');
    const template = JSON.parse(text) as { Resources: typeof resources };
    const params: Record<string, Record<string, string>> = {};
    for (const [id, r] of Object.entries(template.Resources)) {
      const ud = r.Type === 'AWS::EC2::LaunchTemplate' ? r.Properties?.LaunchTemplateData?.UserData
        : r.Type === 'AWS::EC2::Instance' ? r.Properties?.UserData : undefined;
      if (ud) params[id] = parameters(flatten(ud, (k) => `<${k}>`));
    }
    out[artifact.stackName] = {
      resources: Object.entries(template.Resources).map(([id, r]) => `${id} ${r.Type}`).sort(),
      parameters: params,
      digest: crypto.createHash('sha256').update(text).digest('hex'),
    };
  }
  return out;
}

const CASES: Case[] = [...MATRIX.map((c) => ({ name: c.name, build: (app: App) => void c.build(app) })), ...EXTRA];

describe('upgrade equivalence', () => {
  test('the cases have distinct names', () => {
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  test.each(CASES.map((c) => [c.name, c] as const))('%s: the same logical ids, parameters and template as recorded', (_, c) => {
    const app = newApp();
    try {
      c.build(app);
      const summary = summarize(app);
      expect(Object.keys(summary).length).toBeGreaterThan(0);
      expect(summary).toMatchSnapshot();
    } finally {
      fs.rmSync(app.outdir, { recursive: true, force: true });
    }
  });
});
