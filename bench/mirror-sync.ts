/**
 * Item 7: the mirrors' sync (issue 19), on the lab's VMs, in one run. An origin that behaves like EFS (kernel nfsd,
 * NFSv4.1 only, no delegations, shaped link) and two cache nodes with a mirror of /efs/app that differ only in
 * `mirrorSyncWorkers`: 1 (one rsync job at a time, as a single rsync) and 8 (the default). Each sync is started by
 * hand (the timers are held) and timed, with the origin nfsd's own counters read around it.
 *
 * 1. Both nodes copy `compareFiles` new files, then sync the unchanged tree `rounds` times, alternately: the speed-up
 *    of 8 jobs over 1, with its range over the pairs, and the origin requests of each.
 * 2. The node with 8 jobs copies `largeFiles - compareFiles` more (a tree of `largeFiles`), then syncs it unchanged
 *    twice: the time and origin requests of one interval for a tree of that size, and the node memory it takes.
 */
import { CfnResource, Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, MountHelper } from '../lib';
import { CfnTemplate, IntrinsicValues, Lab, progress, resolveUserData, Vm } from '../test/lab/harness';
import { LAB_SUBNET } from '../test/lab/scenarios/stacks';
import { importedFs, newApp } from '../test/util';
import { bootOrigin, counters, expectDone, minus, originSetting } from './metadata';
import { machine, MirrorSyncResults, NodeMemory, SyncSample } from './results';

export interface MirrorSyncSettings {
  readonly delayMs: number;
  readonly rateMbit: number;
  /** Files each node copies, then syncs unchanged, for the comparison of 1 and 8 jobs. */
  readonly compareFiles: number;
  /** Unchanged syncs of each node in the comparison. */
  readonly rounds: number;
  /** Files of the tree the node with 8 jobs holds last. */
  readonly largeFiles: number;
}

export const DEFAULT_MIRROR_SYNC_SETTINGS: MirrorSyncSettings = { delayMs: 2, rateMbit: 16, compareFiles: 4000, rounds: 3, largeFiles: 20_000 };

const MIN = 60_000;
const SUBNET = '10.77.0';
export const SYNC_WORKERS = [1, 8] as const;

function nodesUserData(s: MirrorSyncSettings): Array<{ workers: number; userData: string; tags: Record<string, string> }> {
  const app = newApp();
  const stack = new Stack(app, 'SyncBench');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fileSystem = importedFs(stack);
  const values = { 'AWS::Region': 'us-east-1', 'AWS::URLSuffix': 'amazonaws.com' } as IntrinsicValues;
  const fleets = SYNC_WORKERS.map((w) => ({
    workers: w,
    fleet: new CacheFleet(stack, `Jobs${w}`, {
      vpc, fileSystem, nodeCount: 1, originMountHelper: MountHelper.NFS, clientCidrs: [LAB_SUBNET],
      originMountTimeout: Duration.seconds(150), metrics: false,
      // Two fleets in one VPC: each its own private zone (Route 53 refuses two of one name on a VPC).
      zoneName: `jobs${w}.efs-cache.internal`,
      mirrorPaths: ['/efs/app'],
      // The bench holds the timers and starts each sync itself.
      mirrorInterval: Duration.hours(1),
      mirrorSize: Size.mebibytes(Math.ceil(s.largeFiles * 8 / 1024) + 128),
      mirrorSyncTimeout: Duration.hours(1),
      mirrorSyncWorkers: w,
    }),
  }));
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  return fleets.map(({ workers, fleet }) => ({
    workers,
    userData: resolveUserData(template, stack.getLogicalId(fleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate), values),
    tags: { 'cdk-efs-cache:signal-resource': stack.getLogicalId(fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource) },
  }));
}

/** Shell for the origin: files FROM to TO - 1 of the bulk tree (0.5-4 KiB, 200 to a folder). */
function addFiles(from: number, to: number): string {
  return `python3 - <<'EOF'
import os, random
random.seed(${from})
for i in range(${from}, ${to}):
    d = '/srv/efs/app/bulk/d%03d' % (i // 200)
    os.makedirs(d, exist_ok=True)
    with open('%s/f%d' % (d, i), 'wb') as f:
        f.write(os.urandom(random.randint(512, 4096)))
EOF
sync`;
}

async function memory(node: Vm): Promise<NodeMemory> {
  const m = Object.fromEntries((await node.execOk('cat /proc/meminfo')).split('\n').filter(Boolean)
    .map((l) => { const [k, v] = l.split(':'); return [k, Number(v.trim().split(' ')[0]) * 1024]; }));
  const used = Number((await node.execOk('df -B1 --output=used /mirror | tail -1')).trim());
  return { shmem: m.Shmem, slab: m.Slab, available: m.MemAvailable, tmpfsUsed: used };
}

