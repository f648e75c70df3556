/**
 * CacheOrigin (issue 31) as synthesized: an EFS origin given as `CacheOrigin.efs` is exposed as given; an NFS server
 * origin (NFSv3, NFSv4.1, NFSv4.2) tells the nodes its server, path, mount type and options (the mirrors' mounts too),
 * opens exactly its ports to its peer (a network, or a security group), grants no EFS access, gets an fsid of its own,
 * passes the nodes' own parameter checks and cdk-nag. Refusals are in test/cache-fleet/bad-input.test.ts, hostile
 * deploy-time hosts in test/hostile-tokens.test.ts. That a node mounts an NFS server and re-exports it is the lab's to
 * prove, which has not run it yet (README, "Origins").
 */
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CacheFleet,
  CacheFleetProps,
  CacheOrigin,
  Capacity,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountSource,
  NfsServerOptions,
  NfsVersion,
  NodeDiskCache,
} from '../../lib';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { expand, launchTemplateUserData, parameters } from '../util/user-data';

/** The lab-like server: 10.20.0.5 in 10.20.0.0/16 (outside the test VPC, as over a VPN), exporting /srv/data. */
const SERVER = { host: '10.20.0.5', exportPath: '/srv/data', peer: ec2.Peer.ipv4('10.20.0.0/16') };

/** A fleet over an NFS server of `version`, one node, literal client CIDRs (so its user data runs in the sandbox). */
function nfsFleet(version: NfsVersion, origin: Partial<NfsServerOptions> | ((s: Stack, vpc: ec2.Vpc) => Partial<NfsServerOptions>) = {},
  props: Partial<CacheFleetProps> = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const o = typeof origin === 'function' ? origin(stack, vpc) : origin;
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, capacity: Capacity.nodes(1), clientCidrs: ['10.0.0.0/16'], ...props, origin: CacheOrigin.nfsServer({ ...SERVER, nfsVersion: version, ...o }),
  });
  const ud = Object.values(launchTemplateUserData(stack, () => 'tok'))[0];
  return { app, stack, vpc, fleet, ud, p: parameters(ud), t: Template.fromStack(stack) };
}

/** The nodes' security group's own rules: its inline egress and the rule resources that name it. */
function nodeRules(t: Template) {
  const group = Object.entries(t.findResources('AWS::EC2::SecurityGroup')).find(([id]) => id.startsWith('FleetSecurityGroup'))![1];
  const ports = (rules: any[]) => rules.map((r) => `${r.CidrIp ?? r.CidrIpv6 ?? 'sg'}:${r.FromPort}`).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return {
    inlineEgress: ports(group.Properties.SecurityGroupEgress ?? []),
    ingress: Object.values(t.findResources('AWS::EC2::SecurityGroupIngress')).map((r) => r.Properties),
    egress: Object.values(t.findResources('AWS::EC2::SecurityGroupEgress')).map((r) => r.Properties),
  };
}

const TRANSFER = ['rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2'];
const FLEET_OWN = ['ro', 'nocto', 'ac', 'lookupcache=all', 'acregmin=600', 'acregmax=600', 'acdirmin=600', 'acdirmax=600'];

describe('CacheOrigin.efs', () => {
  test('the fleet exposes its origin', () => {
    const { stack, vpc } = stackWithVpc();
    const fs = importedFs(stack);
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fs) });
    expect(f.origin.fileSystem).toBe(fs);
    expect(f.origin.exportPath).toBe('/');
    expect(f.origin.nfsVersion).toBe(NfsVersion.NFS_V4_1);
    expect(f.origin.connections).toBe(fs.connections);
  });
});

