/**
 * The instance side of the library, proved on a real kernel: the user data that CDK synthesized for cache nodes and
 * FS-Cache clients (test/heavy/lab/scenarios/stacks.ts), run by cloud-init in VMs, against an NFSv4.1 origin standing in
 * for EFS. Scenario numbers follow the lab issue.
 */
import { CloudInitResult, Lab, progress, Vm } from './harness';
import { nfsdReadBytes, sha256 } from './scenarios/guest';
import { changeFour, installSeeders, makeTree, SEED_SOURCE, seederScripts, treeDigest } from './scenarios/seeding';
import {
  EFS_NAME, FLEET_NAME, LabUserData, labUserData, NFS3_ORIGIN_EXPORT, NFS3_ORIGIN_IP, NFS3_ORIGIN_USER_DATA, ORIGIN_USER_DATA,
  USER_STEP_LOG, USER_STEPS, USER_STEPS_LOG,
} from './scenarios/stacks';

const NODE_ADDRESS = '10.77.0.100';
const MIN = 60_000;

/** Pages FS-Cache has read from the disk cache (`IO : rd=`). */
async function fscacheReads(vm: Vm): Promise<number> {
  const stats = await vm.execOk('cat /proc/fs/fscache/stats');
  const m = /IO\s*:\s*rd=(\d+)/.exec(stats);
  if (!m) throw new Error(`no IO line in /proc/fs/fscache/stats:\n${stats}`);
  return Number(m[1]);
}

/** CloudFormation signals a VM sent, as the image's stand-in for the AWS CLI recorded them (/var/log/lab-aws.log). */
async function signals(vm: Vm): Promise<Array<{ status: string; serving: string; uniqueId: string; resource: string }>> {
  const log = (await vm.execOk('cat /var/log/lab-aws.log 2>/dev/null || true')).split('\n');
  return log.filter((l) => / cloudformation signal-resource /.test(l)).map((l) => ({
    status: /--status (\S+)/.exec(l)?.[1] ?? '?',
    serving: /serving=(\S+)/.exec(l)?.[1] ?? '?',
    uniqueId: /--unique-id (\S+)/.exec(l)?.[1] ?? '?',
    resource: /--logical-resource-id (\S+)/.exec(l)?.[1] ?? '?',
  }));
}

/** OPEN operations (op 18) an nfsd has served, from its own proc4ops line. */
async function nfsdOpens(vm: Vm): Promise<number> {
  return Number((await vm.execOk("awk '$1 == \"proc4ops\" { print $21 }' /proc/net/rpc/nfsd")).trim());
}

/** Every NFSv3 and NFSv4 request an nfsd has served (proc3 and proc4 lines: the count, then one number per procedure). */
async function nfsdCalls(vm: Vm): Promise<number> {
  return Number((await vm.execOk("awk '$1 == \"proc3\" || $1 == \"proc4\" { for (i = 3; i <= NF; i++) s += $i } END { print s + 0 }' /proc/net/rpc/nfsd")).trim());
}

/** Rounds of stat + open + read of the 50 small files on a client, no cache drops: what a web server or a build does. */
async function smallFileRounds(vm: Vm, dir: string, rounds: number): Promise<void> {
  await vm.execOk(`for r in $(seq ${rounds}); do for i in $(seq 50); do stat -c %s ${dir}/f$i.txt >/dev/null; cat ${dir}/f$i.txt >/dev/null; done; done`, { timeoutMs: 10 * MIN });
}

async function dropCaches(vm: Vm): Promise<void> {
  await vm.execOk('sync && echo 3 > /proc/sys/vm/drop_caches');
}

/** UUID of the cache file system (labelled fscache). */
async function cacheFsUuid(vm: Vm): Promise<string> {
  const uuid = (await vm.execOk('blkid -s UUID -o value "$(blkid -L fscache)"')).trim();
  expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
  return uuid;
}

/** Everything a second run of the bootstrap must leave as it was. */
async function state(vm: Vm): Promise<string> {
  return vm.execOk([
    'md5sum /etc/fstab /etc/exports /etc/cachefilesd.conf /etc/nfs.conf 2>/dev/null || true',
    'cat /proc/mdstat',
    "findmnt -rn -o TARGET,SOURCE,FSTYPE | grep -E 'efs|fscache' | sort",
    'pgrep -o -x nfsd >/dev/null && ps -o lstart= -p "$(pgrep -o -x nfsd)" || true',
    'pgrep -x cachefilesd || true',
    'exportfs -v 2>/dev/null || true',
  ].join('; echo ---; '));
}

