import * as fs from 'fs';
import * as path from 'path';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, ClientProtocol, NfsVersion } from '../lib';
import { importedFs, stackWithVpc } from './util';
import { launchTemplateUserData, parameters } from './util/user-data';

/**
 * What must not change across versions of the library, pinned as literal values: a deployed fleet that is upgraded
 * keeps them, or every client's file handles go stale (fsids) and nodes stop finding their identity (tag names).
 * The values were computed by the derivation that ships; a change to it fails here, whatever else still passes.
 */
function nodeParameters(protocol: ClientProtocol): { params: Record<string, string>; template: Template } {
  const { stack, vpc } = stackWithVpc(undefined, 'Pinned');
  new CacheFleet(stack, 'Fleet', {
    vpc,
    fileSystem: importedFs(stack),
    originPath: '/data',
    mirrorPaths: ['/efs/app', '/efs/www/static'],
    clientProtocol: protocol,
  });
  const userData = Object.values(launchTemplateUserData(stack));
  expect(userData).toHaveLength(1);
  return { params: parameters(userData[0]), template: Template.fromStack(stack) };
}

describe('upgrade contract', () => {
  test.each([
    [ClientProtocol.NFS_V4_1, 'b37e23b0-6404-adad-319e-369fa3d5d47f'],
    [ClientProtocol.NFS_V3, '863904690'],
  ])('the export fsid of fleet Pinned/Fleet over /data (%s) is pinned', (protocol, fsid) => {
    expect(nodeParameters(protocol).params.EFSC_EXPORT_FSID).toBe(fsid);
  });

  test.each([
    [ClientProtocol.NFS_V4_1, 'dbe662d3-8a1c-3e17-d322-8282a8544d2b'],
    [ClientProtocol.NFS_V3, '1541825237'],
  ])('the export fsid of fleet Pinned/Fleet over an NFS server\'s /srv, at /data (%s), is pinned: host and version are no part of it', (protocol, fsid) => {
    for (const [host, version] of [['nas.example.internal', NfsVersion.NFS_V3], ['10.20.0.5', NfsVersion.NFS_V4_2]] as const) {
      const { stack, vpc } = stackWithVpc(undefined, 'Pinned');
      const fleet = new CacheFleet(stack, 'Fleet', {
        vpc, originPath: '/data', clientProtocol: protocol,
        origin: CacheOrigin.nfsServer({ host, exportPath: '/srv', version, peer: ec2.Peer.ipv4('10.20.0.0/16') }),
      });
      expect(fleet.fsid).toBe(fsid);
    }
  });

  test('mirror fsids are pinned, in the order of mirrorPaths, and do not depend on the client protocol', () => {
    for (const protocol of [ClientProtocol.NFS_V4_1, ClientProtocol.NFS_V3]) {
      const { params } = nodeParameters(protocol);
      expect(params.EFSC_MIRROR_PATHS).toBe('/efs/app /efs/www/static');
      expect(params.EFSC_MIRROR_FSIDS).toBe('4ef15917-cc5e-c97b-c462-beb4a33a03b1 d07f34a3-d22c-af5e-5414-e52684201e0c');
    }
  });

  test('the mirrors\' port is pinned: deployed clients mount the mirrors with port=2050 in their fstab', () => {
    for (const protocol of [ClientProtocol.NFS_V4_1, ClientProtocol.NFS_V3]) {
      expect(nodeParameters(protocol).params.EFSC_MIRROR_PORT).toBe('2050');
    }
    expect(CacheFleet.MIRROR_PORT).toBe(2050);
  });

  test('the tag names nodes read at boot are pinned, on the groups and in the scripts that read them', () => {
    const { template } = nodeParameters(ClientProtocol.NFS_V4_1);
    const groups = Object.values(template.findResources('AWS::AutoScaling::AutoScalingGroup'));
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) {
      const keys = (g.Properties.Tags as Array<{ Key: string; PropagateAtLaunch: boolean }>)
        .filter((t) => t.PropagateAtLaunch).map((t) => t.Key).sort();
      expect(keys).toEqual(['cdk-efs-cache:fleet', 'cdk-efs-cache:signal-resource', 'cdk-efs-cache:stable-eni']);
    }
    const scripts = ['assets/cache-node/bootstrap.sh', ...fs.readdirSync(path.join(__dirname, '..', 'assets', 'lib')).map((f) => `assets/lib/${f}`)]
      .map((f) => fs.readFileSync(path.join(__dirname, '..', f), 'utf8')).join('\n');
    // node_identity asks the metadata service for cdk-efs-cache:<name> of each name it lists.
    expect(scripts).toContain('meta-data/tags/instance/cdk-efs-cache:');
    for (const name of ['signal-resource', 'stable-eni']) expect(scripts).toMatch(new RegExp(`\\b${name}:EFSC_[A-Z_]+\\b`));
  });
});