describe('CacheOrigin.nfsServer: what the nodes are told', () => {
  test('NFSv3: mount type nfs, fixed nfsd and mountd ports, nolock, the fleet\'s caching, no TLS and no noresvport', () => {
    const { p } = nfsFleet(NfsVersion.NFS_V3);
    expect(p).toMatchObject({ EFSC_ORIGIN_SERVER: '10.20.0.5', EFSC_ORIGIN_PATH: '/srv/data', EFSC_ORIGIN_MOUNT_TYPE: 'nfs' });
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toEqual([
      'nfsvers=3', 'proto=tcp', 'port=2049', 'mountproto=tcp', 'mountport=20048', 'mountvers=3', 'nolock', ...TRANSFER, ...FLEET_OWN,
    ]);
  });

  test('NFSv3 with its own ports and lockd: they are named, and the mount takes locks', () => {
    const { p } = nfsFleet(NfsVersion.NFS_V3, { ports: { nfs: 2050, mountd: 635, lockd: 4045 } });
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toEqual([
      'nfsvers=3', 'proto=tcp', 'port=2050', 'mountproto=tcp', 'mountport=635', 'mountvers=3', 'lock', ...TRANSFER, ...FLEET_OWN,
    ]);
  });

  test.each([
    [NfsVersion.NFS_V4_1, {}, ['nfsvers=4.1']],
    [NfsVersion.NFS_V4_2, {}, ['nfsvers=4.2']],
    [NfsVersion.NFS_V4_2, { nfs: 3049 }, ['nfsvers=4.2', 'port=3049']],
  ])('%s (ports %j): mount type nfs4, its version, no TLS', (version, ports, head) => {
    const { p } = nfsFleet(version, { ports });
    expect(p.EFSC_ORIGIN_MOUNT_TYPE).toBe('nfs4');
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toEqual([...head, ...TRANSFER, ...FLEET_OWN]);
  });

  test.each([
    ['/srv/data', '/', '/srv/data'],
    ['/srv/data', '/projects/a', '/srv/data/projects/a'],
    ['/', '/', '/'],
    ['/', '/projects', '/projects'],
  ])('export %s with originPath %s: the nodes mount %s', (exportPath, originPath, mounted) => {
    expect(nfsFleet(NfsVersion.NFS_V4_1, { exportPath }, { originPath }).p.EFSC_ORIGIN_PATH).toBe(mounted);
  });

  test('the disk cache: fsc on the origin mount, and no efs-utils TLS port to pin', () => {
    const { p, fleet } = nfsFleet(NfsVersion.NFS_V3, {}, { instanceType: new ec2.InstanceType('c6gd.4xlarge'), nodeDiskCache: NodeDiskCache.instanceStore() });
    expect(fleet.nodeDiskCache).toBeDefined();
    const o = p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',');
    expect(o[0]).toBe('fsc');
    expect(o.filter((x) => /^(tls|iam|tlsport=.*|noresvport)$/.test(x))).toEqual([]);
  });

  test('mirrors work on an NFS server: their sync and marker mounts take the origin\'s type, version and ports', () => {
    const { p } = nfsFleet(NfsVersion.NFS_V3, { ports: { mountd: 635 } }, { mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published' } });
    const base = ['nfsvers=3', 'proto=tcp', 'port=2049', 'mountproto=tcp', 'mountport=635', 'mountvers=3', 'nolock', ...TRANSFER];
    expect(p.EFSC_MIRROR_SOURCE_OPTIONS.split(',')).toEqual([...base, 'ro', 'nosharecache', 'actimeo=3600', 'noatime']);
    expect(p.EFSC_MIRROR_MARKER_OPTIONS.split(',')).toEqual([...base, 'ro', 'nosharecache', 'actimeo=0']);
    const v4 = nfsFleet(NfsVersion.NFS_V4_2, {}, { mirrors: [Mirror.path('/efs/app')] }).p;
    expect(v4.EFSC_MIRROR_SOURCE_OPTIONS.split(',')).toEqual(['nfsvers=4.2', ...TRANSFER, 'ro', 'nosharecache', 'actimeo=3600', 'noatime']);
  });

  test('the fsid is the fleet\'s own, differs from an EFS origin\'s at the same path, and is a number for NFSv3 clients', () => {
    const nfs = nfsFleet(NfsVersion.NFS_V4_1).fleet.fsid;
    expect(nfs).toBe(nfsFleet(NfsVersion.NFS_V3).fleet.fsid); // the origin's version is no part of it
    expect(nfs).not.toBe(nfsFleet(NfsVersion.NFS_V4_1, { exportPath: '/srv/other' }).fleet.fsid);
    const { stack, vpc } = stackWithVpc();
    expect(new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) }).fsid).not.toBe(nfs);
    expect(nfsFleet(NfsVersion.NFS_V3, {}, { clientNfsVersion: NfsVersion.NFS_V3 }).fleet.fsid).toMatch(/^[1-9][0-9]{0,9}$/);
  });

  test('a host given as a token reaches the nodes as a deploy-time value (checked there)', () => {
    const { stack, vpc } = stackWithVpc();
    const host = new ec2.CfnNetworkInterface(stack, 'NasEni', { subnetId: vpc.privateSubnets[0].subnetId }).attrPrimaryPrivateIpAddress;
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.nfsServer({ ...SERVER, host, peer: ec2.Peer.ipv4(vpc.vpcCidrBlock), nfsVersion: NfsVersion.NFS_V4_1 }) });
    const p = parameters(Object.values(launchTemplateUserData(stack))[0]);
    expect(p.EFSC_ORIGIN_SERVER).toBe('<Fn::GetAtt:NasEni.PrimaryPrivateIpAddress>');
  });
});

