/**
 * The node's second cache level as the rendered user data runs it (host sandbox, test/util/run-script.ts): its
 * parameter checks. That the cache is built, used by the origin mount and serves evicted files with no origin read
 * is the lab's to prove (test/heavy/lab/mirror.lab.ts, on a real kernel).
 */
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheFleetProps, CacheOrigin, Capacity, MountHelper, NodeDiskCache } from '../../lib';
import { importedFs, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { launchTemplateUserData, parameters } from '../util/user-data';

function nodeUserData(extra: Partial<CacheFleetProps> = {}): string {
  const { stack, vpc } = stackWithVpc();
  new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), instanceType: new ec2.InstanceType('c7gd.4xlarge'),
    nodeDiskCache: NodeDiskCache.instanceStore(), clientCidrs: ['10.0.0.0/16'], ...extra,
  });
  // The lab's values for what resolves at deploy time.
  return Object.values(launchTemplateUserData(stack, () => 'fs-0123456789abcdef0.efs.us-east-1.amazonaws.com'))[0];
}

describe('node disk cache: the script\'s own checks', () => {
  const ud = nodeUserData();

  test('the rendered node asks for it, with fsc on the origin mount', () => {
    const p = parameters(ud);
    expect(p.EFSC_NODE_DISK_CACHE).toBe('true');
    expect(p.EFSC_ORIGIN_MOUNT_OPTIONS.split(',')).toContain('fsc');
  });

  test('the boot self-test of the cache: logged by default, required with requireSelfTest, absent without the disk cache', () => {
    expect(parameters(ud).EFSC_CACHE_SELF_TEST).toBe('log');
    expect(parameters(nodeUserData({ nodeDiskCache: NodeDiskCache.instanceStore({ requireSelfTest: true }) })).EFSC_CACHE_SELF_TEST).toBe('require');
    expect(parameters(nodeUserData({ nodeDiskCache: NodeDiskCache.none() })).EFSC_CACHE_SELF_TEST).toBeUndefined();
    const bad = ud.replace("EFSC_CACHE_SELF_TEST='log'", "EFSC_CACHE_SELF_TEST='maybe'");
    expect(bad).not.toBe(ud);
    const run = runScript(bad, ['--disk-cache'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: EFSC_CACHE_SELF_TEST='maybe' is invalid: expected log or require/);
  });

  test('an origin mount without fsc is refused before anything is installed', () => {
    const p = parameters(ud).EFSC_ORIGIN_MOUNT_OPTIONS;
    const bad = ud.replace(`EFSC_ORIGIN_MOUNT_OPTIONS='${p}'`, `EFSC_ORIGIN_MOUNT_OPTIONS='${p.replace(/^fsc,|,fsc(?=,|$)/, '')}'`);
    expect(bad).not.toBe(ud);
    const run = runScript(bad, ['--disk-cache'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: EFSC_ORIGIN_MOUNT_OPTIONS must contain fsc with EFSC_NODE_DISK_CACHE=true/);
    expect(run.calls.filter((c) => /^(dnf|apt-get|mdadm|mkfs\.ext4|mount) /.test(c))).toEqual([]);
  });

  test('a bad cull setting is refused by the shared disk cache checks', () => {
    const bad = ud.replace("EFSC_CULL_BCULL='7'", "EFSC_CULL_BCULL='12'");
    expect(bad).not.toBe(ud);
    const run = runScript(bad, ['--disk-cache'], {});
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/FATAL: need 0 <= EFSC_CULL_BSTOP < EFSC_CULL_BCULL < EFSC_CULL_BRUN < 100/);
  });

  test('--disk-cache on a node without it does nothing', () => {
    const off = ud.replace("EFSC_NODE_DISK_CACHE='true'", "EFSC_NODE_DISK_CACHE='false'");
    const run = runScript(off, ['--disk-cache'], {});
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // A fresh sandbox keeps no code yet: the one call is the loader's fetch of it.
    expect(run.calls.filter((c) => !c.startsWith('aws s3api get-object '))).toEqual([]);
  });
});
