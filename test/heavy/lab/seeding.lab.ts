/**
 * Seeding and warming on a real kernel, measured in one run.
 *
 * Loading: an origin VM (kernel nfsd exporting /srv/efs over NFSv4.1, standing in for EFS) with netem delay on its
 * link, and a loader VM holding a generated tree: 3,000 files of 50 KiB, or with EFSC_SEEDING_TREE=app one shaped like
 * a web application's (the fourth seed's: 11,000 files, 98 MB). The loader copies it into fresh directories of the
 * origin four ways: the DataSeeder's user data (rendered by CDK from a test stack, lab values substituted, run with
 * --no-shutdown; fpsync inside), `cp -R`, `rsync -a` and `tar x` of a local archive of the tree. The trees must be
 * byte-identical to the source, and a second seeding run after a few changes must copy only those; how fast each method
 * was is the benchmark's (item 4), not an assertion.
 *
 * With EFSC_RESULTS_DIR set, the measured seconds and ratios are also written to $EFSC_RESULTS_DIR/seeding.json
 * (the benchmark reads them from there), with how busy the loader's and the origin's CPUs were during each method.
 * The web application's tree is measured alone (its serial copies take about an hour): WordPress's tree and warming
 * run with the generated tree only.
 *
 * Warming: a cache node VM running the CacheFleet's real user data (origin mounted with plain NFS) warms one tree
 * at boot; a client reads a warmed tree and an unwarmed tree of the same shape through the node, first read each.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, CfnResource, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, MountHelper } from '../../../lib';
import { importedFs } from '../../util';
import { CfnTemplate, Lab, progress, PSEUDO_VALUES, resolveUserData, Vm } from './harness';
import {
  changeFour, installSeeders, makeTree, SEED_SOURCE, seederScripts, TreeShape, treeDigest, unpackWordpress, wordpressPackage,
} from './scenarios/seeding';
import { EFS_NAME } from './scenarios/stacks';

const SUBNET = '10.77.0';
// On the origin's link: every reply of the "EFS" waits 10 ms; no rate cap. EFS answers a metadata operation in a few
// milliseconds, and a serial small-file copy into it is bound by that latency (the seed: cp -R of 3,000 files, 38 s).
// The lab's CPUs are emulated and many times slower than an instance's, so at 2 ms the emulated NFS stack, not the
// link, bounded every method (measured: cp -R 134 s, rsync -a 268 s, the seeder 74 s, and a warmed tree read no faster
// than an unwarmed one); 10 ms restores the proportion of latency to CPU that makes EFS latency-bound.
const LINK = { delayMs: 10 };
/** The origin's link while clients read through the node: the same delay, and bandwidth capped (see the warming test). */
const WARM_LINK = { delayMs: 10, rateMbit: 16 };
/** The generated trees: 3,000 files of 50 KiB (146.5 MiB; the third seed's 3,000 files, 150 MB), or one shaped like the fourth seed's web application (11,000 files, 98 MB). */
const TREES = {
  generated: { dirs: 30, files: 100, bytes: 51200 },
  app: { dirs: 110, files: 100, bytes: 8900 },
} as const;
const TREE_NAME = process.env.EFSC_SEEDING_TREE ?? 'generated';
if (TREE_NAME !== 'generated' && TREE_NAME !== 'app') throw new Error(`EFSC_SEEDING_TREE=${TREE_NAME}: use generated or app`);
const TREE: TreeShape = TREES[TREE_NAME];
/** WordPress's tree and warming are measured with the generated tree, not with the web application's. */
const FULL = TREE_NAME === 'generated';
const TREE_FILES = TREE.dirs * TREE.files;
const TREE_MIB = ((TREE_FILES * TREE.bytes) / 1048576).toFixed(1);
const FILES_PER_DIR = 100;
const FILE_BYTES = 51200;
const WARM_DIRS = 10; // x FILES_PER_DIR files of FILE_BYTES per tree: 1,000 files, 48.8 MiB
const SOURCE = SEED_SOURCE;
/** WordPress's tree as Debian packs it, on the loader (scenarios/seeding.ts: wordpressPackage). */
const WP_SOURCE = '/srv/wp-src';
const NFS_OPTS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport';
const VALUES = PSEUDO_VALUES as Record<string, string>;
const shape = (dirs: number): TreeShape => ({ dirs, files: FILES_PER_DIR, bytes: FILE_BYTES });

