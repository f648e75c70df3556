import * as fs from 'fs';
import * as path from 'path';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  DiskCache,
  DiskCacheMetric,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MirrorMetric,
  MountHelper,
  MountSource,
  NfsVersion,
  SeedSource,
} from '../lib';
import { importedFs, stackWithVpc } from './util';
import { flatten, launchTemplateUserData, parameters } from './util/user-data';

/**
 * What must not change across versions of the library, pinned as literal values: a deployed fleet that is upgraded
 * keeps them, or every client's file handles go stale (fsids) and nodes stop finding their identity (tag names).
 * The values were computed by the derivation that ships; a change to it fails here, whatever else still passes.
 */
function nodeParameters(protocol: NfsVersion): { params: Record<string, string>; template: Template } {
  const { stack, vpc } = stackWithVpc(undefined, 'Pinned');
  new CacheFleet(stack, 'Fleet', {
    vpc,
    origin: CacheOrigin.efs(importedFs(stack)),
    originPath: '/data',
    mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www/static')],
    clientNfsVersion: protocol,
  });
  const userData = Object.values(launchTemplateUserData(stack));
  expect(userData).toHaveLength(1);
  return { params: parameters(userData[0]), template: Template.fromStack(stack) };
}

describe('upgrade contract', () => {
  test.each([
    [NfsVersion.NFS_V4_1, 'b37e23b0-6404-adad-319e-369fa3d5d47f'],
    [NfsVersion.NFS_V3, '863904690'],
  ])('the export fsid of fleet Pinned/Fleet over /data (%s) is pinned', (protocol, fsid) => {
    expect(nodeParameters(protocol).params.EFSC_EXPORT_FSID).toBe(fsid);
  });

  test.each([
    [NfsVersion.NFS_V4_1, 'dbe662d3-8a1c-3e17-d322-8282a8544d2b'],
    [NfsVersion.NFS_V3, '1541825237'],
  ])('the export fsid of fleet Pinned/Fleet over an NFS server\'s /srv, at /data (%s), is pinned: host and version are no part of it', (protocol, fsid) => {
    for (const [host, version] of [['nas.example.internal', NfsVersion.NFS_V3], ['10.20.0.5', NfsVersion.NFS_V4_2]] as const) {
      const { stack, vpc } = stackWithVpc(undefined, 'Pinned');
      const fleet = new CacheFleet(stack, 'Fleet', {
        vpc, originPath: '/data', clientNfsVersion: protocol,
        origin: CacheOrigin.nfsServer({ host, exportPath: '/srv', nfsVersion: version, peer: ec2.Peer.ipv4('10.20.0.0/16') }),
      });
      expect(fleet.fsid).toBe(fsid);
    }
  });

  test('mirror fsids are pinned, in the order of the path mirrors, and do not depend on the client protocol', () => {
    for (const protocol of [NfsVersion.NFS_V4_1, NfsVersion.NFS_V3]) {
      const { params } = nodeParameters(protocol);
      expect(params.EFSC_MIRROR_PATHS).toBe('/efs/app /efs/www/static');
      expect(params.EFSC_MIRROR_FSIDS).toBe('4ef15917-cc5e-c97b-c462-beb4a33a03b1 d07f34a3-d22c-af5e-5414-e52684201e0c');
    }
  });

  test('the mirrors\' port is pinned: deployed clients mount the mirrors with port=2050 in their fstab', () => {
    for (const protocol of [NfsVersion.NFS_V4_1, NfsVersion.NFS_V3]) {
      expect(nodeParameters(protocol).params.EFSC_MIRROR_PORT).toBe('2050');
    }
    expect(CacheFleet.MIRROR_PORT).toBe(2050);
  });

  test('the tag names nodes read at boot are pinned, on the groups and in the scripts that read them', () => {
    const { template } = nodeParameters(NfsVersion.NFS_V4_1);
    const groups = Object.values(template.findResources('AWS::AutoScaling::AutoScalingGroup'));
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) {
      const keys = (g.Properties.Tags as Array<{ Key: string; PropagateAtLaunch: boolean }>)
        .filter((t) => t.PropagateAtLaunch).map((t) => t.Key).sort();
      expect(keys).toEqual(['cdk-efs-cache:fleet', 'cdk-efs-cache:signal-resource', 'cdk-efs-cache:stable-eni']);
    }
    const scripts = ['assets/cache-node/bootstrap.sh', ...fs.readdirSync(path.join(__dirname, '..', 'assets', 'lib')).map((f) => `assets/lib/${f}`)]
      .filter((f) => fs.statSync(path.join(__dirname, '..', f)).isFile())
      .map((f) => fs.readFileSync(path.join(__dirname, '..', f), 'utf8')).join('\n');
    // node_identity asks the metadata service for cdk-efs-cache:<name> of each name it lists.
    expect(scripts).toContain('meta-data/tags/instance/cdk-efs-cache:');
    for (const name of ['signal-resource', 'stable-eni']) expect(scripts).toMatch(new RegExp(`\\b${name}:EFSC_[A-Z_]+\\b`));
  });

  test('an S3 mirror\'s fsid and every export path are pinned: clients mount these paths by these handles', () => {
    const { stack, vpc } = stackWithVpc(undefined, 'Pinned');
    const fleet = new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), originPath: '/data', capacity: Capacity.nodes(2),
      mirrors: [
        Mirror.path('/efs/app'), Mirror.path('/efs/www/static'),
        Mirror.s3(s3.Bucket.fromBucketName(stack, 'Site', 'example-site'), 'site/'),
      ],
    });
    const params = parameters(Object.values(launchTemplateUserData(stack))[0]);
    expect(fleet.exportPath).toBe('/efs');
    expect(params.EFSC_EXPORT_PATH).toBe('/efs');
    expect(fleet.mirrorExports).toEqual([
      { path: '/efs/app', exportPath: '/mirror/app', fsid: '4ef15917-cc5e-c97b-c462-beb4a33a03b1' },
      { path: '/efs/www/static', exportPath: '/mirror/www/static', fsid: 'd07f34a3-d22c-af5e-5414-e52684201e0c' },
      { path: '/mirror/site', exportPath: '/mirror/site', fsid: '18556618-a54d-fd6b-0271-a626c0e9d60d' },
    ]);
    expect(params.EFSC_MIRROR_S3_NAMES).toBe('site');
    expect(params.EFSC_MIRROR_S3_FSIDS).toBe('18556618-a54d-fd6b-0271-a626c0e9d60d');
  });

  test('the names clients mount and the metrics dimension are pinned: fstabs and metric history outlive an upgrade', () => {
    const { params, template } = nodeParameters(NfsVersion.NFS_V4_1);
    const names = Object.values(template.findResources('AWS::Route53::RecordSet'))
      .map((r) => (typeof r.Properties.Name === 'string' ? r.Properties.Name : flatten(r.Properties.Name, (k) => `<${k}>`))).sort();
    expect(names).toEqual([
      '<Fn::Select:[0,{"Fn::GetAZs":""}]>.cache.efs-cache.internal.',
      '<Fn::Select:[1,{"Fn::GetAZs":""}]>.cache.efs-cache.internal.',
      'cache.efs-cache.internal.',
      'node1.cache.efs-cache.internal.',
      'node2.cache.efs-cache.internal.',
    ]);
    expect(params.EFSC_METRICS_GROUP).toBe('Pinned/Fleet');
  });

  test('the spellings the scripts read are pinned: mount types and versions, cache sources, seed source kinds', () => {
    const { stack, vpc } = stackWithVpc(undefined, 'Pinned');
    const fileSystem = importedFs(stack);
    new CacheFleet(stack, 'OverEfs', { vpc, origin: CacheOrigin.efs(fileSystem), capacity: Capacity.nodes(1) });
    new CacheFleet(stack, 'Nfs4', {
      vpc, origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), fanOut: FanOut.route53({ zoneName: 'nfs4.internal' }),
    });
    new CacheFleet(stack, 'Nas', {
      vpc, capacity: Capacity.nodes(1), fanOut: FanOut.route53({ zoneName: 'nas.internal' }),
      origin: CacheOrigin.nfsServer({ host: '10.20.0.5', exportPath: '/srv', nfsVersion: NfsVersion.NFS_V4_2, peer: ec2.Peer.ipv4('10.20.0.0/16') }),
    });
    new FsCacheClientLaunchTemplate(stack, 'Store', { vpc, source: MountSource.fileSystem(fileSystem) });
    new FsCacheClientLaunchTemplate(stack, 'Ebs', {
      vpc, source: MountSource.fileSystem(fileSystem), instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs(),
    });
    const byId = (prefix: string) => {
      const entry = Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith(prefix));
      expect(entry).toBeDefined();
      return parameters(entry![1]);
    };
    expect(byId('OverEfsLaunchTemplate').EFSC_ORIGIN_MOUNT_TYPE).toBe('efs');
    expect(byId('Nfs4LaunchTemplate').EFSC_ORIGIN_MOUNT_TYPE).toBe('nfs4');
    expect(byId('NasLaunchTemplate').EFSC_ORIGIN_MOUNT_TYPE).toBe('nfs4');
    expect(byId('NasLaunchTemplate').EFSC_ORIGIN_MOUNT_OPTIONS).toMatch(/^nfsvers=4\.2,/);
    expect(byId('Store').EFSC_CACHE_SOURCE).toBe('instance-store');
    expect(byId('Ebs').EFSC_CACHE_SOURCE).toBe('ebs');

    const bucket = s3.Bucket.fromBucketName(stack, 'Data', 'example-data');
    const kinds: Record<string, SeedSource> = {
      s3: SeedSource.s3(bucket, 'train/'), local: SeedSource.instanceDirectory('/opt/data'),
      asset: SeedSource.asset(path.join(__dirname, '..', 'assets', 'lib')),
    };
    for (const [kind, source] of Object.entries(kinds)) {
      const seeder = new DataSeeder(stack, `Seed-${kind}`, { vpc, fileSystem, source });
      const instance = seeder.node.findAll().find((c) => c instanceof ec2.CfnInstance) as ec2.CfnInstance;
      expect(parameters(flatten(stack.resolve(instance.userData), (k) => `<${k}>`)).EFSC_SOURCE_KIND).toBe(kind);
    }
  });

  test('the metric names nodes and clients publish are pinned: dashboards and alarms outside the stack use them', () => {
    expect(Object.entries(DiskCacheMetric)).toEqual([
      ['READ_BYTES', 'CacheDiskReadBytes'], ['WRITE_BYTES', 'CacheDiskWriteBytes'], ['GROWTH_BYTES', 'CacheDiskGrowthBytes'],
      ['FREE_PERCENT', 'CacheDiskFreePercent'], ['FSCACHE_READS', 'FscacheReads'], ['FSCACHE_WRITES', 'FscacheWrites'],
      ['FSCACHE_CULLED', 'FscacheCulled'],
    ]);
    expect(Object.entries(MirrorMetric)).toEqual([
      ['SYNC_FAILURES', 'MirrorSyncFailures'], ['AGE_SECONDS', 'MirrorAgeSeconds'], ['SYNC_SECONDS', 'MirrorSyncSeconds'],
      ['FILES_WALKED', 'MirrorFilesWalked'], ['FULL', 'MirrorFull'], ['BYTES', 'MirrorBytes'], ['ORIGIN_OPS', 'MirrorOriginOps'],
    ]);
  });
});