describe('lab scenarios: the synthesized user data on a real kernel', () => {
  let lab: Lab;
  let ud: LabUserData;
  let origin: Vm;
  let nfs3Origin: Vm; // an NFS server that is not EFS: NFSv3 only (section 8)
  let node1: Vm;
  let node2: Vm;
  let clientA: Vm; // FS-Cache client over the origin
  let clientB: Vm; // FS-Cache client over the cache fleet
  const boot: Record<string, CloudInitResult> = {};
  const nvme = (prefix: string) => [
    { sizeMiB: 384, serial: `${prefix}-is-0`, blank: true },
    { sizeMiB: 384, serial: `${prefix}-is-1`, blank: true },
  ];

  beforeAll(async () => {
    ud = labUserData();
    progress(`user data: cache node ${ud.cacheNode.length} B, origin client ${ud.originClient.length} B, fleet client ${ud.fleetClient.length} B`);
    lab = await Lab.create({ name: 'scenarios' });
    origin = await lab.startVm({ name: 'origin', ip: '10.77.0.10', userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME], cpus: 1 });
    // Beside it, on the other core, the NFSv3-only server of section 8.
    nfs3Origin = await lab.startVm({ name: 'nfs3-origin', ip: NFS3_ORIGIN_IP, userData: NFS3_ORIGIN_USER_DATA, cpus: 1 });
    [boot.origin, boot['nfs3-origin']] = await Promise.all([origin.waitForCloudInit(), nfs3Origin.waitForCloudInit()]);
    await nfs3Origin.execOk(`head -c 16M /dev/urandom > ${NFS3_ORIGIN_EXPORT}/data/v3.bin && sync`);
    await origin.execOk([
      'head -c 24M /dev/urandom > /srv/efs/warm/model.bin',
      'head -c 48M /dev/urandom > /srv/efs/data/big.bin',
      'head -c 16M /dev/urandom > /srv/efs/data/small.bin',
      'for i in $(seq 1 50); do echo "file $i" > /srv/efs/data/f$i.txt; done',
      'sync',
    ].join(' && '));
    // Origin behaves like a remote service: latency and a rate well below the VMs' own read speed.
    await lab.setLink(origin, { delayMs: 2, rateMbit: 64 });
    // Both nodes run the fleet's one user data; each learns which node it is from its tags (the metadata service).
    node1 = await lab.startVm({ name: 'node1', ip: '10.77.0.31', userData: ud.cacheNode, cpus: 1, instance: { tags: ud.nodeTags[0] } });
    node2 = await lab.startVm({ name: 'node2', ip: '10.77.0.32', userData: ud.cacheNode, cpus: 1, instance: { tags: ud.nodeTags[1] } });
    [boot.node1, boot.node2] = await Promise.all([node1.waitForCloudInit(), node2.waitForCloudInit()]);
    // The lab's stand-in for the node's stable interface: a secondary address that clients mount through the name.
    await lab.moveAddress(NODE_ADDRESS, undefined, node1);
    await lab.setDnsRecord(FLEET_NAME, [NODE_ADDRESS]);
    clientA = await lab.startVm({ name: 'client-a', ip: '10.77.0.21', userData: ud.originClient, nvmeDisks: nvme('a'), cpus: 1 });
    clientB = await lab.startVm({ name: 'client-b', ip: '10.77.0.22', userData: ud.fleetClient, nvmeDisks: nvme('b'), cpus: 1 });
    [boot['client-a'], boot['client-b']] = await Promise.all([clientA.waitForCloudInit(), clientB.waitForCloudInit()]);
  }, 40 * MIN);

  afterAll(async () => {
    await lab?.destroy();
  });

  test('every bootstrap finished without errors', () => {
    for (const [name, r] of Object.entries(boot)) {
      expect({ name, status: r.status, errors: r.errors }).toEqual({ name, status: 'done', errors: [] });
      progress(`${name}: user data done ${r.seconds.toFixed(0)} s after power on`);
    }
  });

  test('each node signalled CloudFormation exactly once, SUCCESS, while it served, as the node its tags name', async () => {
    for (const [i, vm] of [node1, node2].entries()) {
      const resource = ud.nodeTags[i]['cdk-efs-cache:signal-resource'];
      expect(resource).toMatch(new RegExp(`^FleetNode${i + 1}GroupASG`));
      expect({ vm: vm.name, signals: await signals(vm) }).toEqual({
        vm: vm.name,
        signals: [{ status: 'SUCCESS', serving: 'yes', uniqueId: lab.instanceId(vm), resource }],
      });
      // It asked the metadata service (IMDSv2: a token first) for its tags and its instance id.
      const asked = lab.imdsRequests(vm).map((r) => `${r.method} ${r.path} ${r.status}`);
      expect(asked).toEqual(expect.arrayContaining(['PUT /latest/api/token 200', 'GET /latest/meta-data/tags/instance 200',
        'GET /latest/meta-data/tags/instance/cdk-efs-cache:signal-resource 200', 'GET /latest/meta-data/instance-id 200']));
    }
    // Clients are launch templates without a creation policy: they call no AWS API at all.
    for (const vm of [clientA, clientB]) expect((await vm.execOk('cat /var/log/lab-aws.log 2>/dev/null || true')).trim()).toBe('');
  });

  test('commands added to userData ran after the bootstrap: on a node after its signal, with the export up; on a client with the fsc mount', async () => {
    const [nodeStep, signalled] = await Promise.all([node1.execOk(`cat ${USER_STEP_LOG}`), node1.execOk('cat /var/log/lab-aws.log')]);
    const [ranAt, exports] = nodeStep.trim().split(' ');
    expect(exports).toBe('exports=1');
    expect(Number(ranAt)).toBeGreaterThan(Number(signalled.trim().split(' ')[0]));
    expect((await clientB.execOk(`cat ${USER_STEP_LOG}`)).trim()).toMatch(/^\d+\.\d+ fstype=nfs4$/);
    // Several KB of commands (more than EC2's 16 KB would have left the user data before the code moved to S3): all
    // ran, in order, once, after the bootstrap.
    for (const vm of [node1, clientB]) {
      const lines = (await vm.execOk(`cat ${USER_STEPS_LOG}`)).trim().split('\n');
      expect(lines).toHaveLength(USER_STEPS + 1);
      expect(lines.slice(1).map((l) => l.split(':')[0])).toEqual(Array.from({ length: USER_STEPS }, (_, i) => `step ${String(i + 1).padStart(3, '0')} of ${USER_STEPS}`));
      if (vm === node1) expect(Number(lines[0].split(' ')[0])).toBeGreaterThan(Number(signalled.trim().split(' ')[0]));
    }
    progress(`user commands added: ${ud.userCommandBytes} bytes; user data with them: node ${ud.cacheNode.length} B, client ${ud.fleetClient.length} B`);
    // The origin client's template has no user step.
    expect((await clientA.exec(`test -e ${USER_STEP_LOG}`)).code).not.toBe(0);
  });

  describe('1. FS-Cache client', () => {
    test('RAID 0 over every blank NVMe disk, ext4 labelled, mounted, cachefilesd running, FSC yes', async () => {
      expect(await clientA.execOk('cat /proc/mdstat')).toMatch(/^md\S* : active raid0 nvme\dn1\[\d\] nvme\dn1\[\d\]/m);
      expect((await clientA.execOk('findmnt -rno FSTYPE,LABEL /var/cache/fscache')).trim()).toBe('ext4 fscache');
      expect(await clientA.execOk('findmnt -no OPTIONS /var/cache/fscache')).not.toMatch(/noatime/);
      expect((await clientA.execOk('pgrep -x cachefilesd')).trim()).toMatch(/^\d+$/);
      expect(await clientA.execOk('cat /proc/fs/fscache/caches')).toMatch(/\bA\b.*efscache|efscache.*\bA\b/);
      expect(await clientA.execOk('cat /proc/fs/nfsfs/volumes')).toMatch(/^v4 .* yes$/m);
      expect(await clientA.execOk('grep " /mnt/efs " /etc/fstab')).toMatch(/fsc.*_netdev.*nofail|fsc.*nofail.*_netdev/);
    });

    test('a re-read after dropping the page cache comes from FS-Cache, not the origin', async () => {
      const first = await sha256(clientA, '/mnt/efs/data/small.bin');
      expect(first).toBe(await sha256(origin, '/srv/efs/data/small.bin'));
      await clientA.execOk('sleep 3; sync');
      await dropCaches(clientA);
      const [rd0, origin0] = [await fscacheReads(clientA), await nfsdReadBytes(origin)];
      expect(await sha256(clientA, '/mnt/efs/data/small.bin')).toBe(first);
      const [rd1, origin1] = [await fscacheReads(clientA), await nfsdReadBytes(origin)];
      progress(`clientA re-read: FS-Cache pages read +${rd1 - rd0}, origin bytes read +${origin1 - origin0}`);
      expect(rd1 - rd0).toBeGreaterThanOrEqual((16 << 20) / 4096 / 2);
      expect(origin1 - origin0).toBeLessThan(1 << 20);
    });

    test('fscache-status reports the cache and the fsc mount', async () => {
      const out = await clientA.execOk('fscache-status');
      expect(out).toMatch(/FSC yes|fsc: yes|yes/);
      expect(out).toMatch(/efscache/);
    });
  });

  describe('2. cache node', () => {
    test('mounts the origin and exports it read-only, NFSv4.1 only, with the synthesized fsid', async () => {
      for (const node of [node1, node2]) {
        expect(await node.execOk('findmnt -no SOURCE /efs')).toContain(`${EFS_NAME}:/`);
        const exports = await node.execOk('exportfs -v');
        expect(exports).toContain(`fsid=${ud.fsid}`);
        expect(exports).toMatch(/\bro\b/);
        expect(exports).toMatch(/root_squash/);
        expect(exports).not.toMatch(/no_root_squash/);
        expect((await node.execOk('cat /proc/fs/nfsd/versions')).trim()).toMatch(/-3.*\+4\.1.*-4\.2|-3 .*\+4\.1/);
        expect((await node.execOk('cat /proc/fs/nfsd/threads')).trim()).toBe('16');
      }
    });

    test('a client reads through the node; a second read comes from the node\'s page cache', async () => {
      const expected = await sha256(origin, '/srv/efs/data/big.bin');
      // O_DIRECT reads bypass the client's own caches, so every byte comes from the node.
      const direct = `dd if=/mnt/efs/data/big.bin iflag=direct bs=1M status=none | sha256sum | cut -d' ' -f1`;
      expect((await clientB.execOk(direct, { timeoutMs: 10 * MIN })).trim()).toBe(expected);
      const before = await nfsdReadBytes(origin);
      expect((await clientB.execOk(direct, { timeoutMs: 10 * MIN })).trim()).toBe(expected);
      const after = await nfsdReadBytes(origin);
      progress(`second read through node1: origin bytes read +${after - before}`);
      expect(after - before).toBeLessThan(1 << 20);
    });

    test('a write through the node is refused', async () => {
      const r = await clientB.exec('touch /mnt/efs/data/written-by-client 2>&1');
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/Read-only file system/);
      expect((await origin.exec('test -e /srv/efs/data/written-by-client')).code).not.toBe(0);
    });

    test('the warm paths were read before serving', async () => {
      const log = boot.node1.output;
      expect(log).toMatch(/warm/i);
      const before = await nfsdReadBytes(origin);
      await node1.execOk('cat /efs/warm/model.bin > /dev/null');
      expect((await nfsdReadBytes(origin)) - before).toBeLessThan(1 << 20);
    });
  });

  describe('3. two nodes behind one name', () => {
    test('both export the same fsid; a client moved from one node to the other keeps reading', async () => {
      const fsids = await Promise.all([node1, node2].map(async (n) => /fsid=([0-9a-f-]+)/.exec(await n.execOk('exportfs -v'))?.[1]));
      expect(fsids).toEqual([ud.fsid, ud.fsid]);
      // Open the files through node1, then move the address to node2 (as a replaced node's interface would).
      await clientB.execOk('ls -l /mnt/efs/data > /dev/null; cat /mnt/efs/data/f1.txt');
      await lab.moveAddress(NODE_ADDRESS, node1, node2);
      await dropCaches(clientB);
      const r = await clientB.exec('cat /mnt/efs/data/f2.txt && ls /mnt/efs/data | wc -l && dd if=/mnt/efs/data/small.bin iflag=direct bs=1M status=none | sha256sum', { timeoutMs: 10 * MIN });
      expect(r.stderr).not.toMatch(/Stale file handle/i);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('file 2');
      expect(r.stdout).toContain(await sha256(origin, '/srv/efs/data/small.bin'));
      const dmesg = await clientB.execOk('dmesg | grep -i stale || true');
      expect(dmesg).toBe('');
      await lab.moveAddress(NODE_ADDRESS, node2, node1);
    });
  });

  describe('5. faults', () => {
    test('a cache node killed during a client read comes back, and the hard mount resumes byte-identical', async () => {
      const expected = await sha256(origin, '/srv/efs/data/big.bin');
      await lab.setLink(node1, { rateMbit: 16 });
      await clientB.execOk(`nohup sh -c "dd if=/mnt/efs/data/big.bin iflag=direct bs=1M status=none | sha256sum > /tmp/sum" >/dev/null 2>&1 &`);
      await clientB.execOk('sleep 4');
      await node1.kill();
      progress('node1 killed during the read');
      await clientB.execOk('sleep 5');
      expect((await clientB.exec('test -s /tmp/sum')).code).not.toBe(0);
      await node1.start();
      await node1.waitForAgent();
      // On AWS the stable interface stays attached to the instance; the lab re-adds its address.
      await lab.moveAddress(NODE_ADDRESS, undefined, node1);
      await clientB.execOk('for i in $(seq 600); do test -s /tmp/sum && break; sleep 1; done; test -s /tmp/sum', { timeoutMs: 12 * MIN });
      expect((await clientB.execOk('cut -d" " -f1 /tmp/sum')).trim()).toBe(expected);
      expect((await node1.execOk('exportfs -v'))).toContain(`fsid=${ud.fsid}`);
    });
  });

  describe('6. idempotence', () => {
    test.each([['client-a'], ['node2']])('running the user data again on %s changes nothing and fails nothing', async (name) => {
      const vm = name === 'client-a' ? clientA : node2;
      const before = await state(vm);
      const r = await vm.exec('bash /var/lib/cloud/instance/scripts/part-001', { timeoutMs: 10 * MIN });
      expect({ code: r.code, stderr: r.stderr.split('\n').filter((l) => /FATAL|error/i.test(l)) }).toEqual({ code: 0, stderr: [] });
      expect(await state(vm)).toBe(before);
      // A run after the first never signals again (node1, restarted in 5., ran its boot units too).
      if (vm === node2) for (const n of [node1, node2]) expect((await signals(n)).length).toBe(1);
    });
  });

  describe('4. stop/start and reboot', () => {
    test('a plain reboot keeps the cached data', async () => {
      const uuid = await cacheFsUuid(clientA);
      await clientA.reboot();
      await clientA.execOk('for i in $(seq 120); do grep -q " yes$" /proc/fs/nfsfs/volumes 2>/dev/null && break; sleep 1; done; grep -q " yes$" /proc/fs/nfsfs/volumes', { timeoutMs: 5 * MIN });
      expect(await cacheFsUuid(clientA)).toBe(uuid);
      const [rd0, o0] = [await fscacheReads(clientA), await nfsdReadBytes(origin)];
      expect(await sha256(clientA, '/mnt/efs/data/small.bin')).toBe(await sha256(origin, '/srv/efs/data/small.bin'));
      const [rd1, o1] = [await fscacheReads(clientA), await nfsdReadBytes(origin)];
      progress(`after reboot: FS-Cache pages read +${rd1 - rd0}, origin bytes +${o1 - o0}`);
      expect(rd1 - rd0).toBeGreaterThan(0);
      expect(o1 - o0).toBeLessThan(1 << 20);
    });

    test('after a stop/start with blank NVMe the array, file system, cache and mount come back by themselves', async () => {
      const uuid = await cacheFsUuid(clientA);
      await clientA.stopStart({ replaceNvmeWithBlank: true });
      await clientA.execOk('for i in $(seq 180); do grep -q " yes$" /proc/fs/nfsfs/volumes 2>/dev/null && break; sleep 1; done; grep -q " yes$" /proc/fs/nfsfs/volumes', { timeoutMs: 6 * MIN });
      expect(await clientA.execOk('cat /proc/mdstat')).toMatch(/^md\S* : active raid0 /m);
      expect(await cacheFsUuid(clientA)).not.toBe(uuid);
      expect((await clientA.execOk('findmnt -rno LABEL /var/cache/fscache')).trim()).toBe('fscache');
      expect(await clientA.execOk('cat /proc/fs/fscache/caches')).toMatch(/efscache/);
      expect(await sha256(clientA, '/mnt/efs/data/small.bin')).toBe(await sha256(origin, '/srv/efs/data/small.bin'));
    });
  });

  // Booted together, as the lab's two cores allow: the nodes of section 7, the impatient node of section 5, and the
  // node of section 8 and its replacement.
  // 5.'s node whose origin is unreachable at boot is aws.lab.ts's node-x (the same user data, its real aws CLI's FAILURE
  // signal recorded by the emulator, nothing exported or listening): one boot instead of two for the same proof.
  describe('7. NFSv3 between clients and a node (clientNfsVersion: NfsVersion.NFS_V3), 8. an NFSv3-only server as the origin', () => {
    let node4: Vm; // the NFSv3 fleet's node
    let node5: Vm; // the same user data over an origin whose handles cannot fit: node1's re-export
    let clientC: Vm; // FS-Cache client of the NFSv3 fleet
    const V3_NODE_IP = '10.77.0.34';
    const CLIENT_C_IP = '10.77.0.23';
    let r4: CloudInitResult;
    let r5: CloudInitResult;
    let rc: CloudInitResult;
    // Section 8: node6 caches the NFSv3-only server; node6b, a new instance of the same group, replaces it. Clients
    // mount the stable address (the lab's stand-in for the node's interface), which moves to the replacement.
    const NFS3_NODE_ADDRESS = '10.77.0.101';
    let node6: Vm;
    let node6b: Vm;
    let r6: CloudInitResult;
    let r6b: CloudInitResult;
    /** What client-b saw through node6, before its replacement (one read per protocol, then both again). */
    let before: { sums: string[]; originFirst: number; originAgain: number; nodeAgain: number; origin4: number };
    const originSum = () => sha256(nfs3Origin, `${NFS3_ORIGIN_EXPORT}/data/v3.bin`);
    const throughNode6 = ['/mnt/n6v3', '/mnt/n6v41'].map((m) => `${m}/data/v3.bin`);
    /** NFSv4 requests an nfsd has served (its proc4 line: the count of procedures, then one number each). */
    const nfsd4Calls = async (vm: Vm) => Number((await vm.execOk("awk '$1 == \"proc4\" { for (i = 3; i <= NF; i++) s += $i } END { print s + 0 }' /proc/net/rpc/nfsd")).trim());

    beforeAll(async () => {
      // node5 runs the NFSv3 fleet's user data with node1's export as its origin: a re-export's handles are the
      // origin's plus about 22 bytes, so a re-export of a re-export does not fit NFSv3's 64.
      const overNode = ud.v3Node.replace(/^EFSC_ORIGIN_SERVER=.*$/m, "EFSC_ORIGIN_SERVER='10.77.0.31'")
        .replace("EFSC_ORIGIN_PATH='/'", `EFSC_ORIGIN_PATH='${ud.exportPath}'`);
      expect(overNode).toContain("EFSC_ORIGIN_SERVER='10.77.0.31'");
      expect(overNode).toContain(`EFSC_ORIGIN_PATH='${ud.exportPath}'`);
      node4 = await lab.startVm({ name: 'node4', ip: V3_NODE_IP, userData: ud.v3Node, cpus: 1, instance: { tags: ud.v3NodeTags } });
      node5 = await lab.startVm({ name: 'node5', ip: '10.77.0.35', userData: overNode, cpus: 1, instance: { tags: ud.v3NodeTags } });
      node6 = await lab.startVm({ name: 'node6', ip: '10.77.0.36', userData: ud.nfs3OriginNode, cpus: 1, instance: { tags: ud.nfs3OriginNodeTags } });
      [r4, r6] = await Promise.all([node4.waitForCloudInit(), node6.waitForCloudInit()]);
      // Section 8, before the replacement: client-b mounts node6 over NFSv3 (as the library's clients do: no rpcbind,
      // no NLM) and over NFSv4.1, reads the file through each, then both again with its page cache dropped.
      await lab.moveAddress(NFS3_NODE_ADDRESS, undefined, node6);
      await clientB.execOk([
        `mkdir -p /mnt/n6v3 /mnt/n6v41`,
        `mount -t nfs -o vers=3,proto=tcp,port=2049,mountport=20048,mountproto=tcp,nolock,ro ${NFS3_NODE_ADDRESS}:/efs /mnt/n6v3`,
        `mount -t nfs4 -o vers=4.1,ro ${NFS3_NODE_ADDRESS}:/efs /mnt/n6v41`,
      ].join(' && '), { timeoutMs: 3 * MIN });
      const o0 = await nfsdReadBytes(nfs3Origin);
      const sums = [await sha256(clientB, throughNode6[0]), await sha256(clientB, throughNode6[1])];
      const [o1, n1] = [await nfsdReadBytes(nfs3Origin), await nfsdReadBytes(node6)];
      await dropCaches(clientB);
      sums.push(...[await sha256(clientB, throughNode6[0]), await sha256(clientB, throughNode6[1])]);
      before = {
        sums, originFirst: o1 - o0, originAgain: (await nfsdReadBytes(nfs3Origin)) - o1, nodeAgain: (await nfsdReadBytes(node6)) - n1,
        origin4: await nfsd4Calls(nfs3Origin),
      };
      progress(`section 8: through node6, 16 MiB over NFSv3 then NFSv4.1: the origin served ${before.originFirst} bytes; both again: origin ${before.originAgain}, node6 ${before.nodeAgain}`);
      await node6.kill();
      // Nothing from the client may reach rpcbind on the node: a u32 filter drops and counts it.
      await node4.execOk([
        'tc qdisc add dev eth0 ingress',
        `tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip src ${CLIENT_C_IP}/32 match ip dport 111 0xffff action drop`,
      ].join(' && '));
      await lab.setDnsRecord(ud.v3Endpoint, [V3_NODE_IP]);
      clientC = await lab.startVm({ name: 'client-c', ip: CLIENT_C_IP, userData: ud.v3Client, nvmeDisks: nvme('c'), cpus: 1 });
      node6b = await lab.startVm({ name: 'node6b', ip: '10.77.0.37', userData: ud.nfs3OriginNode, cpus: 1, instance: { tags: ud.nfs3OriginNodeTags } });
      [r5, rc, r6b] = await Promise.all([node5.waitForCloudInit({ expectError: true }), clientC.waitForCloudInit(), node6b.waitForCloudInit()]);
      await lab.moveAddress(NFS3_NODE_ADDRESS, undefined, node6b);
    }, 30 * MIN);

    test('the node checked the origin\'s handles over NFSv3, then served NFSv3 and NFSv4.1, and signalled SUCCESS once', async () => {
      expect({ status: r4.status, errors: r4.errors }).toEqual({ status: 'done', errors: [] });
      const check = r4.output.split('\n').findIndex((l) => /NFSv3: the origin's file handles fit/.test(l));
      const serving = r4.output.split('\n').findIndex((l) => /efs-cache: serving /.test(l));
      expect(check).toBeGreaterThanOrEqual(0);
      expect(serving).toBeGreaterThan(check);
      const versions = ` ${(await node4.execOk('cat /proc/fs/nfsd/versions')).trim()} `;
      for (const v of ['+3', '+4.1', '-4.0', '-4.2']) expect(versions).toContain(` ${v} `);
      expect((await node4.execOk("ss -Hltn 'sport = :20048'")).trim()).not.toBe('');
      expect((await node4.execOk('findmnt -rn /run/efs-cache/v3-check || true')).trim()).toBe('');
      expect(await node4.execOk('exportfs -v')).toMatch(/127\.0\.0\.1\(/);
      expect((await signals(node4)).map(({ status, serving: s }) => ({ status, serving: s }))).toEqual([{ status: 'SUCCESS', serving: 'yes' }]);
    });

    test('a client mounts it over NFSv3 with FS-Cache, without rpcbind, reads what the origin holds and cannot write', async () => {
      expect({ status: rc.status, errors: rc.errors }).toEqual({ status: 'done', errors: [] });
      const opts = (await clientC.execOk('findmnt -no FSTYPE,OPTIONS /mnt/efs')).trim();
      expect(opts).toMatch(/^nfs .*\bvers=3\b/);
      expect(opts).toMatch(/\bnolock\b/);
      expect(opts).toMatch(/\bmountport=20048\b/);
      expect(await clientC.execOk('cat /proc/fs/nfsfs/volumes')).toMatch(/^v3 .* yes$/m);
      expect(await sha256(clientC, '/mnt/efs/data/small.bin')).toBe(await sha256(origin, '/srv/efs/data/small.bin'));
      const w = await clientC.exec('touch /mnt/efs/data/written-by-v3 2>&1');
      expect(w.code).not.toBe(0);
      expect(w.stdout + w.stderr).toMatch(/Read-only file system/);
      // The filter saw nothing from the client for port 111.
      const stats = await node4.execOk('tc -s filter show dev eth0 parent ffff:');
      expect(stats).toMatch(/Sent 0 bytes 0 pkt/);
    });

    test('steady state: re-opening and re-reading 50 small files costs the origin no OPEN over NFSv3; over NFSv4.1 every open still reaches it', async () => {
      await smallFileRounds(clientC, '/mnt/efs/data', 1);
      await smallFileRounds(clientB, '/mnt/efs/data', 1);
      const [o0, n0] = [await nfsdOpens(origin), await nfsdCalls(node4)];
      await smallFileRounds(clientC, '/mnt/efs/data', 5);
      const [o1, n1] = [await nfsdOpens(origin), await nfsdCalls(node4)];
      await smallFileRounds(clientB, '/mnt/efs/data', 5);
      const o2 = await nfsdOpens(origin);
      progress(`5 rounds of 50 files: over NFSv3 node4 served ${n1 - n0} requests and the origin ${o1 - o0} OPENs; over NFSv4.1 the origin ${o2 - o1} OPENs`);
      expect(o1 - o0).toBe(0);
      expect(n1 - n0).toBeLessThan(250); // fewer requests than opens: most re-opens ask the node nothing
      expect(o2 - o1).toBeGreaterThanOrEqual(250);
    });

    test('a node whose origin\'s handles do not fit NFSv3 does not serve, and says why', async () => {
      expect(r5.status).not.toBe('done');
      expect(r5.output).toMatch(/efs-cache: FATAL: NFSv3 cannot serve the origin: .*exceed NFSv3's 64 bytes, use clientNfsVersion NfsVersion.NFS_V4_1/);
      expect((await node5.exec('exportfs -v')).stdout.trim()).toBe('');
      expect((await node5.exec("ss -Hltn 'sport = :2049'")).stdout.trim()).toBe('');
      expect((await node5.execOk('findmnt -rn /run/efs-cache/v3-check || true')).trim()).toBe('');
      expect((await signals(node5)).map(({ status, serving }) => ({ status, serving }))).toEqual([{ status: 'FAILURE', serving: 'no' }]);
    });

    test('8. an NFSv3-only server as the origin: the node mounted it over NFSv3, checked its handles, served NFSv3 and NFSv4.1 with the fleet\'s fsid, and signalled SUCCESS', async () => {
      expect({ status: r6.status, errors: r6.errors }).toEqual({ status: 'done', errors: [] });
      expect(r6.output).toMatch(/NFSv3: the origin's file handles fit/);
      // The server: NFSv3 alone, and it never served an NFSv4 request.
      expect(` ${(await nfs3Origin.execOk('cat /proc/fs/nfsd/versions')).trim()} `).toMatch(/ \+3 .*-4/);
      expect(before.origin4).toBe(0);
      expect(`${(await node6b.execOk('findmnt -no FSTYPE,OPTIONS,SOURCE /efs')).trim()}`)
        .toMatch(new RegExp(`^nfs .*\\bvers=3\\b.*\\bmountport=20048\\b.* ${NFS3_ORIGIN_IP.replace(/\./g, '\\.')}:${NFS3_ORIGIN_EXPORT}/?$`));
      expect(` ${(await node6b.execOk('cat /proc/fs/nfsd/versions')).trim()} `).toMatch(/ \+3 .*\+4\.1 /);
      expect((await node6b.execOk('exportfs -v')).replace(/\s+/g, ' ')).toMatch(new RegExp(`^/efs \\S+\\([^)]*fsid=${ud.nfs3OriginFsid}`));
      expect((await signals(node6b)).map(({ status, serving, uniqueId }) => ({ status, serving, uniqueId })))
        .toEqual([{ status: 'SUCCESS', serving: 'yes', uniqueId: lab.instanceId(node6b) }]);
    });

    test('8. through it, a client reads the origin\'s bytes over NFSv3 and NFSv4.1; the origin serves the file once, the node\'s cache the rest', async () => {
      const sum = await originSum();
      expect(before.sums).toEqual([sum, sum, sum, sum]);
      // The first read (NFSv3) brought the 16 MiB from the origin; the NFSv4.1 read of the same file took nothing more
      // from it, and neither did both reads again: node6 served them from its page cache.
      expect(before.originFirst).toBeGreaterThanOrEqual(16 * 2 ** 20);
      expect(before.originFirst).toBeLessThan(17 * 2 ** 20);
      expect(before.originAgain).toBeLessThan(2 ** 20);
      expect(before.nodeAgain).toBeGreaterThanOrEqual(32 * 2 ** 20);
    });

    test('8. a node replaced: client-b\'s NFSv3 and NFSv4.1 mounts read on through the new instance (same fsid: no stale handle), which reads the file from the origin once', async () => {
      expect({ status: r6b.status, errors: r6b.errors }).toEqual({ status: 'done', errors: [] });
      expect(lab.instanceId(node6b)).not.toBe(lab.instanceId(node6));
      expect(node6.running).toBe(false);
      await dropCaches(clientB);
      const o0 = await nfsdReadBytes(nfs3Origin);
      const sums = [await sha256(clientB, throughNode6[0]), await sha256(clientB, throughNode6[1])];
      const fromOrigin = (await nfsdReadBytes(nfs3Origin)) - o0;
      progress(`section 8: after the replacement, both mounts read again: the origin served ${fromOrigin} bytes`);
      const sum = await originSum();
      expect(sums).toEqual([sum, sum]);
      expect(fromOrigin).toBeGreaterThanOrEqual(16 * 2 ** 20);
      expect(fromOrigin).toBeLessThan(17 * 2 ** 20);
    });

    afterAll(async () => {
      await Promise.all([node4, node5, node6b, clientC].filter((v) => v).map((v) => v.kill()));
    });
  });

  // The DataSeeder's user data as CDK rendered it, run on client-a (the loader) against the origin: the same copy and
  // verification the seeding benchmark times on 3,000 files (seeding.lab.ts), here on a small tree.
  describe('9. seeding: the DataSeeder loads a directory into the origin', () => {
    const TREE = { dirs: 4, files: 50, bytes: 16384 };
    const FILES = TREE.dirs * TREE.files;
    const scripts = seederScripts('/seed-lab');
    const onOrigin = `/srv/efs${scripts.targetPath}`;

    beforeAll(async () => {
      await installSeeders(clientA, scripts);
      await clientA.execOk(`rm -rf ${SEED_SOURCE} && ${makeTree(SEED_SOURCE, TREE)} && sync`);
    });

    test('a missing source fails fast, with the reason', async () => {
      const r = await clientA.exec('bash /root/failing.sh --no-shutdown');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('efs-cache: FATAL: source directory /srv/no-such-dir does not exist');
    });

    test(`${FILES} files: the tree in the origin is byte for byte the source's, and the seeder verified it`, async () => {
      const out = await clientA.execOk('bash /root/seed.sh --no-shutdown 2>&1', { timeoutMs: 10 * MIN });
      expect(out).toMatch(new RegExp(`efs-cache: verified: all ${FILES} files \\([\\d.]+ MiB\\) of the source are at ${scripts.targetPath}`));
      const source = (await clientA.execOk(treeDigest(SEED_SOURCE))).trim();
      expect((await origin.execOk(treeDigest(onOrigin), { timeoutMs: 5 * MIN })).trim()).toBe(source);
    });

    test('run again after four changes, it copies only those, and the origin holds the changed tree', async () => {
      await clientA.execOk(changeFour(SEED_SOURCE, TREE.bytes));
      const out = await clientA.execOk('bash /root/seed.sh --no-shutdown 2>&1', { timeoutMs: 10 * MIN });
      expect(out).toMatch(new RegExp(`efs-cache: copied 4 files \\([\\d.]+ MiB\\) in \\d+s; the other ${FILES - 3} were up to date`));
      const source = (await clientA.execOk(treeDigest(SEED_SOURCE))).trim();
      expect((await origin.execOk(treeDigest(onOrigin), { timeoutMs: 5 * MIN })).trim()).toBe(source);
    });
  });
});
