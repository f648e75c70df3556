/**
 * On-instance metrics on a real kernel: the synthesized user data of a cache node and of an FS-Cache client over the
 * fleet install the collector and the CloudWatch agent's configuration. The lab has no agent (and no AWS), so a UDP
 * listener on 127.0.0.1:8125 inside each VM stands in for the agent's StatsD input and records what the collector
 * sends; the values must follow the NFS traffic the test generates.
 */
import { CLIENT_METRICS, DISK_CACHE_METRICS, groupMetric, InstanceMetric, MirrorMetric, NODE_METRICS, notServing } from '../../../lib/monitoring/metrics';
import { CloudInitResult, Lab, progress, Vm } from './harness';
import { DiskDelta, LAB_NOT_SERVING_FLOOR, writeKernelFigures } from './results/kernels';
import { EFS_NAME, FLEET_NAME, LabUserData, labUserData, ORIGIN_USER_DATA } from './scenarios/stacks';

const MIN = 60_000;
/** Under load a cache node's bootstrap has taken 9 minutes: wait well beyond that. */
const BOOT = { timeoutMs: 25 * MIN };
const CACHE_DIR = '/var/cache/fscache';
const LOG = '/run/statsd-received';
const AGENT_CONFIG = '/opt/aws/amazon-cloudwatch-agent/etc/efs-cache.json';

/** The Group a user data tags its metrics with (its EFSC_METRICS_GROUP). */
function groupOf(userData: string): string {
  const m = /^EFSC_METRICS_GROUP='([^']*)'$/m.exec(userData);
  if (!m) throw new Error('no EFSC_METRICS_GROUP in the user data');
  return m[1];
}

/** A UDP listener standing in for the agent's StatsD input: every datagram is appended to LOG. */
async function listen(vm: Vm): Promise<void> {
  await vm.execOk([
    `cat > /run/statsd-listen.py <<'EOF'`,
    'import socket',
    's = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
    "s.bind(('127.0.0.1', 8125))",
    `f = open('${LOG}', 'a')`,
    'while True:',
    '    f.write(s.recv(65535).decode())',
    '    f.flush()',
    'EOF',
    `: > ${LOG}`,
    'nohup python3 /run/statsd-listen.py >/dev/null 2>&1 &',
    'sleep 2',
  ].join('\n'));
}

/** One run of the collector, as its timer runs it. */
async function collect(vm: Vm): Promise<void> {
  await vm.execOk('systemctl start efs-cache-metrics.service');
}

interface Received {
  readonly lines: string[];
  /** Sum of each counter's deltas. */
  readonly counters: Record<string, number>;
  /** Last value of each gauge. */
  readonly gauges: Record<string, number>;
  /** The Group tags seen. */
  readonly groups: Set<string>;
  /** Each metric's StatsD type: c or g. */
  readonly types: Record<string, string>;
}

async function received(vm: Vm): Promise<Received> {
  const lines = (await vm.execOk(`cat ${LOG}`)).split('\n').filter((l) => l !== '');
  const counters: Record<string, number> = {};
  const gauges: Record<string, number> = {};
  const groups = new Set<string>();
  const types: Record<string, string> = {};
  for (const l of lines) {
    const m = /^([A-Za-z]+):([0-9.]+)\|([cg])\|#Group:(\S+)$/.exec(l);
    if (!m) throw new Error(`not a StatsD line with a Group tag: ${l}`);
    if (m[3] === 'c') counters[m[1]] = (counters[m[1]] ?? 0) + Number(m[2]);
    else gauges[m[1]] = Number(m[2]);
    groups.add(m[4]);
    types[m[1]] = m[3];
  }
  return { lines, counters, gauges, groups, types };
}

