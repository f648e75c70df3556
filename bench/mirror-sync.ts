/**
 * Item 7: the mirrors' sync (issues 19 and 29), on the lab's VMs, in one run. An origin that behaves like EFS (kernel
 * nfsd, NFSv4.1 only, no delegations, shaped link) and one cache node with a mirror of /efs/app and the default
 * `mirroring.syncWorkers`. Each sync is started by hand (the timer is held) and timed, with the origin nfsd's own counters
 * read around it.
 *
 * 1. A tree of `smallFiles`: copied into the mirror, then synced unchanged `rounds` times (issue 29's first target:
 *    the origin requests and the time of one unchanged sync).
 * 2. The tree grows to `largeFiles`; the node's copy and its record of the last walk are removed, so the next sync is
 *    a first sync, as at boot. Then two unchanged syncs, and one after `changedShare` of the files changed on the
 *    origin. Node memory (tmpfs, slab, the walk's record) before and after.
 * 3. Staleness of the large tree: the timer runs at `intervalSeconds`; a change, an addition, a removal and a rename
 *    are made on the origin at once, and a client of the mirror (the node's own NFS mount of its export) is polled
 *    until it sees each.
 *
 * The figures of the sync before issue 29 (fpart and rsync on a mount without attribute caching) are kept beside
 * these as `baseline`, from the run that measured them.
 */
import { CfnResource, Duration, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, Mirror, MountHelper } from '../lib';
import { CfnTemplate, Lab, progress, PSEUDO_VALUES, resolveUserData, Vm } from '../test/heavy/lab/harness';
import { LAB_SUBNET } from '../test/heavy/lab/scenarios/stacks';
import { importedFs, newApp } from '../test/util';
import { bootOrigin, counters, expectDone, minus, originSetting } from './metadata';
import { machine, MirrorSyncResults, NodeMemory, StalenessSample, SyncBaseline, SyncSample } from './results';

export interface MirrorSyncSettings {
  readonly delayMs: number;
  readonly rateMbit: number;
  /** Files of the first tree (issue 29's target: its unchanged sync). */
  readonly smallFiles: number;
  /** Unchanged syncs of the first tree. */
  readonly rounds: number;
  /** Files of the large tree. */
  readonly largeFiles: number;
  /** Share of the large tree's files changed before its last sync. */
  readonly changedShare: number;
  /** The timer's interval during the staleness measurement. */
  readonly intervalSeconds: number;
}

export const DEFAULT_MIRROR_SYNC_SETTINGS: MirrorSyncSettings = {
  delayMs: 2, rateMbit: 16, smallFiles: 20_000, rounds: 3, largeFiles: 100_000, changedShare: 0.01, intervalSeconds: 60,
};

const MIN = 60_000;
const SUBNET = '10.77.0';
const NODE_IP = `${SUBNET}.31`;
const WORKERS = 8;
const STATE = '/run/efs-cache/mirror';

function nodeUserData(s: MirrorSyncSettings): { userData: string; tags: Record<string, string> } {
  const app = newApp();
  const stack = new Stack(app, 'SyncBench');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fileSystem = importedFs(stack);
  const values = PSEUDO_VALUES;
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: [LAB_SUBNET],
    mountTimeout: Duration.seconds(150), metrics: false,
    mirrors: [Mirror.path('/efs/app')],
    // The bench holds the timer and starts each sync itself, but for the staleness measurement.
    mirroring: {
      interval: Duration.seconds(s.intervalSeconds),
      // Files of 0.5-4 KiB take a page each on the tmpfs.
      size: Size.mebibytes(Math.ceil(s.largeFiles * 5 / 1024) + 256),
      syncTimeout: Duration.hours(2),
      syncWorkers: WORKERS,
    },
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  return {
    userData: resolveUserData(template, stack.getLogicalId(fleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate), values),
    tags: { 'cdk-efs-cache:signal-resource': stack.getLogicalId(fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource) },
  };
}

/** Shell for the origin: files FROM to TO - 1 of the tree (0.5-4 KiB, 200 to a folder). */
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

/** Shell for the origin: new content for every STEP-th file of the tree below TO, in place (same name, new bytes). */
function changeFiles(to: number, step: number): string {
  return `python3 - <<'EOF'
import os
n = 0
for i in range(0, ${to}, ${step}):
    with open('/srv/efs/app/bulk/d%03d/f%d' % (i // 200, i), 'r+b') as f:
        f.write(os.urandom(64))
    n += 1
print(n)
EOF
sync`;
}