// The stand-in for EFS is latency (netem) in front of fast storage: the export is a tmpfs, so the origin's disk is not
// what the loading methods are compared on.
const ORIGIN_USER_DATA = `#!/bin/bash
set -euo pipefail
mkdir -p /srv/efs
mount -t tmpfs -o size=1200m,mode=0755 tmpfs /srv/efs
${makeTree('/srv/efs/warm', shape(WARM_DIRS))}
${makeTree('/srv/efs/cold', shape(WARM_DIRS))}
# EFS answers many requests at once: 32 nfsd threads, so the stand-in is not the bottleneck of parallel loading.
nfsconf --set nfsd threads 32
# A short NFSv4 grace period after the restart below, so that clients can open files soon.
nfsconf --set nfsd grace-time 15
nfsconf --set nfsd lease-time 15
nfsconf --set nfsd vers3 n
nfsconf --set nfsd vers4.0 n
nfsconf --set nfsd vers4.2 n
printf '/srv/efs ${SUBNET}.0/24(rw,sync,fsid=0,no_subtree_check,no_root_squash,insecure)\\n' > /etc/exports
systemctl enable nfs-server
systemctl restart nfs-server
exportfs -ra
cat /proc/fs/nfsd/versions /proc/fs/nfsd/threads
`;

const IDLE_USER_DATA = '#!/bin/bash\necho "lab: ready"\n';

/** The synthesized test stack: a one-node cache fleet that warms /efs/warm, over an imported file system. */
function synthesize(): { template: CfnTemplate; node: string; nodeTags: Record<string, string>; values: Record<string, string> } {
  const app = new App();
  const stack = new Stack(app, 'SeedLab');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 1 });
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc,
    origin: CacheOrigin.efs(importedFs(stack), { mountHelper: MountHelper.NFS }),
    capacity: Capacity.nodes(1),
    instanceType: new ec2.InstanceType('c6i.large'),
    clientCidrs: [`${SUBNET}.0/24`],
    warming: { paths: ['/efs/warm'] },
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const values: Record<string, string> = { ...VALUES };
  // Route 53 mode gives each node a stable address (an ENI the node attaches on AWS); the lab has none: skip it.
  for (const [id, r] of Object.entries(template.Resources ?? {})) if (r.Type === 'AWS::EC2::NetworkInterface') values[`Ref:${id}`] = '';
  const node = stack.resolve((fleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate).logicalId) as string;
  // What a node learns from its instance's tags on EC2 (its group to signal, its fleet), served by the lab's metadata service.
  const nodeTags = {
    'cdk-efs-cache:signal-resource': stack.getLogicalId(fleet.nodes[0].autoScalingGroup.node.defaultChild as CfnResource),
    'cdk-efs-cache:fleet': fleet.node.addr,
  };
  return { template, node, nodeTags, values };
}

/** Runs a command in the guest and returns its wall time in seconds, measured by the guest. */
async function timed(vm: Vm, command: string, timeoutMs = 600_000): Promise<{ seconds: number; output: string }> {
  const out = await vm.execOk(
    `s=$(date +%s%N); { ${command}; } > /tmp/timed.out 2>&1 || { cat /tmp/timed.out; exit 1; }; e=$(date +%s%N); ` +
      'cat /tmp/timed.out; echo "TIMED_MS=$(( (e - s) / 1000000 ))"',
    { timeoutMs },
  );
  const ms = Number(/TIMED_MS=(\d+)/.exec(out)?.[1]);
  return { seconds: ms / 1000, output: out };
}

const fmt = (s: number) => `${s.toFixed(1)} s`;

/** A guest's CPU counters (/proc/stat's first line): jiffies busy and in all, over all its vCPUs. */
async function cpuTicks(vm: Vm): Promise<{ busy: number; total: number }> {
  const f = (await vm.execOk('head -1 /proc/stat')).trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total }; // idle and iowait are not busy
}

