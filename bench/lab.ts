/**
 * Parts 1-3 on the lab's VMs, in one run: an origin standing in for EFS (kernel nfsd behind a shaped link), a cache
 * node and an FS-Cache client running the user data the library synthesizes (test/heavy/lab/scenarios/stacks.ts).
 *
 * Every figure is a wall time taken by the guest's own clock around one command; what it is compared with (the
 * baseline, the lab's ceiling) is measured in the same VMs, minutes apart. Absolute speeds under software emulation
 * are low: the ratios are the result.
 */
import { Lab, progress, Vm } from '../test/heavy/lab/harness';
import { EFS_NAME, labUserData, ORIGIN_USER_DATA } from '../test/heavy/lab/scenarios/stacks';
import { LabResults, machine, MetadataPath, Timing } from './results';

export interface LabSettings {
  /** netem delay on what the origin sends, ms. */
  readonly delayMs: number;
  /** netem rate cap on what the origin sends, Mbit/s. */
  readonly rateMbit: number;
  readonly bigMiB: number;
  readonly smallCount: number;
  readonly smallKiB: number;
  readonly metaDirs: number;
  readonly metaFilesPerDir: number;
  readonly metaBytes: number;
  readonly readDirs: number;
}

export const DEFAULT_LAB_SETTINGS: LabSettings = {
  delayMs: 2,
  rateMbit: 16,
  bigMiB: 64,
  smallCount: 32,
  smallKiB: 512,
  metaDirs: 100,
  metaFilesPerDir: 100,
  metaBytes: 4096,
  readDirs: 10,
};

const MIN = 60_000;
const SUBNET = '10.77.0';
const NFS_OPTS = 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport';
const VMS = {
  origin: { cpus: 1, memoryMiB: 1536 },
  node: { cpus: 1, memoryMiB: 1024 },
  client: { cpus: 1, memoryMiB: 1024, nvmeMiB: 384, nvmeCount: 2 },
};
const TCP_PORT = 5301;

/** Shell: `dirs` directories DIR/dNN of `perDir` random files of `bytes` each (one `split` per directory). */
function tree(dir: string, dirs: number, perDir: number, bytes: number): string {
  return `for d in $(seq -w 0 ${dirs - 1}); do mkdir -p ${dir}/d$d && ` +
    `head -c ${perDir * bytes} /dev/urandom | split -b ${bytes} -a 3 -d - ${dir}/d$d/f; done`;
}

/** Shell: `count` random files DIR/sNNN of `bytes` each. */
function files(dir: string, count: number, bytes: number): string {
  return `mkdir -p ${dir} && head -c ${count * bytes} /dev/urandom | split -b ${bytes} -a 3 -d - ${dir}/s`;
}

const DROP = 'sync && echo 3 > /proc/sys/vm/drop_caches';

/**
 * Runs `command` in the guest and returns its wall time by the guest's clock. With `drop`, the guest's page, dentry
 * and inode caches are dropped first (not timed).
 */
async function timed(vm: Vm, command: string, opts: { drop?: boolean; bytes?: number; timeoutMs?: number } = {}): Promise<Timing> {
  const out = await vm.execOk(
    `${opts.drop ? `${DROP}; ` : ''}s=$(date +%s%N); { ${command}; } > /dev/null; e=$(date +%s%N); echo "US=$(( (e - s) / 1000 ))"`,
    { timeoutMs: opts.timeoutMs ?? 20 * MIN },
  );
  const us = Number(/US=(\d+)/.exec(out)?.[1]);
  if (!Number.isFinite(us)) throw new Error(`vm ${vm.name}: no timing in output of '${command}': ${out}`);
  return { seconds: us / 1e6, ...(opts.bytes !== undefined ? { bytes: opts.bytes } : {}) };
}

/** Bytes the origin's nfsd has read for clients (first field of the `io` line). */
async function originReadBytes(origin: Vm): Promise<number> {
  return Number((await origin.execOk("awk '$1 == \"io\" { print $2 }' /proc/net/rpc/nfsd")).trim());
}

/** Pages FS-Cache has read from the disk cache (`IO : rd=`). */
async function fscacheReads(vm: Vm): Promise<number> {
  return Number(/IO\s*:\s*rd=(\d+)/.exec(await vm.execOk('cat /proc/fs/fscache/stats'))?.[1] ?? NaN);
}