describe('CacheOrigin.nfsServer: the nodes\' own checks', () => {
  test.each([
    ['NFSv3', NfsVersion.NFS_V3, {}],
    ['NFSv3 with lockd, mirrors and the disk cache', NfsVersion.NFS_V3, { mirrors: [Mirror.path('/efs/app')], instanceType: new ec2.InstanceType('c6gd.4xlarge') }],
    ['NFSv4.1', NfsVersion.NFS_V4_1, {}],
    ['NFSv4.2 with a change marker', NfsVersion.NFS_V4_2, { mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published' } }],
  ])('%s: the node\'s run gets past its parameter checks to the packages, and installs no efs-utils', (_n, version, props) => {
    const { ud } = nfsFleet(version, version === NfsVersion.NFS_V3 && 'mirrors' in props ? { ports: { lockd: 4045 } } : {}, props);
    const run = runScript(ud, [], { tags: { 'cdk-efs-cache:signal-resource': 'FleetNode1GroupASG0123ABCD' } });
    expect(run.stderr).not.toMatch(/is invalid|FATAL: EFSC_/);
    expect(run.calls.some((c) => /^(dpkg-query|rpm) /.test(c))).toBe(true);
    expect(run.calls.filter((c) => /efs-utils/.test(c))).toEqual([]);
  });

  test.each([
    ['nfs', 'nfsvers=4.1', /FATAL: EFSC_ORIGIN_MOUNT_OPTIONS must name nfsvers=3 for mount type nfs/],
    ['nfs4', 'nfsvers=3', /FATAL: EFSC_ORIGIN_MOUNT_OPTIONS must name nfsvers=4.1 or 4.2 for mount type nfs4/],
    ['nfs4', 'nfsvers=4.0', /FATAL: EFSC_ORIGIN_MOUNT_OPTIONS must name nfsvers=4.1 or 4.2 for mount type nfs4/],
    ['cifs', 'nfsvers=3', /FATAL: EFSC_ORIGIN_MOUNT_TYPE='cifs' is invalid: expected nfs, nfs4 or efs/],
  ])('mount type %s with %s is refused before anything is installed', (type, version, fatal) => {
    const { ud, p } = nfsFleet(NfsVersion.NFS_V3);
    const bad = ud.replace(`EFSC_ORIGIN_MOUNT_TYPE='${p.EFSC_ORIGIN_MOUNT_TYPE}'`, `EFSC_ORIGIN_MOUNT_TYPE='${type}'`)
      .replace(`EFSC_ORIGIN_MOUNT_OPTIONS='${p.EFSC_ORIGIN_MOUNT_OPTIONS}'`, `EFSC_ORIGIN_MOUNT_OPTIONS='${p.EFSC_ORIGIN_MOUNT_OPTIONS.replace('nfsvers=3', version)}'`);
    expect(parameters(bad)).toMatchObject({ EFSC_ORIGIN_MOUNT_TYPE: type });
    const run = runScript(bad, ['--metrics'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(fatal);
    expect(run.calls.filter((c) => /^(dnf|apt-get|mount|nfsconf|systemctl) /.test(c))).toEqual([]);
  });

  test('the mount unit and the mirrors\' mounts take the type as given: nothing in the code names efs for an NFS server', () => {
    const code = expand(nfsFleet(NfsVersion.NFS_V3, {}, { mirrors: [Mirror.path('/efs/app')] }).ud);
    expect(code).toContain('Type=$EFSC_ORIGIN_MOUNT_TYPE');
    expect(code).toContain('mount -t "$EFSC_ORIGIN_MOUNT_TYPE" -o "$EFSC_MIRROR_SOURCE_OPTIONS"');
    expect(code).toContain('if [ "$EFSC_ORIGIN_MOUNT_TYPE" = efs ]; then ensure_efs_utils; fi');
  });
});

describe('CacheOrigin.nfsServer: security groups and IAM', () => {
  test('a server outside the VPC (CIDR peer): egress to its network on exactly its ports, no rule anywhere else', () => {
    expect(nodeRules(nfsFleet(NfsVersion.NFS_V4_1).t)).toEqual({ inlineEgress: ['0.0.0.0/0:443', '10.20.0.0/16:2049'], ingress: [], egress: [] });
    expect(nodeRules(nfsFleet(NfsVersion.NFS_V3).t).inlineEgress).toEqual(['0.0.0.0/0:443', '10.20.0.0/16:2049', '10.20.0.0/16:20048']);
    expect(nodeRules(nfsFleet(NfsVersion.NFS_V3, { ports: { rpcbind: true } }).t).inlineEgress)
      .toEqual(['0.0.0.0/0:443', '10.20.0.0/16:111', '10.20.0.0/16:2049', '10.20.0.0/16:20048']);
    expect(nodeRules(nfsFleet(NfsVersion.NFS_V3, { ports: { nfs: 2050, mountd: 635, lockd: 4045 } }).t).inlineEgress)
      .toEqual(['0.0.0.0/0:443', '10.20.0.0/16:111', '10.20.0.0/16:635', '10.20.0.0/16:2050', '10.20.0.0/16:4045']);
    expect(nodeRules(nfsFleet(NfsVersion.NFS_V4_2, { peer: ec2.Peer.ipv6('fd00:20::/64') }).t).inlineEgress).toEqual(['0.0.0.0/0:443', 'fd00:20::/64:2049']);
  });

  test('a server inside the VPC (security group peer): into its group from the nodes\' and out of the nodes\', on exactly its ports', () => {
    const { t } = nfsFleet(NfsVersion.NFS_V3, (s, vpc) => ({ host: 'nas.example.internal', peer: new ec2.SecurityGroup(s, 'NasSg', { vpc }) }));
    const rules = nodeRules(t);
    expect(rules.inlineEgress).toEqual(['0.0.0.0/0:443']);
    const nas = { 'Fn::GetAtt': [Match.stringLikeRegexp('^NasSg'), 'GroupId'] };
    const nodes = { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetSecurityGroup'), 'GroupId'] };
    expect(rules.ingress.map((r) => r.FromPort).sort((a, b) => a - b)).toEqual([2049, 20048]);
    expect(rules.egress.map((r) => r.FromPort).sort((a, b) => a - b)).toEqual([2049, 20048]);
    for (const port of [2049, 20048]) {
      t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: nas, SourceSecurityGroupId: nodes, IpProtocol: 'tcp', FromPort: port, ToPort: port });
      t.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: nodes, DestinationSecurityGroupId: nas, IpProtocol: 'tcp', FromPort: port, ToPort: port });
    }
  });

  test('a security group peer of another stack: its rules land in the fleet\'s stack, the server\'s stack holds none', () => {
    const { app, stack: nasStack, vpc } = stackWithVpc();
    const nasSg = new ec2.SecurityGroup(nasStack, 'NasSg', { vpc });
    const fleetStack = new Stack(app, 'FleetStack');
    new CacheFleet(fleetStack, 'Fleet', {
      vpc, capacity: Capacity.nodes(1), origin: CacheOrigin.nfsServer({ host: 'nas.example.internal', exportPath: '/srv', nfsVersion: NfsVersion.NFS_V4_1, peer: nasSg }),
    });
    expect(Template.fromStack(nasStack).findResources('AWS::EC2::SecurityGroupIngress')).toEqual({});
    Template.fromStack(fleetStack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', { FromPort: 2049, ToPort: 2049 });
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });

  test('the nodes\' role is granted no EFS access, and says what it is for', () => {
    const { t } = nfsFleet(NfsVersion.NFS_V4_1);
    expect(JSON.stringify(t.toJSON())).not.toMatch(/elasticfilesystem:/);
    t.hasResourceProperties('AWS::IAM::Role', { Description: 'NFS cache nodes: SSM Session Manager, own interface and stack signal' });
  });

  test.each([
    ['outside the VPC (a CIDR peer)', {}],
    ['inside the VPC (a security group peer)', (s: Stack, vpc: ec2.Vpc) => ({ peer: new ec2.SecurityGroup(s, 'NasSg', { vpc }) })],
  ])('cdk-nag AwsSolutions, NIST 800-53 R5 and HIPAA: an NFSv3 server %s, with mirrors, no unacknowledged finding', (_n, origin) => {
    const { app } = nfsFleet(NfsVersion.NFS_V3, origin as any, { mirrors: [Mirror.path('/efs/app')] });
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });
});

describe('CacheOrigin.nfsServer with the fan-out and the clients', () => {
  test('an NFSv3 origin behind an NLB is accepted: the load balancer stands between clients and nodes, which reach the origin themselves', () => {
    const { t, fleet } = nfsFleet(NfsVersion.NFS_V3, {}, { fanOut: FanOut.networkLoadBalancer() });
    expect(fleet.clientNfsVersion).toBe(NfsVersion.NFS_V4_1);
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: 2049 });
  });

  test('NFSv3 clients stay refused behind an NLB, whatever the origin (no listener for mountd)', () => {
    expect(() => nfsFleet(NfsVersion.NFS_V3, {}, { fanOut: FanOut.networkLoadBalancer(), clientNfsVersion: NfsVersion.NFS_V3 }))
      .toThrow(/^Invalid clientNfsVersion: NfsVersion.NFS_V3 needs fanOut: FanOut\.route53\(\)/);
  });

  test('clients mount the fleet as they do over EFS: the origin is none of their business', () => {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, clientNfsVersion: NfsVersion.NFS_V3, origin: CacheOrigin.nfsServer({ ...SERVER, nfsVersion: NfsVersion.NFS_V3 }) });
    const client = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(fleet) });
    const ud = launchTemplateUserData(stack)[stack.getLogicalId(client.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)];
    expect(parameters(ud).EFSC_MOUNT_OPTIONS.split(',')).toEqual(expect.arrayContaining(['nfsvers=3', 'mountport=20048']));
  });
});
