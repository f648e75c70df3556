import { Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CachedFileSystem,
  CacheFleet,
  CacheFleetProps,
  CacheOrigin,
  Capacity,
  EfsOriginOptions,
  FsCacheClientLaunchTemplate,
  Mirror,
  MirrorStorage,
  MountHelper,
  MountSource,
  NfsVersion,
  NodeDiskCache,
} from '../../lib';
import { mirrorFsid } from '../../lib/cache-fleet/mirror-paths';
import { renderedCode } from '../../lib/instance/user-data';
import { NFS_MIRROR_PORT } from '../../lib/nfs/ports';
import { importedFs, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { launchTemplateUserData, parameters } from '../util/user-data';

function fleet(props: Partial<CacheFleetProps> = {}, id = 'Fleet', originOptions: EfsOriginOptions = {}) {
  const { stack, vpc } = stackWithVpc();
  const f = new CacheFleet(stack, id, { vpc, origin: CacheOrigin.efs(importedFs(stack), originOptions), ...props });
  const userData = Object.values(launchTemplateUserData(stack, (k) => (k.includes('CidrBlock') ? '10.0.0.0/16' : 'lab')))[0];
  return { fleet: f, t: Template.fromStack(stack), userData, params: parameters(userData) };
}

describe('CacheFleet mirrors', () => {
  test('without mirrors the nodes get empty mirror paths, none of the mirrors\' settings, and the fleet no mirror', () => {
    const { fleet: f, params } = fleet();
    expect(f.mirrorExports).toEqual([]);
    expect(params).toMatchObject({ EFSC_MIRROR_PATHS: '' });
    expect(params.EFSC_MIRROR_FSIDS).toBeUndefined();
    expect(params.EFSC_MIRROR_INTERVAL).toBeUndefined();
    // Besides the empty paths, only the facts every node gets: the port, namespace and root of the mirrors (the
    // drain checks the port and the namespace whatever the configuration).
    expect(Object.keys(params).filter((k) => k.startsWith('EFSC_MIRROR_')).sort())
      .toEqual(['EFSC_MIRROR_NAMESPACE', 'EFSC_MIRROR_PATHS', 'EFSC_MIRROR_PORT', 'EFSC_MIRROR_ROOT']);
  });

  test('every fleet\'s code is the same, lib/mirror.sh included; mirror paths without the mirrors\' settings are refused', () => {
    const without = fleet();
    const code = renderedCode(without.userData);
    expect(code).toMatch(/mirror_sync_one\(\) \{/);
    expect(renderedCode(fleet({ mirrors: [Mirror.path('/efs/app')] }).userData)).toBe(code);
    const bad = without.userData.replace("EFSC_MIRROR_PATHS=''", "EFSC_MIRROR_PATHS='/efs/app'");
    expect(bad).not.toBe(without.userData);
    const run = runScript(bad, ['--metrics'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: EFSC_MIRROR_FSIDS: 0 fsids for 1 mirror paths/);
  });

  test('mirror paths, fsids, interval, size, timeout and the sync\'s own origin mount are rendered', () => {
    const { fleet: f, params } = fleet({
      mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www/vendor')],
      mirroring: { interval: Duration.seconds(90), size: Size.gibibytes(2), syncTimeout: Duration.minutes(5), syncWorkers: 16 },
    });
    expect(f.mirrorExports.map((m) => [m.path, m.exportPath])).toEqual([['/efs/app', '/mirror/app'], ['/efs/www/vendor', '/mirror/www/vendor']]);
    expect(params).toMatchObject({
      EFSC_MIRROR_PATHS: '/efs/app /efs/www/vendor',
      EFSC_MIRROR_FSIDS: f.mirrorExports.map((m) => m.fsid).join(' '),
      // The mirrors' own nfsd, reached through the node's DNAT rule on this port; the re-export stays on 2049.
      EFSC_MIRROR_PORT: '2050',
      EFSC_MIRROR_INTERVAL: '90s',
      EFSC_MIRROR_SIZE_MB: '2048',
      EFSC_MIRROR_TIMEOUT_SEC: '300',
      EFSC_MIRROR_WORKERS: '16',
    });
    // A mount of its own, made afresh for each sync: read-only, its own superblock, attributes kept for longer than a
    // sync (the walk's stats answered from the READDIR replies), no atime (a stat would ask for it).
    expect(params.EFSC_MIRROR_SOURCE_OPTIONS.split(',')).toEqual([
      'tls', 'iam', 'nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport',
      'ro', 'nosharecache', 'actimeo=3600', 'noatime',
    ]);
  });

  test('a change marker renders its path, the full sync interval and the options of the marker\'s own mount; none without one', () => {
    const { params } = fleet({ mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/lib')], mirroring: { changeMarker: 'deploy/.published', fullSyncInterval: Duration.hours(6) } });
    expect(params).toMatchObject({ EFSC_MIRROR_MARKER: 'deploy/.published', EFSC_MIRROR_FULL_SEC: '21600' });
    // Kept between syncs for the markers' stats alone: read-only, its own superblock, no attribute cache (each stat
    // asks the origin).
    expect(params.EFSC_MIRROR_MARKER_OPTIONS.split(',')).toEqual([
      'tls', 'iam', 'nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport',
      'ro', 'nosharecache', 'actimeo=0',
    ]);
    const plain = fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published' } }, 'Fleet', { mountHelper: MountHelper.NFS }).params;
    expect(plain).toMatchObject({ EFSC_MIRROR_MARKER: '.published', EFSC_MIRROR_FULL_SEC: '3600' });
    expect(plain.EFSC_MIRROR_MARKER_OPTIONS).toBe('nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,nosharecache,actimeo=0');
    for (const without of [fleet({ mirrors: [Mirror.path('/efs/app')] }).params, fleet().params]) {
      expect(Object.keys(without).filter((k) => /^EFSC_MIRROR_(MARKER|FULL)/.test(k))).toEqual([]);
    }
    // A full sync interval equal to the mirror interval is allowed.
    expect(fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.p', interval: Duration.hours(2), fullSyncInterval: Duration.hours(2) } }).params.EFSC_MIRROR_FULL_SEC).toBe('7200');
  });

  test('the node script takes a user data without a marker, and refuses marker parameters that are invalid', () => {
    const tags = { 'cdk-efs-cache:signal-resource': 'FleetNode1GroupASG' };
    const refusal = (ud: string) => runScript(ud, [], { tags }).stderr.split('\n').find((l) => /FATAL/.test(l)) ?? '';
    const { userData } = fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published' } });
    const plain = fleet({ mirrors: [Mirror.path('/efs/app')] }).userData;
    // Past the parameters' check (mirror_check is its last step), the stubbed node stops where one without a marker does.
    expect(refusal(userData)).not.toMatch(/EFSC_MIRROR/);
    expect(refusal(userData)).toBe(refusal(plain));
    expect(refusal(plain)).toMatch(/FATAL: could not install/);
    expect(userData).toContain("EFSC_MIRROR_MARKER='.published'");
    const bad = (from: string, to: string) => {
      const ud = userData.replace(from, to);
      expect(ud).not.toBe(userData);
      return refusal(ud);
    };
    expect(bad("EFSC_MIRROR_MARKER='.published'", "EFSC_MIRROR_MARKER='/abs'")).toMatch(/FATAL: EFSC_MIRROR_MARKER='\/abs' is invalid: expected a path relative to each mirror/);
    expect(bad("EFSC_MIRROR_MARKER='.published'", "EFSC_MIRROR_MARKER='a/../b'")).toMatch(/FATAL: EFSC_MIRROR_MARKER='a\/\.\.\/b' is invalid: expected no \. or \.\. component/);
    expect(bad("EFSC_MIRROR_FULL_SEC='3600'", "EFSC_MIRROR_FULL_SEC='0'")).toMatch(/FATAL: EFSC_MIRROR_FULL_SEC='0' is invalid/);
    expect(bad("EFSC_MIRROR_FULL_SEC='3600'", "EFSC_MIRROR_FULL_SEC=''")).toMatch(/FATAL: EFSC_MIRROR_FULL_SEC='' is invalid/);
    expect(bad(/EFSC_MIRROR_MARKER_OPTIONS='[^']*'/.exec(userData)![0], "EFSC_MIRROR_MARKER_OPTIONS='a b'")).toMatch(/FATAL: EFSC_MIRROR_MARKER_OPTIONS='a b' is invalid/);
  });

  test('defaults: one minute, 1 GiB, 10 minutes, 8 sync jobs; plain NFS without tls and iam', () => {
    const { params } = fleet({ mirrors: [Mirror.path('/efs/app')] }, 'Fleet', { mountHelper: MountHelper.NFS });
    expect(params).toMatchObject({ EFSC_MIRROR_INTERVAL: '60s', EFSC_MIRROR_SIZE_MB: '1024', EFSC_MIRROR_TIMEOUT_SEC: '600', EFSC_MIRROR_WORKERS: '8' });
    expect(params.EFSC_MIRROR_SOURCE_OPTIONS).toMatch(/^nfsvers=4\.1,/);
  });

  test('storage: memory on a type without instance store, the instance store where the nodes keep the disk cache, or as chosen', () => {
    const ofType = (type: string, props: Partial<CacheFleetProps> = {}) =>
      fleet({ mirrors: [Mirror.path('/efs/app')], instanceType: new ec2.InstanceType(type), ...props }).params;
    expect(ofType('c7gn.16xlarge')).toMatchObject({ EFSC_MIRROR_STORAGE: 'memory', EFSC_NODE_DISK_CACHE: 'false' });
    expect(ofType('c7gd.4xlarge')).toMatchObject({ EFSC_MIRROR_STORAGE: 'disk', EFSC_NODE_DISK_CACHE: 'true', EFSC_CACHE_DIR: '/var/cache/fscache' });
    expect(ofType('c7gd.4xlarge', { mirroring: { storage: MirrorStorage.MEMORY } })).toMatchObject({ EFSC_MIRROR_STORAGE: 'memory', EFSC_NODE_DISK_CACHE: 'true' });
    expect(ofType('c7gd.4xlarge', { nodeDiskCache: NodeDiskCache.none() })).toMatchObject({ EFSC_MIRROR_STORAGE: 'memory', EFSC_NODE_DISK_CACHE: 'false' });
    expect(() => ofType('c7gn.16xlarge', { mirroring: { storage: MirrorStorage.INSTANCE_STORE } }))
      .toThrow(/^Invalid mirroring\.storage: INSTANCE_STORE needs the second cache level on the nodes \(nodeDiskCache/);
    expect(() => ofType('c7gd.4xlarge', { nodeDiskCache: NodeDiskCache.none(), mirroring: { storage: MirrorStorage.INSTANCE_STORE } })).toThrow(/^Invalid mirroring\.storage/);
    // The node's code holds the disk storage; the devices' initialization, which only clients run, is off.
    const disk = fleet({ mirrors: [Mirror.path('/efs/app')], instanceType: new ec2.InstanceType('c7gd.4xlarge') });
    expect(renderedCode(disk.userData)).toContain('mirror_disk() {');
    expect(disk.params.EFSC_INITIALIZE_DEVICES).toBe('false');
  });

  test('the node script refuses disk storage without the disk cache, and a storage it does not know', () => {
    const { userData } = fleet({ mirrors: [Mirror.path('/efs/app')] });
    const tags = { 'cdk-efs-cache:signal-resource': 'FleetNode1GroupASG' };
    expect(userData).toContain("EFSC_MIRROR_STORAGE='memory'");
    const disk = runScript(userData.replace("EFSC_MIRROR_STORAGE='memory'", "EFSC_MIRROR_STORAGE='disk'"), [], { tags });
    expect(disk.status).toBe(1);
    expect(disk.stderr).toMatch(/efs-cache: FATAL: EFSC_MIRROR_STORAGE=disk needs EFSC_NODE_DISK_CACHE=true/);
    const other = runScript(userData.replace("EFSC_MIRROR_STORAGE='memory'", "EFSC_MIRROR_STORAGE='ssd'"), [], { tags });
    expect(other.stderr).toMatch(/efs-cache: FATAL: EFSC_MIRROR_STORAGE/);
  });

  test('each mirror\'s fsid is a UUID of the fleet\'s path and the mirror path: stable, distinct from the re-export and from other mirrors', () => {
    const a = fleet({ mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/lib')] }).fleet;
    const b = fleet({ mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/lib')] }).fleet;
    expect(a.mirrorExports.map((m) => m.fsid)).toEqual(b.mirrorExports.map((m) => m.fsid));
    expect(a.mirrorExports[0].fsid).toBe(mirrorFsid(a.node.path, '/efs/app'));
    expect(new Set([a.fsid, ...a.mirrorExports.map((m) => m.fsid)]).size).toBe(3);
    expect(a.mirrorExports[0].fsid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(fleet({ mirrors: [Mirror.path('/efs/app')] }, 'Other').fleet.mirrorExports[0].fsid).not.toBe(a.mirrorExports[0].fsid);
  });

  test('the node script refuses mirror parameters that do not match (paths outside the export, fsid count)', () => {
    const { userData } = fleet({ mirrors: [Mirror.path('/efs/app')] });
    const tags = { 'cdk-efs-cache:signal-resource': 'FleetNode1GroupASG' };
    const outside = runScript(userData.replace("EFSC_MIRROR_PATHS='/efs/app'", "EFSC_MIRROR_PATHS='/etc/app'"), [], { tags });
    expect(outside.status).toBe(1);
    expect(outside.stderr).toMatch(/efs-cache: FATAL: EFSC_MIRROR_PATHS: \/etc\/app is not under \/efs/);
    const twoPaths = runScript(userData.replace("EFSC_MIRROR_PATHS='/efs/app'", "EFSC_MIRROR_PATHS='/efs/app /efs/b'"), [], { tags });
    expect(twoPaths.stderr).toMatch(/efs-cache: FATAL: EFSC_MIRROR_FSIDS: 1 fsids for 2 mirror paths/);
  });

  test('the dashboard shows the mirrors\' age, cost and space, with an alarm for failing syncs and one for a tree that no longer fits', () => {
    const alarmsOf = (mirrorPaths?: string[]) => {
      const { stack, vpc } = stackWithVpc();
      new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1), mirrors: mirrorPaths?.map((p) => Mirror.path(p)) } });
      const t = Template.fromStack(stack);
      const body = JSON.stringify(t.findResources('AWS::CloudWatch::Dashboard'));
      return { body, alarms: Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties) };
    };
    const withMirror = alarmsOf(['/efs/app']);
    expect(withMirror.alarms.filter((a) => /mirror/i.test(a.AlarmDescription)).map((a) => [a.MetricName, a.Statistic, a.Threshold])).toEqual([
      ['MirrorSyncFailures', 'Sum', 1],
      ['MirrorFull', 'Maximum', 1],
    ]);
    for (const name of ['MirrorAgeSeconds', 'MirrorSyncSeconds', 'MirrorFilesWalked', 'MirrorOriginOps', 'MirrorBytes']) expect(withMirror.body).toContain(name);
    const without = alarmsOf();
    expect(without.alarms.filter((a) => /mirror/i.test(a.AlarmDescription))).toEqual([]);
    expect(without.body).not.toContain('Mirror');
  });

  test('a client template mounts the fleet\'s mirrors read-only, without fsc, beside the fsc mount of the re-export', () => {
    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www/vendor')] });
    const c = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(f, { mirrorPaths: ['/efs/www/vendor'] }) });
    const plain = new FsCacheClientLaunchTemplate(stack, 'Plain', { vpc, source: MountSource.cacheFleet(f) });
    const ud = launchTemplateUserData(stack);
    const p = parameters(ud[stack.getLogicalId(c.launchTemplate.node.defaultChild as any)]);
    // The instance mounts each at the mount point plus its path under /mirror: /mnt/mirror/www/vendor.
    expect([p.EFSC_MIRROR_MOUNTS, p.EFSC_MIRROR_MOUNT_POINT]).toEqual(['/mirror/www/vendor', '/mnt/mirror']);
    // On the mirrors' own nfsd (port 2050), not the re-export's 2049.
    expect(p.EFSC_MIRROR_MOUNT_OPTIONS).toBe('nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,port=2050');
    expect(p.EFSC_MOUNT_OPTIONS).toMatch(/^fsc,/);
    expect(parameters(ud[stack.getLogicalId(plain.launchTemplate.node.defaultChild as any)]).EFSC_MIRROR_MOUNTS).toBe('');
  });
});

/**
 * The ports (`from-to`, sorted) of the ingress rules of `stack` into the groups `into` matches (a pattern of the
 * group's reference, or a literal id), from groups whose reference contains `from` if given. Synthesizes the stack.
 */
function portsFrom(stack: Stack, into: RegExp | string, from?: string): string[] {
  const rules = Object.values(Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress')).map((r) => r.Properties);
  const target = (g: any) => (typeof into === 'string' ? g === into : into.test(JSON.stringify(g)));
  return rules.filter((r) => target(r.GroupId) && (from === undefined || JSON.stringify(r.SourceSecurityGroupId).includes(from)))
    .map((r) => `${r.FromPort}-${r.ToPort}`).sort();
}

describe('the mirrors\' own port (2050)', () => {
  test('CacheFleet.MIRROR_PORT is the port the nodes are told and the clients mount with', () => {
    expect(CacheFleet.MIRROR_PORT).toBe(NFS_MIRROR_PORT);
    expect(CacheFleet.MIRROR_PORT).not.toBe(2049);
  });

  test('Route 53: a fleet with mirrors opens nothing by itself; a client template that mounts them is let in on 2049 and 2050, one that does not on 2049 only', () => {
    const alone = stackWithVpc();
    new CacheFleet(alone.stack, 'Fleet', { vpc: alone.vpc, origin: CacheOrigin.efs(importedFs(alone.stack)), mirrors: [Mirror.path('/efs/app')] });
    expect(portsFrom(alone.stack, /FleetSecurityGroup/)).toEqual([]);

    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')] });
    new FsCacheClientLaunchTemplate(stack, 'Mirrored', { vpc, source: MountSource.cacheFleet(f, { mirrorPaths: ['/efs/app'] }) });
    new FsCacheClientLaunchTemplate(stack, 'Plain', { vpc, source: MountSource.cacheFleet(f) });
    expect(portsFrom(stack, /FleetSecurityGroup/, 'Mirrored')).toEqual(['2049-2049', '2050-2050']);
    expect(portsFrom(stack, /FleetSecurityGroup/, 'Plain')).toEqual(['2049-2049']);
    // From the clients' group only: no CIDR, no other source.
    const rules = Object.values(Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress')).map((r) => r.Properties);
    expect(rules.filter((r) => r.FromPort === 2050).map((r) => [r.ToPort, r.IpProtocol, r.CidrIp, JSON.stringify(r.SourceSecurityGroupId)]))
      .toEqual([[2050, 'tcp', undefined, expect.stringMatching(/MirroredSecurityGroup/)]]);
  });

  test('a fleet without mirrors: nothing on 2050, whatever its clients', () => {
    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) });
    new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(f) });
    expect(portsFrom(stack, /FleetSecurityGroup/)).toEqual(['2049-2049']);
    expect(JSON.stringify(Template.fromStack(stack).toJSON())).not.toMatch(/"(FromPort|ToPort|Port)":2050\b/);
  });

  test('an NFSv3 fleet\'s mirrors: their clients are let in on 2049, mountd\'s 20048 and 2050', () => {
    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')], clientNfsVersion: NfsVersion.NFS_V3 });
    const c = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(f, { mirrorPaths: ['/efs/app'] }) });
    expect(portsFrom(stack, /FleetSecurityGroup/)).toEqual(['20048-20048', '2049-2049', '2050-2050']);
    const p = parameters(launchTemplateUserData(stack)[stack.getLogicalId(c.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)]);
    // The re-export over NFSv3 on 2049, the mirrors over NFSv4.1 on 2050.
    expect(p.EFSC_MOUNT_OPTIONS.split(',')).toEqual(expect.arrayContaining(['nfsvers=3', 'port=2049']));
    expect(p.EFSC_MIRROR_MOUNT_OPTIONS.split(',')).toEqual(expect.arrayContaining(['nfsvers=4.1', 'port=2050']));
    expect(p.EFSC_MIRROR_MOUNT_OPTIONS.split(',')).not.toContain('port=2049');
  });

  test.each([
    ['a group of this app', false],
    ['a group of another app (by id)', true],
  ])('an imported fleet (%s): a client that mounts its mirrors opens 2050 into its group as it opens 2049; one that does not, 2049 only', (_name, byId) => {
    const { stack, vpc } = stackWithVpc();
    const sg = byId ? ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0fee7000000000001') : new ec2.SecurityGroup(stack, 'FleetSg', { vpc });
    const mirrorExports = [{ path: '/efs/app', exportPath: '/mirror/app', fsid: mirrorFsid('Other/Fleet', '/efs/app') }];
    const imported = CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', { endpoint: 'cache.efs-cache.internal', securityGroup: sg, mirrorExports });
    const into = byId ? 'sg-0fee7000000000001' : /FleetSg/;
    new FsCacheClientLaunchTemplate(stack, 'Plain', { vpc, source: MountSource.cacheFleet(imported) });
    const c = new FsCacheClientLaunchTemplate(stack, 'Mirrored', { vpc, source: MountSource.cacheFleet(imported, { mirrorPaths: ['/efs/app'] }) });
    expect(portsFrom(stack, into, 'Plain')).toEqual(['2049-2049']);
    expect(portsFrom(stack, into, 'Mirrored')).toEqual(['2049-2049', '2050-2050']);
    const p = parameters(launchTemplateUserData(stack)[stack.getLogicalId(c.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)]);
    expect(p.EFSC_MIRROR_MOUNT_OPTIONS.split(',')).toContain('port=2050');
  });

  test('an imported fleet\'s mirrors need no fsid (clients never use it): the client mounts the mirror the same; a given fsid is still checked', () => {
    const { stack, vpc } = stackWithVpc();
    const sg = ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0fee7000000000001');
    const imported = CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', {
      endpoint: 'cache.efs-cache.internal', securityGroup: sg,
      mirrorExports: [{ path: '/efs/app', exportPath: '/mirror/app' }, { path: '/efs/lib', exportPath: '/mirror/lib' }],
    });
    expect(imported.mirrorExports.map((m) => m.fsid)).toEqual([undefined, undefined]);
    const c = new FsCacheClientLaunchTemplate(stack, 'Mirrored', { vpc, source: MountSource.cacheFleet(imported, { mirrorPaths: ['/efs/app'] }) });
    const p = parameters(launchTemplateUserData(stack)[stack.getLogicalId(c.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)]);
    expect(p.EFSC_MIRROR_MOUNTS).toBe('/mirror/app');
    expect(JSON.stringify(Template.fromStack(stack).toJSON())).not.toMatch(/undefined/);
    expect(() => CacheFleet.fromCacheFleetAttributes(stack, 'Bad', {
      endpoint: 'cache.efs-cache.internal', securityGroup: sg, mirrorExports: [{ path: '/efs/app', exportPath: '/mirror/app', fsid: 'nope' }],
    })).toThrow(/^Invalid mirrorExports: mirrorExports\[0\]\.fsid 'nope' is not a UUID/);
  });
});