/** Runs `step` and returns what it measured with how many bytes the origin served and FS-Cache read meanwhile. */
async function watched<T>(origin: Vm, client: Vm, step: () => Promise<T>): Promise<{ value: T; originBytes: number; fscachePages: number }> {
  const [o0, f0] = [await originReadBytes(origin), await fscacheReads(client)];
  const value = await step();
  const [o1, f1] = [await originReadBytes(origin), await fscacheReads(client)];
  return { value, originBytes: o1 - o0, fscachePages: f1 - f0 };
}

/** Waits until FS-Cache's counters have not moved for 3 s (its writes to the disk cache are done), then syncs. */
async function settleFscache(vm: Vm): Promise<void> {
  await vm.execOk('p=; for i in $(seq 60); do c=$(cat /proc/fs/fscache/stats); [ "$c" = "$p" ] && break; p=$c; sleep 3; done; sync',
    { timeoutMs: 5 * MIN });
}

const SERVER_PY = `import socket, sys
n = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('', ${TCP_PORT}))
s.listen(1)
c, _ = s.accept()
b = bytes(1 << 20)
for _ in range(n):
    c.sendall(b)
c.close()
`;

const CLIENT_PY = `import socket, sys, time
for _ in range(100):
    try:
        s = socket.create_connection((sys.argv[1], ${TCP_PORT}))
        break
    except OSError:
        time.sleep(0.2)
buf = bytearray(1 << 20)
got = 0
t = time.monotonic()
while True:
    k = s.recv_into(buf)
    if not k:
        break
    got += k
print("BYTES=%d US=%d" % (got, (time.monotonic() - t) * 1e6))
`;

/** A raw TCP stream of `mib` MiB from `server` to `client`: what the link between them carries at best. */
async function tcpStream(server: Vm, client: Vm, mib: number): Promise<Timing> {
  await server.execOk(`nohup python3 /root/bench-server.py ${mib} > /dev/null 2>&1 &`);
  const out = await client.execOk(`python3 /root/bench-client.py ${server.ip}`, { timeoutMs: 10 * MIN });
  const m = /BYTES=(\d+) US=(\d+)/.exec(out);
  if (!m || Number(m[1]) !== mib << 20) throw new Error(`TCP stream: unexpected output ${out}`);
  return { seconds: Number(m[2]) / 1e6, bytes: Number(m[1]) };
}

const mbps = (t: Timing) => ((t.bytes ?? 0) / t.seconds / 1e6).toFixed(1);