async function memory(node: Vm): Promise<NodeMemory> {
  const m = Object.fromEntries((await node.execOk('cat /proc/meminfo')).split('\n').filter(Boolean)
    .map((l) => { const [k, v] = l.split(':'); return [k, Number(v.trim().split(' ')[0]) * 1024]; }));
  const used = Number((await node.execOk('df -B1 --output=used /mirror | tail -1')).trim());
  const record = Number((await node.execOk(`du -sb ${STATE}/.walk 2>/dev/null | cut -f 1 || echo 0`)).trim()) || 0;
  return { shmem: m.Shmem, slab: m.Slab, available: m.MemAvailable, tmpfsUsed: used, walkRecord: record };
}

export async function runMirrorSync(s: MirrorSyncSettings, log: (m: string) => void, baseline?: SyncBaseline): Promise<MirrorSyncResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const ud = nodeUserData(s);
  const lab = await Lab.create({ name: 'bench-sync' });
  const failures: string[] = [];
  const samples: SyncSample[] = [];
  const staleness: StalenessSample[] = [];
  let memoryBefore: NodeMemory | undefined;
  let memoryAfter: NodeMemory | undefined;
  try {
    const origin = await bootOrigin(lab, 1536);
    await origin.execOk('mkdir -p /srv/efs/app && echo seed > /srv/efs/app/README && sync');
    await lab.setLink(origin, { delayMs: s.delayMs, rateMbit: s.rateMbit });
    const node = await lab.startVm({ name: 'node', ip: NODE_IP, userData: ud.userData, cpus: 1, memoryMiB: 2048, instance: { tags: ud.tags } });
    expectDone('node', await node.waitForCloudInit({ timeoutMs: 30 * MIN }));
    await node.execOk('systemctl stop efs-cache-mirror.timer');
    const syncOnce = async (kind: SyncSample['kind'], files: number) => {
      const o0 = await counters(origin);
      const out = await node.execOk([
        's=$(date +%s%N); systemctl start efs-cache-mirror.service; e=$(date +%s%N); echo "US=$(( (e - s) / 1000 ))"',
        'journalctl -u efs-cache-mirror.service -o cat | grep "mirror /efs/app: synced" | tail -n 1 | sed "s/^/LINE=/"',
        `cat ${STATE}/app`,
      ].join('; '), { timeoutMs: 150 * MIN });
      const o = minus(await counters(origin), o0, 1);
      const us = Number(/US=(\d+)/.exec(out)?.[1]);
      const line = /LINE=.*?: synced (.*)/.exec(out)?.[1] ?? '';
      const state = out.split('\n').filter((l) => l && !l.startsWith('US=') && !l.startsWith('LINE=')).pop() ?? '';
      const sample: SyncSample = { workers: WORKERS, kind, files, seconds: us / 1e6, originOps: o.ops, originRpcs: o.rpcs, state, line };
      samples.push(sample);
      log(`7. ${files} files, ${kind}: ${sample.seconds.toFixed(1)} s, ${o.rpcs} origin requests (${line}; state: ${state})`);
    };
    const step = async (what: string, f: () => Promise<void>) => {
      try {
        await f();
      } catch (e) {
        failures.push(`${what}: ${(e as Error).message.split('\n')[0]}`);
        log(`7. ${what}: FAILED ${(e as Error).message}`);
      }
    };
    await step(`a tree of ${s.smallFiles} files`, async () => {
      await origin.execOk(addFiles(0, s.smallFiles), { timeoutMs: 30 * MIN });
      await syncOnce('copy', s.smallFiles);
      for (let r = 0; r < s.rounds; r++) await syncOnce('unchanged', s.smallFiles);
    });
    await step(`a tree of ${s.largeFiles} files`, async () => {
      await origin.execOk(addFiles(s.smallFiles, s.largeFiles), { timeoutMs: 60 * MIN });
      // A first sync, as at boot: no copy and no record of the last walk.
      await node.execOk(`find /mirror/app -mindepth 1 -delete; rm -rf ${STATE}/.walk; sync; echo 3 > /proc/sys/vm/drop_caches`, { timeoutMs: 30 * MIN });
      memoryBefore = await memory(node);
      await syncOnce('first', s.largeFiles);
      memoryAfter = await memory(node);
      for (let r = 0; r < 2; r++) await syncOnce('unchanged', s.largeFiles);
      const step = Math.round(1 / s.changedShare);
      const changed = Number((await origin.execOk(changeFiles(s.largeFiles, step), { timeoutMs: 30 * MIN })).trim().split('\n')[0]);
      log(`7. ${changed} files changed on the origin`);
      await syncOnce('changed', s.largeFiles);
    });
    await step(`staleness of a tree of ${s.largeFiles} files`, async () => {
      // The node's own NFS mount of its mirror export: a client with the usual attribute cache.
      await node.execOk(`mkdir -p /mnt/m && mount -t nfs4 -o nfsvers=4.1,port=2050,ro,hard,timeo=600,retrans=2 ${NODE_IP}:/mirror/app /mnt/m && ls /mnt/m/bulk/d000 >/dev/null`, { timeoutMs: 10 * MIN });
      await node.execOk('cat /mnt/m/bulk/d000/f0 /mnt/m/bulk/d000/f1 /mnt/m/bulk/d000/f2 >/dev/null');
      await node.execOk('systemctl start efs-cache-mirror.timer');
      // The changes land at a point of the timer's cycle the bench does not choose (it was started just now).
      await origin.execOk([
        'cd /srv/efs/app/bulk/d000',
        'printf changed > f0.tmp && mv f0.tmp f0',
        'printf added > added',
        'rm f1',
        'mv f2 f2.renamed',
      ].join(' && '));
      const t0 = Date.now();
      const checks: Record<StalenessSample['change'], string> = {
        change: 'test "$(cat /mnt/m/bulk/d000/f0 2>/dev/null)" = changed',
        addition: 'test "$(cat /mnt/m/bulk/d000/added 2>/dev/null)" = added',
        removal: '! test -e /mnt/m/bulk/d000/f1',
        rename: 'test -e /mnt/m/bulk/d000/f2.renamed && ! test -e /mnt/m/bulk/d000/f2',
      };
      const left = new Set(Object.keys(checks) as Array<StalenessSample['change']>);
      while (left.size && Date.now() - t0 < 60 * MIN) {
        for (const c of [...left]) {
          if ((await node.exec(checks[c], { timeoutMs: MIN })).code === 0) {
            staleness.push({ change: c, seconds: (Date.now() - t0) / 1000 });
            log(`7. staleness: ${c} seen after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
            left.delete(c);
          }
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
      await node.execOk('systemctl stop efs-cache-mirror.timer');
      if (left.size) throw new Error(`not seen within an hour: ${[...left].join(', ')}`);
    });
    return {
      date,
      durationSeconds: (Date.now() - started) / 1000,
      machine: machine(true),
      settings: {
        'origin': originSetting(s),
        'VMs': 'QEMU with TCG (software emulation, no KVM), 1 vCPU each: origin 1536 MiB, cache node 2048 MiB',
        'node': `the library's node user data, a mirror of /efs/app, mirrorSyncWorkers ${WORKERS}; each sync mounts the origin afresh (nosharecache, actimeo=3600, noatime), walks it once and compares with the last walk`,
        'trees': `files of 0.5-4 KiB, 200 to a folder; ${s.smallFiles} files copied, then ${s.rounds} unchanged syncs; the tree grown to ${s.largeFiles}, ` +
          `the node's copy and record removed, a first sync, two unchanged syncs, and one after ${s.changedShare * 100} % of the files changed in place (64 bytes each)`,
        'staleness': `the timer at ${s.intervalSeconds} s, started just before a change, an addition, a removal and a rename in one folder of the large tree; ` +
          'seen by an NFSv4.1 mount of the mirror on the node itself (default attribute cache), polled every second',
        'counts': 'origin requests per sync: the origin nfsd\'s own counters (/proc/net/rpc/nfsd) read around each sync, started by hand with the timer held; memory: /proc/meminfo, the mirrors\' tmpfs and the walk\'s record in /run on the node',
      },
      smallFiles: s.smallFiles,
      largeFiles: s.largeFiles,
      changedShare: s.changedShare,
      intervalSeconds: s.intervalSeconds,
      samples,
      staleness,
      ...(memoryBefore && memoryAfter ? { memoryBefore, memoryAfter } : {}),
      ...(baseline ? { baseline } : {}),
      failures,
    };
  } finally {
    await lab.destroy();
    progress('bench-sync lab destroyed');
  }
}
