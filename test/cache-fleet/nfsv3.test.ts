/**
 * NfsVersion.NFS_V3 as synthesized: what the nodes are told, what the clients mount with, what the security
 * groups open, and what is refused. That a node serves NFSv3 and refuses an origin whose handles do not fit is the
 * lab's to prove (test/heavy/lab/scenarios.lab.ts, on a real kernel).
 */
import { Template, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CacheFleet,
  CacheOrigin,
  Capacity,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountHelper,
  MountSource,
  NfsVersion,
} from '../../lib';
import { renderedCode } from '../../lib/instance/user-data';
import { importedFs, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { expand, launchTemplateUserData, parameters } from '../util/user-data';

function build(clientNfsVersion?: NfsVersion) {
  const { stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: ['10.0.0.0/16'], clientNfsVersion,
  });
  const client = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(fleet) });
  const ud = launchTemplateUserData(stack, () => 'fs-0123456789abcdef0.efs.us-east-1.amazonaws.com');
  const of = (lt: ec2.LaunchTemplate) => ud[stack.getLogicalId(lt.node.defaultChild as ec2.CfnLaunchTemplate)];
  return { stack, fleet, client, node: of(fleet.launchTemplate), clientUd: of(client.launchTemplate) };
}

describe('NfsVersion.NFS_V3', () => {
  const v3 = build(NfsVersion.NFS_V3);
  const v4 = build();

  test('NFSv4.1 stays the default, and its nodes are not told to serve NFSv3 (the code is the same, switched off)', () => {
    expect(v4.fleet.clientNfsVersion).toBe(NfsVersion.NFS_V4_1);
    expect(parameters(v4.node).EFSC_NFS_V3).toBeUndefined();
    expect(renderedCode(v4.node)).toBe(renderedCode(v3.node));
    expect(parameters(v4.clientUd).EFSC_MOUNT_OPTIONS.split(',')).toEqual(expect.arrayContaining(['nfsvers=4.1']));
    expect(parameters(v4.clientUd).EFSC_MOUNT_TYPE).toBe('nfs4');
  });

  test('the nodes are told to serve NFSv3 and carry its check', () => {
    expect(parameters(v3.node).EFSC_NFS_V3).toBe('true');
    // A number: 4 bytes of every file handle where a UUID takes 16.
    expect(v3.fleet.fsid).toMatch(/^[1-9][0-9]{0,9}$/);
    expect(Number(v3.fleet.fsid)).toBeLessThanOrEqual(0x7fffffff);
    expect(parameters(v3.node).EFSC_EXPORT_FSID).toBe(v3.fleet.fsid);
    expect(v4.fleet.fsid).toMatch(/^[0-9a-f]{8}-/);
    expect(parameters(v3.node).EFSC_MOUNTD_PORT).toBe(String(CacheFleet.MOUNTD_PORT));
    expect(expand(v3.node)).toMatch(/v3_check\(\) \{/);
  });

  test('clients mount over NFSv3 without locks, naming both ports', () => {
    const p = parameters(v3.clientUd);
    expect(p.EFSC_MOUNT_TYPE).toBe('nfs');
    const o = p.EFSC_MOUNT_OPTIONS.split(',');
    expect(o).toEqual(expect.arrayContaining(['fsc', 'ro', 'nocto', 'nfsvers=3', 'nolock', 'proto=tcp', 'port=2049', 'mountproto=tcp', 'mountport=20048', 'mountvers=3']));
    expect(o.filter((x) => /vers=4/.test(x))).toEqual([]);
  });

  test('the client\'s own checks take those options: its run gets past them to the packages', () => {
    const run = runScript(v3.clientUd, [], {});
    expect(run.stderr).not.toMatch(/is invalid|FATAL: EFSC_/);
    expect(run.calls.some((c) => /^(apt-get|dnf|dpkg-query|rpm) /.test(c))).toBe(true);
  });

  test('the security group lets the clients in on 2049 and mountd\'s 20048, nothing else; a v4.1 fleet on 2049 only', () => {
    const ports = (stack: typeof v3.stack) => Template.fromStack(stack).findResources('AWS::EC2::SecurityGroupIngress', {
      Properties: { GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FleetSecurityGroup'), 'GroupId'] } },
    });
    const of = (stack: typeof v3.stack) => Object.values(ports(stack)).map((r) => `${r.Properties.FromPort}-${r.Properties.ToPort}`).sort();
    expect(of(v3.stack)).toEqual(['20048-20048', '2049-2049']);
    expect(of(v4.stack)).toEqual(['2049-2049']);
    expect(CacheFleet.MOUNTD_PORT).toBe(20048);
  });

  test('an imported fleet carries its protocol to its clients', () => {
    const { stack, vpc } = stackWithVpc();
    const sg = new ec2.SecurityGroup(stack, 'Sg', { vpc });
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
      endpoint: 'cache.example.internal', securityGroup: sg, clientNfsVersion: NfsVersion.NFS_V3,
    });
    const client = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(fleet) });
    const ud = launchTemplateUserData(stack)[stack.getLogicalId(client.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)];
    expect(parameters(ud).EFSC_MOUNT_OPTIONS.split(',')).toContain('mountport=20048');
    Template.fromStack(stack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', { FromPort: 20048, ToPort: 20048 });
    const plain = CacheFleet.fromCacheFleetAttributes(stack, 'Plain', { endpoint: 'x.example.internal', securityGroup: sg });
    expect(plain.clientNfsVersion).toBe(NfsVersion.NFS_V4_1);
  });

  test('with mirrors on nodes that keep the disk cache it is accepted: the code of all three is an asset, not user data', () => {
    const { stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), instanceType: new ec2.InstanceType('c7gd.4xlarge'), mirrors: [Mirror.path('/efs/app')], clientNfsVersion: NfsVersion.NFS_V3,
    });
    expect(fleet.nodeDiskCache).toBeDefined();
    // Refused for size before the code moved out of the user data; now more than half of EC2's 16 KB is left.
    expect(fleet.userDataBytes).toBeLessThan(8192);
    const code = expand(Object.values(launchTemplateUserData(stack))[0]);
    expect(code).toContain('v3_check() {');
    expect(code).toContain('mirror_exports() {');
    expect(code).toContain('fscache_check() {');
  });

  test('behind a load balancer it is refused: the NLB has no listener for mountd', () => {
    const { stack, vpc } = stackWithVpc();
    expect(() => new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer(), clientNfsVersion: NfsVersion.NFS_V3,
    })).toThrow(/Invalid clientNfsVersion: NfsVersion.NFS_V3 needs fanOut: FanOut\.route53\(\)/);
  });

  test('a numeric fsid above an int is refused before installing anything: exportfs would show it negative', () => {
    const bad = v3.node.replace(`EFSC_EXPORT_FSID='${v3.fleet.fsid}'`, "EFSC_EXPORT_FSID='2147483648'");
    expect(bad).not.toBe(v3.node);
    const run = runScript(bad, ['--metrics'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: EFSC_EXPORT_FSID must be below 2147483648/);
    expect(run.calls.filter((c) => /^(dnf|apt-get|mount|nfsconf|exportfs) /.test(c))).toEqual([]);
  });

  test('a node refuses a mountd port that is not a port before installing anything', () => {
    const bad = v3.node.replace("EFSC_MOUNTD_PORT='20048'", "EFSC_MOUNTD_PORT='20048;x'");
    expect(bad).not.toBe(v3.node);
    const run = runScript(bad, ['--metrics'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: EFSC_MOUNTD_PORT='20048;x' is invalid: expected a TCP port/);
    expect(run.calls.filter((c) => /^(dnf|apt-get|mount|nfsconf) /.test(c))).toEqual([]);
  });
});
