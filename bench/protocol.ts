/**
 * Item 9: the protocol between clients and a cache node (issue 16), on the lab's VMs, in one run. Through a re-export
 * every NFSv4 open still reaches the origin as an OPEN (a re-export grants no delegations); NFSv3 has no OPEN. This
 * part measured one against the other before the library offered NFSv3 (`clientNfsVersion: NfsVersion.NFS_V3` now
 * turns on the same nfsd versions, with mountd on a fixed port and a numeric fsid): an origin that behaves like EFS (kernel nfsd,
 * NFSv4.1 only, no delegations, shaped link), one cache node running the library's node user data of a fleet without
 * that option, NFSv3 turned on by hand (nfsconf vers3=y), and one client that runs the include/stat storm
 * (bench/workload.py) warm (its caches dropped before each pass) and steady (nothing dropped) through:
 *   - the origin directly, with EFS's recommended options (the baseline);
 *   - the node over NFSv4.1, with the fleet's client options (what the library mounts, less fsc);
 *   - the node over NFSv3, with the same options but vers=3 and nolock (a read-only tree: no NLM through the node).
 * The origin's and the node's own nfsd counters are read around every call. Then nconnect: one large file, warm on
 * the node, read by the client over NFSv4.1 with nconnect=1 and nconnect=4, alternately.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CfnResource, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, FsCacheClientLaunchTemplate, MountHelper, MountSource } from '../lib';
import { CfnTemplate, Lab, progress, PSEUDO_VALUES, resolveUserData, Vm } from '../test/heavy/lab/harness';
import { EFS_NAME, LAB_SUBNET } from '../test/heavy/lab/scenarios/stacks';
import { importedFs, newApp } from '../test/util';
import { parameters } from '../test/util/user-data';
import { bootOrigin, expectDone, originSetting } from './metadata';
import { labPartRun, ProtocolCell, ProtocolMode, ProtocolResults } from './results';
import { median } from './stats';

export interface ProtocolSettings {
  readonly delayMs: number;
  readonly rateMbit: number;
  readonly stormFiles: number;
  /** Passes of the warm storm (caches dropped before each). */
  readonly passes: number;
  /** Rounds of the steady storm (nothing dropped). */
  readonly stormRounds: number;
  /** Size of the large file of the nconnect passes, and how many passes of each. */
  readonly fileMiB: number;
  readonly readPasses: number;
}

export const DEFAULT_PROTOCOL_SETTINGS: ProtocolSettings = {
  delayMs: 2, rateMbit: 16, stormFiles: 500, passes: 5, stormRounds: 20, fileMiB: 128, readPasses: 5,
};

const MIN = 60_000;
const SUBNET = '10.77.0';
const NODE_IP = `${SUBNET}.31`;
const DROP = 'sync && echo 3 > /proc/sys/vm/drop_caches';
const EFS_OPTIONS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport';

export const PROTOCOL_MODES: Record<ProtocolMode, string> = {
  direct: 'origin, directly (EFS options)',
  v41: 'node over NFSv4.1 (fleet client options)',
  v3: 'node over NFSv3 (same options, vers=3, nolock)',
};

function userData(): { node: string; nodeTags: Record<string, string>; clientOptions: string } {
  const app = newApp();
  const stack = new Stack(app, 'ProtocolBench');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: [LAB_SUBNET],
    mountTimeout: Duration.seconds(150), tuning: { nfsdThreads: 16 }, metrics: false,
  });
  const client = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(fleet) });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const values = PSEUDO_VALUES;
  const ud = (lt: ec2.LaunchTemplate) => resolveUserData(template, stack.getLogicalId(lt.node.defaultChild as ec2.CfnLaunchTemplate), values);
  // The fleet's client options, less fsc (this part measures the protocol, not FS-Cache).
  const clientOptions = parameters(ud(client.launchTemplate)).EFSC_MOUNT_OPTIONS.split(',').filter((o) => o !== 'fsc').join(',');
  return {
    node: ud(fleet.launchTemplate),
    nodeTags: { 'cdk-efs-cache:signal-resource': stack.getLogicalId(fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource) },
    clientOptions,
  };
}

/** Every NFS operation an nfsd served so far: the sum of its proc3 and proc4ops counts (v3 procedures, v4 operations). */
async function nfsdOps(vm: Vm): Promise<{ v3: number; v4: number; open: number }> {
  const text = await vm.execOk("grep -E '^proc(3|4ops) ' /proc/net/rpc/nfsd || true");
  const nums = (name: string) => (text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '').trim().split(/\s+/).slice(2).map(Number);
  const sum = (v: number[]) => v.reduce((a, b) => a + (b || 0), 0);
  const p4 = nums('proc4ops');
  // proc3: NULL first (not an operation of the workload), then the 21 procedures.
  return { v3: sum(nums('proc3').slice(1)), v4: sum(p4), open: p4[18] ?? 0 };
}