describe('lab metrics: the collector on a cache node and an FS-Cache client', () => {
  let lab: Lab;
  let ud: LabUserData;
  let origin: Vm;
  let node: Vm;
  let client: Vm;
  const boot: Record<string, CloudInitResult> = {};

  beforeAll(async () => {
    ud = labUserData();
    lab = await Lab.create({ name: 'metrics' });
    origin = await lab.startVm({ name: 'origin', ip: '10.77.0.10', userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME], cpus: 1 });
    boot.origin = await origin.waitForCloudInit(BOOT);
    await origin.execOk('for f in small other; do head -c 16M /dev/urandom > /srv/efs/data/$f.bin; done; sync');
    node = await lab.startVm({ name: 'node1', ip: '10.77.0.31', userData: ud.cacheNode, cpus: 1, instance: { tags: ud.nodeTags[0] } });
    boot.node = await node.waitForCloudInit(BOOT);
    await lab.setDnsRecord(FLEET_NAME, ['10.77.0.31']);
    client = await lab.startVm({
      name: 'client', ip: '10.77.0.22', userData: ud.fleetClient, cpus: 1,
      nvmeDisks: [{ sizeMiB: 384, serial: 'm-is-0', blank: true }],
    });
    boot.client = await client.waitForCloudInit(BOOT);
  }, 80 * MIN);

  afterAll(async () => {
    await lab?.destroy();
  });

  test('the bootstraps finished without errors, installed the collector and said that no agent is present', async () => {
    for (const [name, r] of Object.entries(boot)) {
      expect({ name, status: r.status, errors: r.errors }).toEqual({ name, status: 'done', errors: [] });
    }
    for (const [vm, r] of [[node, boot.node], [client, boot.client]] as const) {
      expect(r.output).toMatch(/no CloudWatch agent: metrics not published/);
      expect((await vm.execOk('systemctl is-enabled efs-cache-metrics.timer; systemctl is-active efs-cache-metrics.timer')).split('\n'))
        .toEqual(['enabled', 'active', '']);
    }
  });

  test('the agent configuration is valid JSON: namespace CdkEfsCache, StatsD on 127.0.0.1:8125, no host dimension', async () => {
    for (const vm of [node, client]) {
      const config = JSON.parse(await vm.execOk(`cat ${AGENT_CONFIG}`));
      expect(config).toEqual({
        agent: { omit_hostname: true },
        metrics: { namespace: 'CdkEfsCache', metrics_collected: { statsd: { service_address: '127.0.0.1:8125' } } },
      });
    }
  });

  test('kernel 6.1 prints the FS-Cache fields the client collector parses', async () => {
    const stats = await client.execOk('uname -r; cat /proc/fs/fscache/stats');
    progress(`client /proc/fs/fscache/stats:\n${stats}`);
    expect(stats).toMatch(/^6\.1\./);
    expect(stats).toMatch(/^IO *: rd=\d+ wr=\d+$/m);
    expect(stats).toMatch(/^NoSpace: nwr=\d+ ncr=\d+ cull=\d+$/m);
  });

  test('the collector sends real values that follow the NFS traffic, every line tagged with its Group', async () => {
    await Promise.all([listen(node), listen(client)]);
    // The timer has run since boot, so the collector has a baseline: this run sends deltas (near zero).
    await Promise.all([collect(node), collect(client)]);
    const base = await received(client);
    const nodeBase = await received(node);
    // A first read goes through the node (nfsd) and fills the client's disk cache.
    await client.execOk('cat /mnt/efs/data/small.bin > /dev/null; sleep 3; sync', { timeoutMs: 10 * MIN });
    await Promise.all([collect(node), collect(client)]);
    const afterFirst = await received(client);
    // A re-read after dropping the page cache comes from FS-Cache.
    await client.execOk('sync; echo 3 > /proc/sys/vm/drop_caches; cat /mnt/efs/data/small.bin > /dev/null', { timeoutMs: 10 * MIN });
    await Promise.all([collect(node), collect(client)]);
    const c = await received(client);
    const n = await received(node);
    progress(`node /proc/fs/nfsd/pool_stats and /proc/net/rpc/nfsd rc, io, th:\n` +
      await node.execOk("cat /proc/fs/nfsd/pool_stats; grep -E '^(rc|io|th) ' /proc/net/rpc/nfsd"));
    progress(`node sent: ${n.lines.join(' ')}`);
    progress(`client sent: ${c.lines.join(' ')}`);
    progress(`node: NfsdOps ${nodeBase.counters.NfsdOps ?? 0} -> ${n.counters.NfsdOps}, NfsdBytesRead ` +
      `${nodeBase.counters.NfsdBytesRead ?? 0} -> ${n.counters.NfsdBytesRead}; client: FscacheWrites ` +
      `${base.counters.FscacheWrites ?? 0} -> ${afterFirst.counters.FscacheWrites} -> ${c.counters.FscacheWrites}, ` +
      `FscacheReads ${base.counters.FscacheReads ?? 0} -> ${afterFirst.counters.FscacheReads ?? 0} -> ${c.counters.FscacheReads}`);

    expect([...n.groups]).toEqual([groupOf(ud.cacheNode)]);
    expect([...c.groups]).toEqual([groupOf(ud.fleetClient)]);
    expect(groupOf(ud.cacheNode)).toBe('Lab/Fleet');
    expect(groupOf(ud.fleetClient)).toBe('Lab/FleetClient');
    // Exactly the dashboard's metric names, each with the StatsD type that gives the metric_type the dashboard uses
    // (this node has no disk cache and no mirrors: none of their metrics).
    expect(ud.cacheNode).toMatch(/^EFSC_NODE_DISK_CACHE='false'$/m);
    expect(ud.cacheNode).toMatch(/^EFSC_MIRROR_PATHS=''$/m);
    const absent = new Set([...Object.values(DISK_CACHE_METRICS).map((m) => m.name), ...Object.values(MirrorMetric)]);
    const nodeMetrics = Object.values(NODE_METRICS).filter((m) => !absent.has(m.name));
    for (const [r, names, group] of [[n, nodeMetrics, 'Lab/Fleet'], [c, CLIENT_METRICS, 'Lab/FleetClient']] as const) {
      const metrics: InstanceMetric[] = Object.values(names);
      expect(Object.keys(r.types).sort()).toEqual(metrics.map((m) => m.name).sort());
      for (const [name, t] of Object.entries(r.types)) {
        expect({ name, type: groupMetric(group, metrics.find((m) => m.name === name)!).dimensions?.metric_type })
          .toEqual({ name, type: t === 'g' ? 'gauge' : 'counter' });
      }
    }

    // The node served the client's first read (16 MiB) and nothing of the re-read.
    expect(n.counters.NfsdOps - (nodeBase.counters.NfsdOps ?? 0)).toBeGreaterThan(0);
    expect(n.counters.NfsdBytesRead - (nodeBase.counters.NfsdBytesRead ?? 0)).toBeGreaterThanOrEqual(16 << 20);
    // One client and 16 idle threads: almost every request finds a thread waiting. (pool_stats sockets-enqueued, the
    // first formula, counted every request on 6.1: 275 of 275.)
    expect(n.counters.NfsdRequestsQueued).toBeGreaterThanOrEqual(0);
    expect(n.counters.NfsdRequestsQueued).toBeLessThan(n.counters.NfsdOps / 4);
    expect(n.gauges.NfsdThreads).toBe(16);
    expect(n.gauges.PageCacheBytes).toBeGreaterThan(16 << 20);

    // Misses fill the cache on the first read; the re-read is hits (pages read from the cache).
    expect((afterFirst.counters.FscacheWrites ?? 0) - (base.counters.FscacheWrites ?? 0)).toBeGreaterThan(0);
    // Kernel 6.1 counts a read for every page NFS looks up in the cache, hit or miss (first read: 4096 reads and
    // 4096 writes; re-read: 4096 reads, no writes): hits are reads minus writes, as the dashboard computes them.
    const pages = (16 << 20) / 4096;
    const hits = (from: Received, to: Received) => ((to.counters.FscacheReads ?? 0) - (from.counters.FscacheReads ?? 0)) -
      ((to.counters.FscacheWrites ?? 0) - (from.counters.FscacheWrites ?? 0));
    expect(hits(base, afterFirst)).toBeLessThanOrEqual(pages / 20);
    expect(hits(afterFirst, c)).toBeGreaterThanOrEqual(pages / 2);
    expect(c.counters.FscacheCulled ?? 0).toBeGreaterThanOrEqual(0);
    const free = Number(await client.execOk(`echo $(($(stat -fc %a*100/%b ${CACHE_DIR})))`));
    expect(Math.abs(c.gauges.CacheDiskFreePercent - free)).toBeLessThanOrEqual(1);

    // The "not serving" rule's counters (the cache device's bytes: the same meaning on every kernel): the first read
    // grew the cache by what it wrote, the re-read read the device. Then a file written over at the origin (same
    // inode, same size, a later mtime) and read again: the cache stores it again (recorded for the README). Through a
    // mount of the origin that revalidates attributes at every access (actimeo=0), so that the change is seen at
    // once: the fleet's mounts see it within their attribute timeouts.
    await client.execOk('mkdir -p /mnt/origin && mount -t nfs4 -o nfsvers=4.1,ro,fsc,actimeo=0,nosharecache 10.77.0.10:/ /mnt/origin && ' +
      'cat /mnt/origin/data/small.bin > /dev/null; sleep 3; sync', { timeoutMs: 10 * MIN });
    await origin.execOk("head -c 16M /dev/urandom | dd of=/srv/efs/data/small.bin conv=notrunc status=none && touch -d '+1 min' /srv/efs/data/small.bin && sync");
    await collect(client);
    const before = await received(client);
    const changed = (await origin.execOk('sha256sum < /srv/efs/data/small.bin')).trim();
    expect((await client.execOk('sync; echo 3 > /proc/sys/vm/drop_caches; sha256sum < /mnt/origin/data/small.bin; sleep 5; sync', { timeoutMs: 10 * MIN })).trim()).toBe(changed);
    await client.execOk('umount /mnt/origin');
    await collect(client);
    const again = await received(client);
    const disk = (from: Received, to: Received): DiskDelta => {
      const d = (k: string) => (to.counters[k] ?? 0) - (from.counters[k] ?? 0);
      return { read: d('CacheDiskReadBytes'), written: d('CacheDiskWriteBytes'), growth: d('CacheDiskGrowthBytes') };
    };
    const [first, reRead, overwritten] = [disk(base, afterFirst), disk(afterFirst, c), disk(before, again)];
    progress(`client cache device, 16 MiB: first read ${JSON.stringify(first)}; re-read ${JSON.stringify(reRead)}; ` +
      `written over at the origin and read again ${JSON.stringify(overwritten)}`);
    if (process.env.EFSC_RECORD === '1') {
      writeKernelFigures({ '6.1': { version: (await client.execOk('uname -r')).trim(), notServing: { fileBytes: 16 << 20, firstClient: first, reRead, againClient: overwritten } } });
    }
    const floor = LAB_NOT_SERVING_FLOOR;
    expect(first.written).toBeGreaterThanOrEqual(16 << 20);
    expect(notServing(first.read, first.written, first.growth, floor)).toBe(false);
    expect(reRead.read).toBeGreaterThanOrEqual(16 << 20);
    expect(notServing(reRead.read, reRead.written, reRead.growth, floor)).toBe(false);
    expect(overwritten.written).toBeGreaterThanOrEqual(16 << 20);
  }, 30 * MIN);

  // The disk filled by a file that is not part of the cache, then a read that the cache must store: cachefilesd culls
  // what it may (objects out of use, such as the copies the test above left out of date), or the cache refuses the
  // write for want of space. Which one, and how much, is recorded for the README's kernel table.
  test('a cache disk filled below the cull limit: CacheDiskFreePercent follows it; cachefilesd culls or the cache refuses writes', async () => {
    // Leave 4 % free (below bcull 7 %) with a file that is not part of the cache, then read a file that is not cached.
    await client.execOk(`set -- $(stat -fc '%S %a %b' ${CACHE_DIR}); fallocate -l $(( ($2 - $3 * 4 / 100) * $1 )) ${CACHE_DIR}/lab-fill; sync`);
    await collect(client);
    const full = await received(client);
    const nwr = async () => Number(/^NoSpace: nwr=(\d+)/m.exec(await client.execOk('cat /proc/fs/fscache/stats'))?.[1]);
    const refusedBefore = await nwr();
    await client.execOk('echo 3 > /proc/sys/vm/drop_caches; sleep 20; cat /mnt/efs/data/other.bin > /dev/null', { timeoutMs: 10 * MIN });
    progress(`after the fill: ${await client.execOk(`grep -E '^(NoSpace|IO)' /proc/fs/fscache/stats; df -k ${CACHE_DIR} | tail -1`)}`);
    await collect(client);
    const after = await received(client);
    const free = Number(await client.execOk(`echo $(($(stat -fc %a*100/%b ${CACHE_DIR})))`));
    const refused = await nwr() - refusedBefore;
    await client.execOk(`rm -f ${CACHE_DIR}/lab-fill`);
    progress(`CacheDiskFreePercent ${full.gauges.CacheDiskFreePercent} (filled) -> ${after.gauges.CacheDiskFreePercent} ` +
      `(df ${free}); writes refused for space: ${refused}; FscacheCulled ${after.counters.FscacheCulled ?? 0}`);

    const culled = (after.counters.FscacheCulled ?? 0) - (full.counters.FscacheCulled ?? 0);
    if (process.env.EFSC_RECORD === '1') {
      const conf = await client.execOk('cat /etc/cachefilesd.conf');
      const limit = (k: string) => Number(new RegExp(`^${k} (\\d+)%`, 'm').exec(conf)![1]);
      writeKernelFigures({ '6.1': { culling: { bcull: limit('bcull'), brun: limit('brun'), fillFreePercent: 4, freeBefore: full.gauges.CacheDiskFreePercent,
        freeAfter: after.gauges.CacheDiskFreePercent, culled, waitedSeconds: 20 } } });
    }
    expect(full.gauges.CacheDiskFreePercent).toBeLessThanOrEqual(5);
    expect(Math.abs(after.gauges.CacheDiskFreePercent - free)).toBeLessThanOrEqual(1);
    expect(refused + culled).toBeGreaterThan(0);
  }, 20 * MIN);
});
