/**
 * Item 6: metadata-heavy work in the states users live in (issues 16 and 19), on the lab's VMs, in one run.
 *
 * An origin that behaves like EFS (kernel nfsd, NFSv4.1 only, no delegations, shaped link), one cache node with a
 * mirror of /efs/app, and two clients running the library's own client user data: client A is an FS-Cache client of
 * the origin (and mounts the origin directly as well, with EFS's recommended options and no fsc: the baseline);
 * client B is a client of the fleet (the re-export with fsc, nocto and the fleet's timers) with the fleet's mirror
 * mounted. Each workload runs in one python3 process on the client (bench/workload.py), cold (first pass, every cache
 * on the path empty), warm (the client's caches dropped before each pass: what the node, FS-Cache or mirror keep) and
 * steady (passes one after another, nothing dropped). Around every call the origin's own nfsd counters are read, so
 * each figure comes with the origin operations it cost. The mirror's own cost (its syncs) is item 7 (bench/mirror-sync.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { CfnResource, Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, DiskCache, FsCacheClientLaunchTemplate, Mirror, MountHelper, MountSource } from '../lib';
import { CfnTemplate, Lab, progress, PSEUDO_VALUES, resolveUserData, Vm } from '../test/heavy/lab/harness';
import { EFS_NAME, LAB_NVME_MODEL, LAB_SUBNET, ORIGIN_USER_DATA } from '../test/heavy/lab/scenarios/stacks';
import { importedFs, newApp } from '../test/util';
import { machine, MetaCell, MetaMode, MetaResults, MetaState, MetaWorkload } from './results';
import { median } from './stats';

export interface MetadataSettings {
  readonly delayMs: number;
  readonly rateMbit: number;
  /** Files of the include/stat storm (one pass: stat + open + read of each). */
  readonly stormFiles: number;
  /** Passes of the steady storm (no drops). */
  readonly stormRounds: number;
  /** Files of the package tree. */
  readonly treeFiles: number;
  /** Passes of each warm and steady measurement of the tree and of ls -lR. */
  readonly passes: number;
}

export const DEFAULT_METADATA_SETTINGS: MetadataSettings = {
  delayMs: 2, rateMbit: 16, stormFiles: 500, stormRounds: 20, treeFiles: 1000, passes: 5,
};

const MIN = 60_000;
const SUBNET = '10.77.0';
const NODE_IP = `${SUBNET}.31`;
const EFS_OPTIONS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport';
/** NFSv4 operation numbers (RFC 8881) whose counts the tables show, besides the total (SEQUENCE: idle mounts' lease upkeep is it alone). */
const OPS: Record<string, number> = { ACCESS: 3, CLOSE: 4, GETATTR: 9, LOOKUP: 15, OPEN: 18, READ: 25, READDIR: 26, SEQUENCE: 53 };

export const MODES: Record<MetaMode, string> = {
  direct: 'origin, directly (EFS options, no fsc)',
  fscache: 'FS-Cache client of the origin',
  node: 'client of the cache node (re-export)',
  mirror: 'client of the node\'s mirror',
};

export interface Counters { ops: Record<string, number>; rpcs: number }

/** The origin's (or a node's) nfsd counters: NFSv4 compounds and the operations above, from /proc/net/rpc/nfsd. */
export async function counters(vm: Vm): Promise<Counters> {
  const text = await vm.execOk("grep -E '^proc4(ops)? ' /proc/net/rpc/nfsd");
  const line = (name: string) => (text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '').trim().split(/\s+/).map(Number);
  const p4 = line('proc4');
  const p4ops = line('proc4ops');
  // proc4: "proc4 2 null compound"; proc4ops: "proc4ops N op0 op1 ...", op k in field k + 2.
  const ops: Record<string, number> = { total: p4ops.slice(2).reduce((a, b) => a + (b || 0), 0) };
  for (const [k, i] of Object.entries(OPS)) ops[k] = p4ops[i + 2] ?? 0;
  return { ops, rpcs: p4[3] ?? 0 };
}

export function minus(a: Counters, b: Counters, per: number): Counters {
  const ops: Record<string, number> = {};
  for (const k of Object.keys(a.ops)) ops[k] = (a.ops[k] - b.ops[k]) / per;
  return { ops, rpcs: (a.rpcs - b.rpcs) / per };
}

