/**
 * On-instance metrics on a real kernel: the synthesized user data of a cache node and of an FS-Cache client over the
 * fleet install the collector and the CloudWatch agent's configuration. The lab has no agent (and no AWS), so a UDP
 * listener on 127.0.0.1:8125 inside each VM stands in for the agent's StatsD input and records what the collector
 * sends; the values must follow the NFS traffic the test generates.
 */
import { CloudInitResult, Lab, progress, Vm } from './harness';
import { EFS_NAME, FLEET_NAME, LabUserData, labUserData, ORIGIN_USER_DATA } from './scenarios/stacks';

const MIN = 60_000;
const LOG = '/run/statsd-received';
const AGENT_CONFIG = '/opt/aws/amazon-cloudwatch-agent/etc/efs-cache.json';

/** The Group a user data tags its metrics with (its EFSC_METRICS_GROUP). */
function groupOf(userData: string): string {
  const m = /^export EFSC_METRICS_GROUP='([^']*)'$/m.exec(userData);
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
}

async function received(vm: Vm): Promise<Received> {
  const lines = (await vm.execOk(`cat ${LOG}`)).split('\n').filter((l) => l !== '');
  const counters: Record<string, number> = {};
  const gauges: Record<string, number> = {};
  const groups = new Set<string>();
  for (const l of lines) {
    const m = /^([A-Za-z]+):([0-9.]+)\|([cg])\|#Group:(\S+)$/.exec(l);
    if (!m) throw new Error(`not a StatsD line with a Group tag: ${l}`);
    if (m[3] === 'c') counters[m[1]] = (counters[m[1]] ?? 0) + Number(m[2]);
    else gauges[m[1]] = Number(m[2]);
    groups.add(m[4]);
  }
  return { lines, counters, gauges, groups };
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
    boot.origin = await origin.waitForCloudInit();
    await origin.execOk('head -c 16M /dev/urandom > /srv/efs/data/small.bin && sync');
    node = await lab.startVm({ name: 'node1', ip: '10.77.0.31', userData: ud.cacheNode, cpus: 1 });
    boot.node = await node.waitForCloudInit();
    await lab.setDnsRecord(FLEET_NAME, ['10.77.0.31']);
    client = await lab.startVm({
      name: 'client', ip: '10.77.0.22', userData: ud.fleetClient, cpus: 1,
      nvmeDisks: [{ sizeMiB: 384, serial: 'm-is-0', blank: true }],
    });
    boot.client = await client.waitForCloudInit();
  }, 40 * MIN);

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

  test('the collector sends real values that follow the NFS traffic, every line tagged with its Group', async () => {
    await Promise.all([listen(node), listen(client)]);
    // The first run after a restart of the listener's log only sets the counters' baseline in the collector's state.
    await Promise.all([collect(node), collect(client)]);
    const base = await received(client);
    // A first read goes through the node (nfsd) and fills the client's disk cache.
    await client.execOk('cat /mnt/efs/data/small.bin > /dev/null; sleep 3; sync', { timeoutMs: 10 * MIN });
    await Promise.all([collect(node), collect(client)]);
    const afterFirst = await received(client);
    // A re-read after dropping the page cache comes from FS-Cache.
    await client.execOk('sync; echo 3 > /proc/sys/vm/drop_caches; cat /mnt/efs/data/small.bin > /dev/null', { timeoutMs: 10 * MIN });
    await collect(client);
    const c = await received(client);
    const n = await received(node);
    progress(`node sent: ${n.lines.join(' ')}`);
    progress(`client sent: ${c.lines.join(' ')}`);

    expect([...n.groups]).toEqual([groupOf(ud.cacheNode)]);
    expect([...c.groups]).toEqual([groupOf(ud.fleetClient)]);
    expect(groupOf(ud.cacheNode)).toBe('Lab/Fleet');
    expect(groupOf(ud.fleetClient)).toBe('Lab/FleetClient');

    expect(n.counters.NfsdOps).toBeGreaterThan(0);
    expect(n.counters.NfsdBytesRead).toBeGreaterThanOrEqual(16 << 20);
    expect(n.counters.NfsdRequestsQueued).toBeGreaterThanOrEqual(0);
    expect(n.gauges.NfsdThreads).toBe(16);
    expect(n.gauges.PageCacheBytes).toBeGreaterThan(16 << 20);

    expect(c.counters.FscacheWrites).toBeGreaterThan(0);
    const rereadPages = (c.counters.FscacheReads ?? 0) - (afterFirst.counters.FscacheReads ?? 0);
    progress(`FscacheReads before the re-read ${afterFirst.counters.FscacheReads ?? 0} (baseline ${base.counters.FscacheReads ?? 0}), after +${rereadPages}`);
    expect(rereadPages).toBeGreaterThanOrEqual((16 << 20) / 4096 / 2);
    expect(c.counters.FscacheCulled).toBeGreaterThanOrEqual(0);
    expect(c.gauges.CacheDiskFreePercent).toBeGreaterThanOrEqual(0);
    expect(c.gauges.CacheDiskFreePercent).toBeLessThanOrEqual(100);
  }, 30 * MIN);
});