/** How busy each VM's CPUs were (percent of all its vCPUs) while `f` ran, and what `f` returned. */
async function withCpu<T>(vms: Vm[], f: () => Promise<T>): Promise<{ value: T; busy: number[] }> {
  const before = await Promise.all(vms.map(cpuTicks));
  const value = await f();
  const after = await Promise.all(vms.map(cpuTicks));
  return { value, busy: after.map((a, i) => (100 * (a.busy - before[i].busy)) / Math.max(1, a.total - before[i].total)) };
}

describe('lab: parallel seeding into an NFS origin, and cache warming', () => {
  let lab: Lab;
  let origin: Vm;
  let loader: Vm;
  let node: Vm;
  let client: Vm;
  const synth = synthesize();
  const seeders = seederScripts('/seed-script');
  const wpSeeder = seederScripts('/wp-script', WP_SOURCE);
  const wordpress = wordpressPackage();
  const results: Record<string, number> = {};
  /** Percent busy of the loader's and the origin's vCPUs during each method, by the method's name in results. */
  const cpu: Record<string, { loader: number; origin: number }> = {};
  /** Times a method on the loader, keeping how busy both VMs' CPUs were. */
  const measure = async (name: string, command: string, timeoutMs?: number) => {
    const { value, busy } = await withCpu([loader, origin], () => timed(loader, command, timeoutMs));
    cpu[name] = { loader: Math.round(busy[0]), origin: Math.round(busy[1]) };
    return value;
  };
  let sourceDigest = '';
  let seedLog = '';
  let wordpressFiles: number | undefined;

  beforeAll(async () => {
    lab = await Lab.create({ name: 'seeding' });
    origin = await lab.startVm({ name: 'origin', ip: `${SUBNET}.10`, cpus: 2, memoryMiB: 1536, userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME] });
    loader = await lab.startVm({ name: 'loader', ip: `${SUBNET}.20`, cpus: 2, memoryMiB: 1536, userData: IDLE_USER_DATA });
    client = await lab.startVm({ name: 'client', ip: `${SUBNET}.40`, memoryMiB: 768, userData: IDLE_USER_DATA });
    const o = await origin.waitForCloudInit();
    expect({ status: o.status, errors: o.errors }).toEqual({ status: 'done', errors: [] });
    await lab.setLink(origin, LINK);
    // The cache node mounts the origin at boot, so it starts once the origin serves.
    node = await lab.startVm({
      name: 'node',
      ip: `${SUBNET}.30`,
      memoryMiB: 1024,
      userData: resolveUserData(synth.template, synth.node, synth.values),
      instance: { tags: synth.nodeTags },
    });
    for (const vm of [loader, client]) {
      const r = await vm.waitForCloudInit();
      expect({ vm: vm.name, status: r.status, errors: r.errors }).toEqual({ vm: vm.name, status: 'done', errors: [] });
    }
    // The source stays in the loader's page cache (1,536 MiB of RAM for 146.5 MiB): every method reads it from RAM.
    await loader.execOk(`${makeTree(SOURCE, TREE)} && sync`, { timeoutMs: 300_000 });
    sourceDigest = (await loader.execOk(treeDigest(SOURCE), { timeoutMs: 300_000 })).trim();
    await loader.writeFile('/var/tmp/wordpress.deb', fs.readFileSync(wordpress.file));
    await loader.execOk(unpackWordpress('/var/tmp/wordpress.deb', WP_SOURCE), { timeoutMs: 300_000 });
    // The seeders' user data and code, the signal marked as sent (no CloudFormation here).
    await installSeeders(loader, seeders);
    await installSeeders(loader, wpSeeder, '/root/seed-wp.sh');
    await loader.execOk('mkdir -p /mnt/origin');
    await loader.execOk(`for i in $(seq 30); do timeout 60 mount -t nfs4 -o ${NFS_OPTS} ${EFS_NAME}:/ /mnt/origin && exit 0; sleep 3; done; exit 1`);
    const n = await node.waitForCloudInit();
    expect({ status: n.status, errors: n.errors }).toEqual({ status: 'done', errors: [] });
  }, 20 * 60 * 1000);

  afterAll(async () => {
    await lab?.destroy();
    const rows = Object.entries(results).map(([k, v]) => `  ${k.padEnd(44)} ${fmt(v)}`);
    const cpuRows = Object.entries(cpu).map(([k, v]) => `  ${k.padEnd(44)} loader ${v.loader} %, origin ${v.origin} %`);
    progress(`results (origin link: ${LINK.delayMs} ms delay, no rate cap):\n${rows.join('\n')}\nCPU busy:\n${cpuRows.join('\n')}`);
    const dir = process.env.EFSC_RESULTS_DIR;
    if (dir) {
      const ratio = (a: string, b: string) => (results[a] && results[b] ? results[a] / results[b] : undefined);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'seeding.json'), JSON.stringify({
        link: {
          delayMs: LINK.delayMs, rateMbit: null, tree: TREE_NAME, files: TREE_FILES, fileBytes: TREE.bytes, workers: 50, filesPerPart: 100,
          ...(FULL ? { wordpress: `Debian's wordpress ${wordpress.version}`, wordpressFiles, warming: WARM_LINK } : {}),
        },
        results,
        cpu,
        ratios: {
          'cp -R / seeding script': ratio('cp -R', 'seeding script (whole run)'),
          'rsync -a / seeding script': ratio('rsync -a', 'seeding script (whole run)'),
          'tar x / seeding script': ratio('tar x', 'seeding script (whole run)'),
          'WordPress: cp -R / seeding script': ratio('WordPress: cp -R', 'WordPress: seeding script (whole run)'),
          'WordPress: rsync -a / seeding script': ratio('WordPress: rsync -a', 'WordPress: seeding script (whole run)'),
          'WordPress: tar x / seeding script': ratio('WordPress: tar x', 'WordPress: seeding script (whole run)'),
          'unwarmed / warmed first read': ratio('first read through the node, unwarmed tree', 'first read through the node, warmed tree'),
        },
      }, null, 2));
    }
  });

  test('the user data of the seeder fits in 16 KB and fails fast, with the reason, on a missing source', async () => {
    expect(Buffer.byteLength(await loader.execOk('cat /root/seed.sh'))).toBeLessThan(16 * 1024);
    const r = await loader.exec('bash /root/failing.sh --no-shutdown');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('efs-cache: FATAL: source directory /srv/no-such-dir does not exist');
  });

  test(`${TREE_FILES.toLocaleString('en-US')} files of ${TREE.bytes} B: the seeding script, cp -R, rsync -a and tar x make byte-identical trees`, async () => {
    const seed = await measure('seeding script (whole run)', 'bash /root/seed.sh --no-shutdown', 3_600_000);
    seedLog = seed.output;
    const cp = await measure('cp -R', `cp -R ${SOURCE} /mnt/origin/seed-cp`, 3_600_000);
    const rsync = await measure('rsync -a', `rsync -a ${SOURCE}/ /mnt/origin/seed-rsync/`, 3_600_000);
    // tar x: a release archive unpacked straight into the file system (a seed's way: 8 minutes for 11,000 files). The
    // archive is made on the loader's own disk first, untimed.
    await loader.execOk(`tar -C ${SOURCE} -cf /var/tmp/seed.tar .`, { timeoutMs: 300_000 });
    const untar = await measure('tar x', 'mkdir /mnt/origin/seed-tar && tar -C /mnt/origin/seed-tar -xf /var/tmp/seed.tar', 3_600_000);
    await loader.execOk('rm -f /var/tmp/seed.tar');
    // The lab's ceiling: the same copy inside the loader, no network (emulated CPUs make every path CPU-heavy).
    const local = await timed(loader, `cp -R ${SOURCE} /var/tmp/seed-local && rm -rf /var/tmp/seed-local`);
    const copyPhase = Number(new RegExp(`copied ${TREE_FILES} files \\([\\d.]+ MiB\\) in (\\d+)s`).exec(seedLog)?.[1]);
    results['seeding script (whole run)'] = seed.seconds;
    results['  of which the copy (its log, whole s)'] = copyPhase;
    results['cp -R'] = cp.seconds;
    results['rsync -a'] = rsync.seconds;
    results['tar x'] = untar.seconds;
    results['ceiling: cp -R on the loader\'s own disk'] = local.seconds;
    progress(`seeding log:\n${seedLog.split('\n').filter((l) => /efs-cache: (copying|progress|copied|verified|seeding done)/.test(l)).join('\n')}`);
    progress(`loading ${TREE_FILES} files: seed ${fmt(seed.seconds)}, cp -R ${fmt(cp.seconds)} ` +
      `(${(cp.seconds / seed.seconds).toFixed(1)}x the seed), rsync -a ${fmt(rsync.seconds)} (${(rsync.seconds / seed.seconds).toFixed(1)}x), ` +
      `tar x ${fmt(untar.seconds)} (${(untar.seconds / seed.seconds).toFixed(1)}x)`);
    for (const t of ['seed-script', 'seed-cp', 'seed-rsync', 'seed-tar']) {
      expect({ tree: t, digest: (await origin.execOk(treeDigest(`/srv/efs/${t}`), { timeoutMs: 300_000 })).trim() })
        .toEqual({ tree: t, digest: sourceDigest });
    }
    // The origin's tmpfs holds WordPress's copies next: the three trees the seeding script's re-run does not need go.
    await origin.execOk('rm -rf /srv/efs/seed-cp /srv/efs/seed-rsync /srv/efs/seed-tar');
    expect(seedLog).toMatch(/efs-cache: progress: \d+ files/);
    expect(seedLog).toContain(`efs-cache: verified: all ${TREE_FILES} files (${TREE_MIB} MiB) of the source are at /seed-script`);
    // Its speed against cp -R and rsync -a is the benchmark's (item 4), not an assertion: these machines are noisy.
  }, 150 * 60 * 1000); // the web application's tree: about an hour of serial copies at 10 ms

  test('running the seeding again copies only what changed', async () => {
    await loader.execOk(changeFour(SOURCE, TREE.bytes));
    const again = await measure('seeding script, again after 4 changes', 'bash /root/seed.sh --no-shutdown', 1_800_000);
    results['seeding script, again after 4 changes'] = again.seconds;
    expect(again.output).toMatch(new RegExp(`efs-cache: copied 4 files \\([\\d.]+ MiB\\) in \\d+s; the other ${TREE_FILES - 3} were up to date`));
    const digest = (await loader.execOk(treeDigest(SOURCE))).trim();
    expect((await origin.execOk(treeDigest('/srv/efs/seed-script'), { timeoutMs: 300_000 })).trim()).toBe(digest);
  });

  // WordPress's tree and warming: with the generated tree only (FULL), not beside the web application's hour of copies.
  if (!FULL) return;

  test("WordPress's tree (Debian's package): the seeding script, cp -R, rsync -a and tar x make byte-identical trees", async () => {
    const files = Number((await loader.execOk(`find ${WP_SOURCE} -type f | wc -l`)).trim());
    wordpressFiles = files;
    expect(files).toBeGreaterThan(2000);
    const digest = (await loader.execOk(treeDigest(WP_SOURCE), { timeoutMs: 300_000 })).trim();
    const seed = await measure('WordPress: seeding script (whole run)', 'bash /root/seed-wp.sh --no-shutdown', 1_800_000);
    const cp = await measure('WordPress: cp -R', `cp -R ${WP_SOURCE} /mnt/origin/wp-cp`, 1_800_000);
    const rsync = await measure('WordPress: rsync -a', `rsync -a ${WP_SOURCE}/ /mnt/origin/wp-rsync/`, 1_800_000);
    await loader.execOk(`tar -C ${WP_SOURCE} -cf /var/tmp/wp.tar .`, { timeoutMs: 300_000 });
    const untar = await measure('WordPress: tar x', 'mkdir /mnt/origin/wp-tar && tar -C /mnt/origin/wp-tar -xf /var/tmp/wp.tar', 1_800_000);
    await loader.execOk('rm -f /var/tmp/wp.tar');
    const local = await timed(loader, `cp -R ${WP_SOURCE} /var/tmp/wp-local && rm -rf /var/tmp/wp-local`);
    results['WordPress: seeding script (whole run)'] = seed.seconds;
    results['WordPress:   of which the copy (its log, whole s)'] = Number(/copied \d+ files \([\d.]+ MiB\) in (\d+)s/.exec(seed.output)?.[1]);
    results['WordPress: cp -R'] = cp.seconds;
    results['WordPress: rsync -a'] = rsync.seconds;
    results['WordPress: tar x'] = untar.seconds;
    results['WordPress: ceiling: cp -R on the loader\'s own disk'] = local.seconds;
    progress(`loading WordPress (${files} files): seed ${fmt(seed.seconds)}, cp -R ${fmt(cp.seconds)} ` +
      `(${(cp.seconds / seed.seconds).toFixed(1)}x the seed), rsync -a ${fmt(rsync.seconds)} (${(rsync.seconds / seed.seconds).toFixed(1)}x), ` +
      `tar x ${fmt(untar.seconds)} (${(untar.seconds / seed.seconds).toFixed(1)}x)`);
    for (const t of ['wp-script', 'wp-cp', 'wp-rsync', 'wp-tar']) {
      expect({ tree: t, digest: (await origin.execOk(treeDigest(`/srv/efs/${t}`), { timeoutMs: 300_000 })).trim() })
        .toEqual({ tree: t, digest });
    }
    expect(seed.output).toContain(`efs-cache: verified: all ${files} files`);
  });

  test('warming: the first client read of a warmed tree takes none of its bytes from the origin, of an unwarmed one all', async () => {
    // Boot-time warming ran in efs-cache-warm.service, before nfsd.
    const journal = await node.execOk('journalctl -u efs-cache-warm.service -o cat --no-pager');
    expect(journal).toMatch(/warmed \/efs\/warm in \d+s/);
    await client.execOk(`mkdir -p /mnt/cache && mount -t nfs4 -o ${NFS_OPTS} ${node.ip}:/efs /mnt/cache`);
    // Every NFSv4 OPEN a client sends through the node still goes to the origin (a re-export passes opens on), so with
    // latency alone small files cost about the same warmed or not. What warming saves is the data: the node's bytes
    // read from the origin (mountstats) say where the data came from; the times are the benchmark's (item 4).
    await lab.setLink(origin, WARM_LINK);
    const fromOrigin = async () => Number((await node.execOk(
      "awk '/ mounted on \\/efs with fstype nfs/ { m = 1; next } /^device / { m = 0 } m && $1 == \"bytes:\" { print $6; exit }' /proc/self/mountstats",
    )).trim());
    const read = (t: string) => `find /mnt/cache/${t} -type f -print0 | xargs -0 cat | wc -c`;
    const b0 = await fromOrigin();
    const warm = await timed(client, read('warm'));
    const b1 = await fromOrigin();
    const cold = await timed(client, read('cold'));
    const b2 = await fromOrigin();
    await lab.setLink(origin, LINK);
    const treeBytes = WARM_DIRS * FILES_PER_DIR * FILE_BYTES;
    for (const r of [warm, cold]) expect(r.output).toContain(String(treeBytes));
    results['first read through the node, warmed tree'] = warm.seconds;
    results['first read through the node, unwarmed tree'] = cold.seconds;
    progress(`first read of ${WARM_DIRS * FILES_PER_DIR} files through the cache node (origin ${WARM_LINK.delayMs} ms, ` +
      `${WARM_LINK.rateMbit} Mbit/s): warmed ${fmt(warm.seconds)}, node read ${b1 - b0} B from the origin; unwarmed ` +
      `${fmt(cold.seconds)}, ${b2 - b1} B (${(cold.seconds / warm.seconds).toFixed(1)}x)`);
    expect({ warmedFromOrigin: b1 - b0 < treeBytes / 100, unwarmedFromOrigin: b2 - b1 >= treeBytes })
      .toEqual({ warmedFromOrigin: true, unwarmedFromOrigin: true });
  });

  test('on demand: efs-cache-warm warms again after the page cache was dropped', async () => {
    await node.execOk('sync && echo 3 > /proc/sys/vm/drop_caches');
    const t = await timed(node, '/usr/local/sbin/efs-cache-warm');
    results['on-demand efs-cache-warm on the node'] = t.seconds;
    expect(t.output).toMatch(/efs-cache: warmed \/efs\/warm in \d+s/);
  });
});