export async function runMirrorSync(s: MirrorSyncSettings, log: (m: string) => void): Promise<MirrorSyncResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const nodes = nodesUserData(s);
  const lab = await Lab.create({ name: 'bench-sync' });
  const failures: string[] = [];
  const samples: SyncSample[] = [];
  let memoryBefore: NodeMemory | undefined;
  let memoryAfter: NodeMemory | undefined;
  try {
    const origin = await bootOrigin(lab, 1536);
    await origin.execOk('mkdir -p /srv/efs/app && echo seed > /srv/efs/app/README && sync');
    await lab.setLink(origin, { delayMs: s.delayMs, rateMbit: s.rateMbit });
    const vms: Record<number, Vm> = {};
    for (const [i, n] of nodes.entries()) {
      vms[n.workers] = await lab.startVm({ name: `node-${n.workers}`, ip: `${SUBNET}.${31 + i}`, userData: n.userData, cpus: 1, memoryMiB: 1536, instance: { tags: n.tags } });
    }
    for (const n of nodes) {
      expectDone(`node-${n.workers}`, await vms[n.workers].waitForCloudInit({ timeoutMs: 30 * MIN }));
      await vms[n.workers].execOk('systemctl stop efs-cache-mirror.timer');
    }
    const syncOnce = async (workers: number, kind: SyncSample['kind'], files: number) => {
      const node = vms[workers];
      const o0 = await counters(origin);
      const out = await node.execOk('s=$(date +%s%N); systemctl start efs-cache-mirror.service; e=$(date +%s%N); echo "US=$(( (e - s) / 1000 ))"; cat /run/efs-cache/mirror/app',
        { timeoutMs: 70 * MIN });
      const o = minus(await counters(origin), o0, 1);
      const us = Number(/US=(\d+)/.exec(out)?.[1]);
      const state = out.split('\n').filter((l) => l && !l.startsWith('US=')).pop() ?? '';
      const sample: SyncSample = { workers, kind, files, seconds: us / 1e6, originOps: o.ops, originRpcs: o.rpcs, state };
      samples.push(sample);
      log(`7. ${files} files, ${kind}, ${workers} job(s): ${sample.seconds.toFixed(1)} s, ${o.rpcs} origin requests (state: ${state})`);
    };
    const step = async (what: string, f: () => Promise<void>) => {
      try {
        await f();
      } catch (e) {
        failures.push(`${what}: ${(e as Error).message.split('\n')[0]}`);
        log(`7. ${what}: FAILED ${(e as Error).message}`);
      }
    };
    await step('compare', async () => {
      await origin.execOk(addFiles(0, s.compareFiles), { timeoutMs: 30 * MIN });
      for (const w of SYNC_WORKERS) await syncOnce(w, 'copy', s.compareFiles);
      for (let r = 0; r < s.rounds; r++) for (const w of SYNC_WORKERS) await syncOnce(w, 'unchanged', s.compareFiles);
    });
    await step('large', async () => {
      const w = SYNC_WORKERS[SYNC_WORKERS.length - 1];
      memoryBefore = await memory(vms[w]);
      await origin.execOk(addFiles(s.compareFiles, s.largeFiles), { timeoutMs: 60 * MIN });
      await syncOnce(w, 'copy', s.largeFiles);
      memoryAfter = await memory(vms[w]);
      for (let r = 0; r < 2; r++) await syncOnce(w, 'unchanged', s.largeFiles);
    });
    return {
      date,
      durationSeconds: (Date.now() - started) / 1000,
      machine: machine(true),
      settings: {
        'origin': originSetting(s),
        'VMs': 'QEMU with TCG (software emulation, no KVM), 1 vCPU each: origin 1536 MiB, two cache nodes 1536 MiB',
        'nodes': `the library's node user data, a mirror of /efs/app each, mirrorSyncWorkers ${SYNC_WORKERS.join(' and ')}; the sync's own origin mount with actimeo=0 (the staleness bound)`,
        'trees': `files of 0.5-4 KiB, 200 to a folder; the comparison: ${s.compareFiles} new files copied, then ${s.rounds} unchanged syncs per node, alternately; ` +
          `last, the node with ${SYNC_WORKERS[SYNC_WORKERS.length - 1]} jobs copies ${s.largeFiles - s.compareFiles} more (a tree of ${s.largeFiles}) and syncs it unchanged twice`,
        'counts': 'origin requests per sync: the origin nfsd\'s own counters (/proc/net/rpc/nfsd) read around each sync, started by hand with the timers held; memory: /proc/meminfo and the tmpfs of the mirrors on the node',
      },
      compareFiles: s.compareFiles,
      largeFiles: s.largeFiles,
      samples,
      ...(memoryBefore && memoryAfter ? { memoryBefore, memoryAfter } : {}),
      failures,
    };
  } finally {
    await lab.destroy();
    progress('bench-sync lab destroyed');
  }
}