function fleetUserData(s: MetadataSettings): {
  node: string; nodeTags: Record<string, string>; originClient: string; fleetClient: string; fleetName: string;
} {
  const app = newApp();
  const stack = new Stack(app, 'MetaBench');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fileSystem = importedFs(stack);
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: [LAB_SUBNET],
    mountTimeout: Duration.seconds(150), tuning: { nfsdThreads: 16 },
    mirrors: [Mirror.path('/efs/app')],
    // The bench holds the timer and starts each sync itself: the passes' counters are the passes' own.
    mirroring: {
      interval: Duration.minutes(10),
      size: Size.mebibytes(Math.ceil((s.treeFiles * 64 + s.stormFiles * 8) / 1024) + 128),
      syncTimeout: Duration.hours(1),
    },
  });
  const originClient = new FsCacheClientLaunchTemplate(stack, 'OriginClient', {
    vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS,
    diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }), mountTimeout: Duration.seconds(180),
  });
  const fleetClient = new FsCacheClientLaunchTemplate(stack, 'FleetClient', {
    vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app'] }), diskCache: DiskCache.instanceStore({ deviceModel: LAB_NVME_MODEL }),
    mountTimeout: Duration.seconds(180),
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const values = PSEUDO_VALUES;
  const ud = (lt: ec2.LaunchTemplate) => resolveUserData(template, stack.getLogicalId(lt.node.defaultChild as ec2.CfnLaunchTemplate), values);
  const asg = fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource;
  return {
    node: ud(fleet.launchTemplate),
    nodeTags: { 'cdk-efs-cache:signal-resource': stack.getLogicalId(asg) },
    originClient: ud(originClient.launchTemplate),
    fleetClient: ud(fleetClient.launchTemplate),
    fleetName: fleet.endpoint,
  };
}

/** Shell for the origin: the storm's files, and a package tree of `files` files of 1-50 KiB in deep folders. */
function dataSet(s: MetadataSettings): string {
  const py = `import os, random
random.seed(16)
os.makedirs('/srv/efs/app/storm', exist_ok=True)
for i in range(1, ${s.stormFiles} + 1):
    with open('/srv/efs/app/storm/f%d' % i, 'wb') as f:
        f.write(os.urandom(random.randint(512, 4096)))
n = 0
while n < ${s.treeFiles}:
    pkg = '/srv/efs/app/pkg/node_modules/p%03d' % (n // 25)
    d = os.path.join(pkg, random.choice(['lib', 'dist', 'src/util', 'lib/internal/x', 'types']))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'm%d.js' % n), 'wb') as f:
        f.write(os.urandom(random.randint(1024, 50 * 1024)))
    n += 1
`;
  return `python3 - <<'EOF'\n${py}EOF\nsync`;
}

interface WorkloadRun { seconds: number[]; ops: Record<string, { n: number; p50: number; p99: number }> }

export async function runMetadata(s: MetadataSettings, log: (m: string) => void): Promise<MetaResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const ud = fleetUserData(s);
  const lab = await Lab.create({ name: 'bench-meta' });
  const failures: string[] = [];
  try {
    const origin = await bootOrigin(lab, 1536);
    await origin.execOk(dataSet(s), { timeoutMs: 20 * MIN });
    log('origin: data set written');
    await lab.setLink(origin, { delayMs: s.delayMs, rateMbit: s.rateMbit });
    const node = await lab.startVm({ name: 'node', ip: NODE_IP, userData: ud.node, cpus: 1, memoryMiB: 1536, instance: { tags: ud.nodeTags } });
    expectDone('node', await node.waitForCloudInit({ timeoutMs: 30 * MIN }));
    await node.execOk('systemctl stop efs-cache-mirror.timer');
    await lab.setDnsRecord(ud.fleetName, [NODE_IP]);
    const nvme = (c: string) => Array.from({ length: 2 }, (_, i) => ({ sizeMiB: 384, serial: `meta-${c}-${i}`, blank: true }));
    const clientA = await lab.startVm({ name: 'client-a', ip: `${SUBNET}.21`, userData: ud.originClient, cpus: 1, memoryMiB: 1024, nvmeDisks: nvme('a') });
    const clientB = await lab.startVm({ name: 'client-b', ip: `${SUBNET}.22`, userData: ud.fleetClient, cpus: 1, memoryMiB: 1024, nvmeDisks: nvme('b') });
    expectDone('client-a', await clientA.waitForCloudInit({ timeoutMs: 20 * MIN }));
    expectDone('client-b', await clientB.waitForCloudInit({ timeoutMs: 20 * MIN }));
    await clientA.execOk(`mkdir -p /mnt/direct && mount -t nfs4 -o ${EFS_OPTIONS},nosharecache ${EFS_NAME}:/ /mnt/direct`);
    const workload = fs.readFileSync(path.join(__dirname, 'workload.py'), 'utf8');
    for (const c of [clientA, clientB]) await c.writeFile('/root/workload.py', workload);
    const mounts = `${await clientA.execOk('findmnt -t nfs4 -rno TARGET,SOURCE,OPTIONS')}${await clientB.execOk('findmnt -t nfs4 -rno TARGET,SOURCE,OPTIONS')}`;
    log(`client mounts:\n${mounts}`);
    const where: Record<MetaMode, { vm: Vm; root: string; server: Vm }> = {
      direct: { vm: clientA, root: '/mnt/direct/app', server: origin },
      fscache: { vm: clientA, root: '/mnt/efs/app', server: origin },
      node: { vm: clientB, root: '/mnt/efs/app', server: node },
      mirror: { vm: clientB, root: '/mnt/mirror/app', server: node },
    };

    const cells: MetaCell[] = [];
    const measureStart = Date.now();
    for (const mode of Object.keys(MODES) as MetaMode[]) {
      const { vm, root, server } = where[mode];
      for (const wl of ['storm', 'tree', 'ls'] as MetaWorkload[]) {
        const dir = `${root}/${wl === 'storm' ? 'storm' : 'pkg'}`;
        for (const state of ['cold', 'warm', 'steady'] as MetaState[]) {
          const passes = state === 'cold' ? 1 : wl === 'storm' && state === 'steady' ? s.stormRounds : s.passes;
          const args = `${wl} ${dir} ${passes} ${state === 'warm' ? 'drop' : 'keep'}${wl === 'storm' ? ` ${s.stormFiles}` : ''}`;
          try {
            const o0 = await counters(origin);
            const n0 = server === origin ? undefined : await counters(server);
            const r = JSON.parse(await vm.execOk(`python3 /root/workload.py ${args}`, { timeoutMs: 40 * MIN })) as WorkloadRun;
            const o = minus(await counters(origin), o0, passes);
            const n = n0 ? minus(await counters(server), n0, passes) : undefined;
            cells.push({
              mode, workload: wl, state, seconds: r.seconds, originOps: o.ops, originRpcs: o.rpcs, ...(n ? { nodeOps: n.ops } : {}),
              latency: r.ops,
            });
            const med = median(r.seconds);
            log(`6. ${mode} ${wl} ${state}: median ${med.toFixed(3)} s of ${passes}, origin ${o.rpcs.toFixed(0)} RPCs/pass ` +
              `(OPEN ${o.ops.OPEN.toFixed(0)}, GETATTR ${o.ops.GETATTR.toFixed(0)})${n ? `, node OPEN ${n.ops.OPEN.toFixed(0)}/pass` : ''}`);
          } catch (e) {
            failures.push(`${mode} ${wl} ${state}: ${(e as Error).message.split('\n')[0]}`);
            log(`6. ${mode} ${wl} ${state}: FAILED ${(e as Error).message}`);
          }
        }
      }
    }
    log(`passes took ${((Date.now() - measureStart) / 1000).toFixed(0)} s`);

    return {
      date,
      durationSeconds: (Date.now() - started) / 1000,
      machine: machine(true),
      settings: {
        'origin': originSetting(s),
        'VMs': 'QEMU with TCG (software emulation, no KVM), 1 vCPU each: origin 1536 MiB, cache node 1536 MiB, two clients 1024 MiB with 2 x 384 MiB emulated NVMe in RAID 0',
        'client mounts': `the library's client user data (FS-Cache client of the origin; client of the fleet with its mirror); the direct baseline: ${EFS_OPTIONS},nosharecache`,
        'workloads': `storm: stat + open + read + close of the same ${s.stormFiles} files of 0.5-4 KiB; tree: a package tree of ${s.treeFiles} files of 1-50 KiB in ` +
          `${Math.ceil(s.treeFiles / 25)} packages, walked and read; ls: ls -lR of that tree. One python3 process per call (bench/workload.py)`,
        'states': `cold: a workload's first pass on its client (one pass; the client's caches empty, a node's holding what earlier workloads read through it); warm: the client's page, dentry and inode caches dropped before each of ${s.passes} passes; ` +
          `steady: passes one after another, nothing dropped (${s.stormRounds} for the storm, ${s.passes} otherwise)`,
        'counts': 'origin operations per pass: the origin nfsd\'s own counters (/proc/net/rpc/nfsd) read around each call, divided by its passes; the mirror\'s timer held during the passes',
      },
      cells,
      failures,
    };
  } finally {
    await lab.destroy();
    progress('bench-meta lab destroyed');
  }
}

/** Boots the lab's origin (an EFS stand-in without delegations, at SUBNET.10, named EFS_NAME) and waits for it. */
export async function bootOrigin(lab: Lab, memoryMiB: number): Promise<Vm> {
  const origin = await lab.startVm({ name: 'origin', ip: `${SUBNET}.10`, userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME], cpus: 1, memoryMiB });
  expectDone('origin', await origin.waitForCloudInit({ timeoutMs: 15 * MIN }));
  return origin;
}

/** The settings line of a lab origin that behaves like EFS, shaped as the bench shapes it. */
export function originSetting(s: { delayMs: number; rateMbit: number }): string {
  return `kernel nfsd, NFSv4.1 only, delegations off (fs.leases-enable=0, like EFS); its egress shaped with netem: delay ${s.delayMs} ms, rate ${s.rateMbit} Mbit/s`;
}

export function expectDone(name: string, r: { status: string; errors: string[]; output: string }): void {
  if (r.status !== 'done' || r.errors.length) {
    throw new Error(`${name}: user data did not finish (${r.status}): ${r.errors.join('; ')}\n${r.output.split('\n').slice(-30).join('\n')}`);
  }
}