export async function runLab(s: LabSettings, log: (m: string) => void): Promise<LabResults> {
  const date = new Date().toISOString();
  const started = Date.now();
  const ud = labUserData();
  const lab = await Lab.create({ name: 'bench' });
  try {
    const origin = await lab.startVm({ name: 'origin', ip: `${SUBNET}.10`, userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME], ...VMS.origin });
    expectDone('origin', await origin.waitForCloudInit({ timeoutMs: 15 * MIN }));
    // The origin behaves like a remote service from here on: every reply waits, and the rate is capped.
    await lab.setLink(origin, { delayMs: s.delayMs, rateMbit: s.rateMbit });
    const node = await lab.startVm({ name: 'node', ip: `${SUBNET}.31`, userData: ud.cacheNode, ...VMS.node, instance: { tags: ud.nodeTags[0] } });
    const client = await lab.startVm({
      name: 'client', ip: `${SUBNET}.21`, userData: ud.originClient, cpus: VMS.client.cpus, memoryMiB: VMS.client.memoryMiB,
      nvmeDisks: Array.from({ length: VMS.client.nvmeCount }, (_, i) => ({ sizeMiB: VMS.client.nvmeMiB, serial: `bench-is-${i}`, blank: true })),
    });
    // The data set is made on the origin (local writes, not shaped) while the node and the client boot.
    const data = '/srv/efs/bench';
    await origin.execOk([
      `mkdir -p ${data} && head -c ${s.bigMiB}M /dev/urandom > ${data}/big.bin`,
      files(`${data}/small`, s.smallCount, s.smallKiB * 1024),
      tree(`${data}/meta`, s.metaDirs, s.metaFilesPerDir, s.metaBytes),
      'sync',
    ].join(' && '), { timeoutMs: 20 * MIN });
    log('origin: data set written');
    expectDone('node', await node.waitForCloudInit({ timeoutMs: 20 * MIN }));
    expectDone('client', await client.waitForCloudInit({ timeoutMs: 20 * MIN }));
    await client.execOk([
      'grep -q " yes$" /proc/fs/nfsfs/volumes',
      'mkdir -p /mnt/direct /mnt/node',
      `mount -t nfs4 -o ${NFS_OPTS},nosharecache ${EFS_NAME}:/ /mnt/direct`,
      `mount -t nfs4 -o ${NFS_OPTS} ${node.ip}:${ud.exportPath} /mnt/node`,
    ].join(' && '));
    log(`client mounts:\n${await client.execOk('findmnt -t nfs4 -rno TARGET,SOURCE; cat /proc/fs/nfsfs/volumes')}`);
    await node.writeFile('/root/bench-server.py', SERVER_PY);
    await client.writeFile('/root/bench-client.py', CLIENT_PY);
    const measureStart = Date.now();

    // 1. FS-Cache client: cold (from the origin) and warm (from FS-Cache, page cache dropped), and the local RAID.
    const smallBytes = s.smallCount * s.smallKiB * 1024;
    const bigBytes = s.bigMiB << 20;
    const readSmall = (dir: string) => `cat ${dir}/s* > /dev/null`;
    const readBig = (file: string) => `cat ${file} > /dev/null`;
    const smallCold = await timed(client, readSmall('/mnt/efs/bench/small'), { drop: true, bytes: smallBytes });
    const bigCold = await timed(client, readBig('/mnt/efs/bench/big.bin'), { drop: true, bytes: bigBytes });
    // FS-Cache writes to the disk cache in the background: wait until its counters stop moving for 3 s.
    await settleFscache(client);
    const smallWarm = await watched(origin, client, () => timed(client, readSmall('/mnt/efs/bench/small'), { drop: true, bytes: smallBytes }));
    const bigWarm = await watched(origin, client, () => timed(client, readBig('/mnt/efs/bench/big.bin'), { drop: true, bytes: bigBytes }));
    const local = '/var/cache/fscache/bench-local';
    await client.execOk(`mkdir -p ${local} && ${files(`${local}/small`, s.smallCount, s.smallKiB * 1024)} && ` +
      `head -c ${s.bigMiB}M /dev/urandom > ${local}/big.bin && sync`, { timeoutMs: 10 * MIN });
    const smallLocal = await timed(client, readSmall(`${local}/small`), { drop: true, bytes: smallBytes });
    const bigLocal = await timed(client, readBig(`${local}/big.bin`), { drop: true, bytes: bigBytes });
    log(`1. ${s.smallCount} x ${s.smallKiB} KiB: cold ${mbps(smallCold)} MB/s, warm ${mbps(smallWarm.value)} MB/s, local ${mbps(smallLocal)} MB/s`);
    log(`1. ${s.bigMiB} MiB: cold ${mbps(bigCold)} MB/s, warm ${mbps(bigWarm.value)} MB/s, local ${mbps(bigLocal)} MB/s`);

    // 2. RAM cache node: the client reads the origin directly, then through the node (first read fills the node's
    // page cache; the second is served from it). The client's own caches are dropped before each read.
    const directW = await watched(origin, client, () => timed(client, readBig('/mnt/direct/bench/big.bin'), { drop: true, bytes: bigBytes }));
    const direct = directW.value;
    const nodeCold = await timed(client, readBig('/mnt/node/bench/big.bin'), { drop: true, bytes: bigBytes });
    const nodeWarm = await watched(origin, client, () => timed(client, readBig('/mnt/node/bench/big.bin'), { drop: true, bytes: bigBytes }));
    const links = [await tcpStream(node, client, s.bigMiB), await tcpStream(node, client, s.bigMiB)];
    const link = links.reduce((a, b) => (a.seconds <= b.seconds ? a : b));
    log(`2. ${s.bigMiB} MiB: direct ${mbps(direct)} MB/s, node cold ${mbps(nodeCold)} MB/s, node warm ${mbps(nodeWarm.value)} MB/s, ` +
      `TCP ${links.map(mbps).join(' / ')} MB/s`);

    // 3. Metadata: ls -lR of the tree and a small-file read loop, directly, and twice through the node and the FS-Cache
    // mount (the first pass fills them); the client's caches are dropped before every pass. The ceiling: the same tree on the client's RAID.
    const meta = `${local}/meta`;
    await client.execOk(`${tree(meta, s.metaDirs, s.metaFilesPerDir, s.metaBytes)} && sync`, { timeoutMs: 10 * MIN });
    const readDirs = Array.from({ length: s.readDirs }, (_, i) => `d${String(i).padStart(String(s.metaDirs - 1).length, '0')}`);
    const metaRoots: Record<MetadataPath, string> = {
      direct: '/mnt/direct/bench/meta', node: '/mnt/node/bench/meta', fscache: '/mnt/efs/bench/meta', local: meta,
    };
    const readFiles = s.readDirs * s.metaFilesPerDir;
    const list = {} as Record<MetadataPath, Timing>;
    const read = {} as Record<MetadataPath, Timing>;
    const firstPass: Record<string, Timing> = {};
    for (const [p, root] of Object.entries(metaRoots) as Array<[MetadataPath, string]>) {
      const ls = `ls -lR --color=never ${root}`;
      const cat = `cd ${root} && cat ${readDirs.map((d) => `${d}/*`).join(' ')}`;
      // Nothing fills on the direct path or the local disk: one pass each.
      if (p === 'node' || p === 'fscache') {
        firstPass[`list.${p}`] = await timed(client, ls, { drop: true });
        firstPass[`read.${p}`] = await timed(client, cat, { drop: true, bytes: readFiles * s.metaBytes });
        await settleFscache(client);
      }
      list[p] = await timed(client, ls, { drop: true });
      read[p] = await timed(client, cat, { drop: true, bytes: readFiles * s.metaBytes });
      log(`3. ${p}: ls -lR ${list[p].seconds.toFixed(2)} s, read ${readFiles} files ${read[p].seconds.toFixed(2)} s` +
        (firstPass[`list.${p}`] ? ` (first pass ${firstPass[`list.${p}`].seconds.toFixed(2)} s, ${firstPass[`read.${p}`].seconds.toFixed(2)} s)` : ''));
    }
    log(`measurements took ${((Date.now() - measureStart) / 1000).toFixed(0)} s`);

    return {
      date,
      durationSeconds: (Date.now() - started) / 1000,
      machine: machine(true),
      settings: {
        'origin link': `netem on the origin VM's egress: delay ${s.delayMs} ms, rate ${s.rateMbit} Mbit/s (EFS stand-in: kernel nfsd, NFSv4.1 only, delegations off with fs.leases-enable=0, like EFS)`,
        'client-node link': 'unshaped (virtio-net on a bridge in a network namespace)',
        'VMs': `QEMU with TCG (software emulation, no KVM); origin ${VMS.origin.cpus} vCPU/${VMS.origin.memoryMiB} MiB, ` +
          `cache node ${VMS.node.cpus} vCPU/${VMS.node.memoryMiB} MiB, FS-Cache client ${VMS.client.cpus} vCPU/${VMS.client.memoryMiB} MiB ` +
          `with ${VMS.client.nvmeCount} x ${VMS.client.nvmeMiB} MiB emulated NVMe in RAID 0`,
        'client mounts': `NFSv4.1 ${NFS_OPTS}; origin with fsc (the library's client user data), origin without fsc (direct), the node`,
        'reads': 'cat to /dev/null after dropping the client\'s page, dentry and inode caches; wall time by the guest\'s clock',
        'metadata tree': `${s.metaDirs} directories x ${s.metaFilesPerDir} files of ${s.metaBytes} B; read loop: one cat of ${readFiles} files`,
      },
      fscache: {
        smallFiles: { count: s.smallCount, bytesEach: s.smallKiB * 1024, cold: smallCold, warm: smallWarm.value, local: smallLocal },
        bigFile: { bytes: bigBytes, cold: bigCold, warm: bigWarm.value, local: bigLocal },
      },
      node: { bytes: bigBytes, direct, nodeCold, nodeWarm: nodeWarm.value, link },
      metadata: { files: s.metaDirs * s.metaFilesPerDir, bytesEach: s.metaBytes, readFiles, list, read, firstPass },
      checks: {
        'origin bytes read during the warm FS-Cache reads': smallWarm.originBytes + bigWarm.originBytes,
        'FS-Cache pages read during the warm FS-Cache reads': smallWarm.fscachePages + bigWarm.fscachePages,
        'origin bytes read during the warm read through the node': nodeWarm.originBytes,
        'origin bytes read during the direct read (no fsc mount)': directW.originBytes,
        'FS-Cache pages read during the direct read (no fsc mount)': directW.fscachePages,
        'TCP stream samples, seconds': links.map((l) => Number(l.seconds.toFixed(3))),
      },
    };
  } finally {
    await lab.destroy();
    progress('bench lab destroyed');
  }
}

function expectDone(name: string, r: { status: string; errors: string[]; output: string }): void {
  if (r.status !== 'done' || r.errors.length) {
    throw new Error(`${name}: user data did not finish (${r.status}): ${r.errors.join('; ')}\n${r.output.split('\n').slice(-30).join('\n')}`);
  }
}