interface WorkloadRun { seconds: number[]; ops: Record<string, { n: number; p50: number; p99: number }> }

export async function runProtocol(s: ProtocolSettings, log: (m: string) => void): Promise<ProtocolResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const ud = userData();
  const lab = await Lab.create({ name: 'bench-proto' });
  const failures: string[] = [];
  const cells: ProtocolCell[] = [];
  const nconnect: Record<string, number[]> = { 1: [], 4: [] };
  let handle = '';
  try {
    const origin = await bootOrigin(lab, 1024);
    await origin.execOk([
      'mkdir -p /srv/efs/app/storm',
      `for i in $(seq 1 ${s.stormFiles}); do head -c $((512 + i * 7)) /dev/urandom > /srv/efs/app/storm/f$i; done`,
      `head -c ${s.fileMiB}M /dev/urandom > /srv/efs/app/big.bin`,
      'sync',
    ].join(' && '), { timeoutMs: 10 * MIN });
    const node = await lab.startVm({ name: 'node', ip: NODE_IP, userData: ud.node, cpus: 1, memoryMiB: 1536, instance: { tags: ud.nodeTags } });
    const client = await lab.startVm({ name: 'client', ip: `${SUBNET}.21`, userData: '#!/bin/bash\ntrue\n', cpus: 1, memoryMiB: 1024 });
    expectDone('node', await node.waitForCloudInit({ timeoutMs: 30 * MIN }));
    expectDone('client', await client.waitForCloudInit({ timeoutMs: 20 * MIN }));
    // NFSv3 on the node, by hand, as recorded in bench/figures.json (clientNfsVersion: NfsVersion.NFS_V3 came after this part).
    await node.execOk('nfsconf --set nfsd vers3 y && systemctl start rpcbind && systemctl restart nfs-server && grep -q "+3" /proc/fs/nfsd/versions', { timeoutMs: 5 * MIN });
    // The large file, read once through the node before the link is shaped: warm in its page cache.
    const v41 = `${ud.clientOptions}`;
    const v3 = ud.clientOptions.replace(/(^|,)(nfs)?vers=4(\.1)?(?=,|$)/, '$1vers=3').concat(',nolock,mountproto=tcp');
    await client.execOk([
      'mkdir -p /mnt/direct /mnt/v41 /mnt/v3 /mnt/nc4',
      `mount -t nfs4 -o ${EFS_OPTIONS},nosharecache ${EFS_NAME}:/ /mnt/direct`,
      `mount -t nfs4 -o ${v41} ${NODE_IP}:/efs /mnt/v41`,
      `mount -t nfs -o ${v3} ${NODE_IP}:/efs /mnt/v3`,
      `mount -t nfs4 -o ${v41},nconnect=4,nosharecache ${NODE_IP}:/efs /mnt/nc4`,
    ].join(' && '), { timeoutMs: 5 * MIN });
    const mounts = await client.execOk('findmnt -t nfs,nfs4 -rno TARGET,SOURCE,OPTIONS');
    log(`9. client mounts:\n${mounts}`);
    await client.execOk('cat /mnt/v41/app/big.bin > /dev/null', { timeoutMs: 20 * MIN });
    // The file handles each server hands out (NFSv3 allows 64 bytes; a re-export's is the origin's plus about 22):
    // name_to_handle_at on a client's NFS mount returns the server's handle wrapped in a few bytes of the client's.
    handle = (await client.execOk(`python3 - <<'EOF'
import ctypes, ctypes.util, os
libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [('handle_bytes', ctypes.c_uint), ('handle_type', ctypes.c_int), ('f_handle', ctypes.c_ubyte * 128)]
for p in ['/mnt/v3/app/storm/f1', '/mnt/v41/app/storm/f1', '/mnt/direct/app/storm/f1']:
    fh = FH(128); mnt = ctypes.c_int()
    r = libc.name_to_handle_at(-100, p.encode(), ctypes.byref(fh), ctypes.byref(mnt), 0)
    print('%s %s' % (p, fh.handle_bytes if r == 0 else 'error %d' % ctypes.get_errno()))
EOF`)).trim().replace(/\n/g, '; ');
    log(`9. file handles (name_to_handle_at on the client; an NFS client's handle is the server's plus a few bytes): ${handle}`);
    await lab.setLink(origin, { delayMs: s.delayMs, rateMbit: s.rateMbit });

    const workload = fs.readFileSync(path.join(__dirname, 'workload.py'), 'utf8');
    await client.writeFile('/root/workload.py', workload);
    const roots: Record<ProtocolMode, string> = { direct: '/mnt/direct/app/storm', v41: '/mnt/v41/app/storm', v3: '/mnt/v3/app/storm' };
    for (const mode of Object.keys(PROTOCOL_MODES) as ProtocolMode[]) {
      for (const state of ['warm', 'steady'] as const) {
        const passes = state === 'warm' ? s.passes : s.stormRounds;
        try {
          // A first pass not measured: the node's page cache holds the storm, as in the warm and steady states.
          await client.execOk(`python3 /root/workload.py storm ${roots[mode]} 1 drop ${s.stormFiles}`, { timeoutMs: 30 * MIN });
          const [o0, n0] = [await nfsdOps(origin), await nfsdOps(node)];
          const r = JSON.parse(await client.execOk(`python3 /root/workload.py storm ${roots[mode]} ${passes} ${state === 'warm' ? 'drop' : 'keep'} ${s.stormFiles}`,
            { timeoutMs: 40 * MIN })) as WorkloadRun;
          const [o1, n1] = [await nfsdOps(origin), await nfsdOps(node)];
          const cell: ProtocolCell = {
            mode, state, seconds: r.seconds, latency: r.ops,
            originOps: (o1.v4 - o0.v4) / passes, originOpens: (o1.open - o0.open) / passes,
            nodeOps: mode === 'direct' ? 0 : (n1.v3 + n1.v4 - n0.v3 - n0.v4) / passes,
          };
          cells.push(cell);
          log(`9. ${mode} storm ${state}: median ${median(r.seconds).toFixed(3)} s of ${passes}; per pass: origin ${cell.originOps.toFixed(0)} ops ` +
            `(OPEN ${cell.originOpens.toFixed(0)}), node ${cell.nodeOps.toFixed(0)} ops`);
        } catch (e) {
          failures.push(`${mode} storm ${state}: ${(e as Error).message.split('\n')[0]}`);
          log(`9. ${mode} storm ${state}: FAILED ${(e as Error).message}`);
        }
      }
    }
    for (let p = 0; p < s.readPasses; p++) {
      for (const [n, dir] of [['1', '/mnt/v41'], ['4', '/mnt/nc4']]) {
        try {
          await client.execOk(DROP);
          const t0 = Date.now();
          await client.execOk(`dd if=${dir}/app/big.bin of=/dev/null bs=1M status=none`, { timeoutMs: 20 * MIN });
          nconnect[n].push((Date.now() - t0) / 1000);
        } catch (e) {
          failures.push(`nconnect=${n} pass ${p + 1}: ${(e as Error).message.split('\n')[0]}`);
        }
      }
      log(`9. large file pass ${p + 1}: nconnect=1 ${nconnect[1][nconnect[1].length - 1]?.toFixed(2)} s, nconnect=4 ${nconnect[4][nconnect[4].length - 1]?.toFixed(2)} s`);
    }
    return {
      ...labPartRun(date, started, originSetting(s), {
        'VMs': 'QEMU with TCG (software emulation, no KVM), 1 vCPU each: origin 1024 MiB, cache node 1536 MiB, client 1024 MiB',
        'node': 'the library\'s node user data (re-export of the origin, nfsd 16 threads), then NFSv3 turned on by hand (nfsconf vers3=y, rpcbind, nfs-server restarted)',
        'client mounts': `direct: ${EFS_OPTIONS},nosharecache; NFSv4.1: ${v41}; NFSv3: ${v3}; nconnect: the NFSv4.1 options with nconnect=4,nosharecache`,
        'workload': `the include/stat storm (stat + open + read + close of the same ${s.stormFiles} files of 0.5-4 KiB, one python3 process, bench/workload.py); ` +
          `one unmeasured pass first (the node warm), then warm: ${s.passes} passes with the client's caches dropped before each; steady: ${s.stormRounds} passes, nothing dropped`,
        'nconnect': `one file of ${s.fileMiB} MiB, warm in the node's page cache, read with dd (1 MiB blocks) after the client dropped its caches; ${s.readPasses} passes of each, alternately`,
        'counts': 'operations per pass from the origin\'s and the node\'s own nfsd counters (/proc/net/rpc/nfsd: NFSv4 operations, NFSv3 procedures)',
      }),
      stormFiles: s.stormFiles,
      cells,
      fileMiB: s.fileMiB,
      nconnect,
      handles: handle,
      failures,
    };
  } finally {
    await lab.destroy();
    progress('bench-proto lab destroyed');
  }
}
