/**
 * The AWS side of the cache node's bootstrap on a real kernel: nodes booted from the synthesized user data whose own
 * aws CLI (Debian's awscli 2.x, the same major version Amazon Linux 2023 ships) and curl talk, over TLS, to the AWS
 * API emulator (test/heavy/emulator/server.py: moto, SignalResource recorded, IAM evaluated against the role's synthesized
 * statements) running on the lab network. Nothing in the scripts is redirected: the lab's DNS resolves the AWS host
 * names to the emulator, the VMs trust the emulator's CA from vendor data (as an image trusts a CA it ships), and the
 * aws CLI takes the role's session keys from the lab's metadata service, as from an instance profile.
 *
 * Every assertion about AWS is on what the emulator recorded or holds (calls, their source, order and parameters,
 * where the stable interface is attached). Whether a node served when it signalled is asked at that moment: the
 * emulator holds each SignalResource until the test has mounted the signalling node's export from another VM (the
 * origin VM, an NFS client like any other) and listed it.
 *
 * The lab plays EC2's data plane for the stable interface: once the emulator has the interface attached to an
 * instance, the lab moves the interface's address to that instance's VM (on AWS the OS configures the attached
 * interface). The data seeder runs here too: its own CLI fetches a bucket's prefix from the emulator's S3, and its
 * signal is held while the test lists what the origin holds. The fleet has an S3 mirror (`Mirror.s3`) of a
 * prefix of another bucket there, synced by each node's own CLI with its role's session and read by the client through
 * the stable address. Clients do not signal (their launch templates have no
 * creation policy). Failures of the seeder (a missing bucket, a prefix its role may not list) are proved against the
 * emulator on the host (test/heavy/emulator/seeder.emu.ts).
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import { parameters } from '../../util/user-data';
import { ApiCall, AWS_HOSTS, byCli, Emulator, EMULATOR_VALUES, isCodeFetch, RoleSession, rolePolicies, tearDown } from '../emulator/emulator';
import { SEED_BUCKET, SEED_FILES, SEED_STACK, seederUserData } from '../emulator/seeder-stack';
import { CloudInitResult, DIAGNOSIS_FILE, FAILURES_DIR, keptCode, Lab, progress, restoreEnabled, summarize, Vm } from './harness';
import { nfsdReadBytes, sha256 } from './scenarios/guest';
import { EFS_NAME, FLEET_NAME, LabUserData, labUserData, LAB_SUBNET, ORIGIN_USER_DATA } from './scenarios/stacks';

const MIN = 60_000;
const SIGNAL_TAG = 'cdk-efs-cache:signal-resource';
const ENI_TAG = 'cdk-efs-cache:stable-eni';
/** The stable interface's private address (moto allocates it in the lab's subnet; the lab moves it between VMs). */
const STABLE_IP = '10.77.0.100';
const ORIGIN_IP = '10.77.0.10';
const NODE_A_IP = '10.77.0.31';
const NODE_B_IP = '10.77.0.32';
const NODE_X_IP = '10.77.0.33';
const SEEDER_IP = '10.77.0.40';
/** The elastic fleet's two instances, and the virtual address that stands for its load balancer (IPVS, on the client). */
const ELASTIC_1_IP = '10.77.0.51';
const ELASTIC_2_IP = '10.77.0.52';
const ELASTIC_VIP = '10.77.0.250';
/** The elastic fleet's group in the emulator's Auto Scaling (what each instance's aws:autoscaling:groupName tag names). */
const ELASTIC_GROUP = 'Lab-ElasticFleetNodesGroup';
/** The tree the client reads through the virtual address while the fleet grows and shrinks: files of 1 MiB. */
const ELASTIC_TREE_FILES = 16;
/**
 * The fleet's S3 mirror (`Mirror.s3`): this bucket's prefix site/, exported at /mirror/site. Its first sync is the
 * boot's; the tests start each later one (efs-cache-mirror.service, what the timer starts every 30 min here).
 */
const MIRROR_BUCKET = 'efsc-lab-mirror';
const MIRROR_PREFIX = 'site/';
const MIRROR_OBJECTS: Record<string, string> = {
  'site/index.html': '<h1>version 1</h1>\n',
  'site/css/a.css': 'body { color: black }\n',
  'site/old.txt': 'removed at the origin later\n',
};
/** The longest time a change the node's copy holds may take to reach a client: its attribute cache (at most 60 s), and slack. */
const MIRROR_BOUND_MS = 90_000;
/** Where the seeder copies the bucket's prefix in the file system. */
const SEED_TARGET = '/seeded';

/**
 * What the probe found when an instance signalled: for a node, whether another VM could mount and list its export;
 * for the seeder, the files (sha256 and path) under its target in the origin at that moment.
 */
interface Probe {
  readonly vm: string;
  readonly served: boolean;
  readonly detail: string;
  readonly files?: string[];
}

/** `Action status` of each call. */
const actions = (calls: ApiCall[]) => calls.map((c) => `${c.action} ${c.status}`);

/**
 * Vendor data (cloud-config, before the user data runs, on every boot): trust the emulator's CA, and remove the lab
 * image's stand-in aws CLI (/usr/local/bin/aws, first in PATH) so that the real one answers. The CA is added to the
 * system bundle that the CLI and curl read, and kept in /usr/local/share/ca-certificates for any later
 * update-ca-certificates: running that at boot took 40 to 70 s of each node's boot here (one process per certificate
 * under software emulation).
 */
function vendorData(ca: string): string {
  const b64 = Buffer.from(ca).toString('base64');
  const cmd = 'c=/usr/local/share/ca-certificates/lab-aws-emulator.crt b=/etc/ssl/certs/ca-certificates.crt && ' +
    'printf %s "$0" | base64 -d > "$c" && { grep -qxF "$(sed -n 2p "$c")" "$b" || cat "$c" >> "$b"; } && rm -f /usr/local/bin/aws';
  return `#cloud-config\nbootcmd:\n  - [sh, -c, ${JSON.stringify(cmd)}, ${JSON.stringify(b64)}]\n`;
}

describe('the AWS side of a cache node on a real kernel: its own aws CLI and curl against the AWS API emulator', () => {
  let lab: Lab;
  let emu: Emulator;
  let ud: LabUserData;
  let origin: Vm;
  let nodeA: Vm; // node 1 of the fleet, the first instance
  let nodeX: Vm; // the impatient fleet's node, whose origin drops its NFS traffic
  let client: Vm; // an FS-Cache client of the fleet, through the stable address
  let eni: string;
  let role: RoleSession;
  let vendor: string;
  let probeServer: http.Server;
  let nodeB: Vm; // node 1's replacement: a new instance with node-a's tags
  let nodeXAfter: { exports: string; listening: string };
  let nodeBTags: Record<string, string>;
  let elastic1: Vm; // the elastic fleet's first node, in service from the start
  let elasticRole: RoleSession;
  let elastic2: Vm; // the elastic fleet's second node: it boots while the client reads through the virtual address
  /** When the lab (as the group, with the load balancer) put each elastic node into IPVS: the reader's lines then, and the node's READ bytes. */
  const registered: Record<string, { readerLines: number; nfsdReadBytes: number }> = {};
  let registering = false;
  let registrations: Promise<void> = Promise.resolve();
  const elasticTags = () => ({ ...ud.elasticNodeTags, 'aws:autoscaling:groupName': ELASTIC_GROUP });
  /** The instance EC2 had the stable interface attached to once node-a and node-x had booted. */
  let firstAttachment: string | undefined;
  let seeder: Vm; // the DataSeeder's instance, its source a prefix of a bucket in the emulator's S3
  const seed = seederUserData(SEED_TARGET);
  /** What the client saw through node-a, before the replacement. */
  let beforeReplacement: { source: string; read: string; servedBy: number };
  const iid: Record<string, string> = {};
  const boot: Record<string, CloudInitResult> = {};

  /** Whether a call is one of the S3 mirror's (its bucket's virtual host). */
  const isMirrorCall = (c: ApiCall) => c.service === 's3' && c.host.startsWith(`${MIRROR_BUCKET}.`);
  /** The calls a VM's aws CLI made, as the emulator recorded them, but the loader's fetch of its code and the S3 mirror's. */
  const callsOf = async (vm: Vm) => byCli(await emu.calls()).filter((c) => c.source === vm.ip && !isCodeFetch(c) && !isMirrorCall(c));
  /** The S3 mirror's calls of a VM's aws CLI. */
  const mirrorCallsOf = async (vm: Vm) => byCli(await emu.calls()).filter((c) => c.source === vm.ip && isMirrorCall(c));
  /** The loader's fetches of its code from the emulator's S3 (by the VM's own aws CLI). */
  const fetchesOf = async (vm: Vm) => byCli(await emu.calls()).filter((c) => c.source === vm.ip && isCodeFetch(c));
  /** Where EC2 (the emulator) has the stable interface attached. */
  const attachedTo = async () => (await emu.api('ec2', 'describe_network_interfaces', { NetworkInterfaceIds: [eni] }))
    .NetworkInterfaces[0].Attachment?.InstanceId as string | undefined;
  /** Launches an instance in the emulator's EC2 with the tags its group propagates; returns its id. */
  const launch = async (subnet: string, tags: Record<string, string>) => (await emu.api('ec2', 'run_instances', {
    ImageId: 'ami-12c6146b', MinCount: 1, MaxCount: 1, InstanceType: 'c7gn.medium', SubnetId: subnet,
    TagSpecifications: [{ ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }],
  })).Instances[0].InstanceId as string;
  /** The lab as EC2's data plane: the stable address goes to the VM of the instance the interface is attached to. */
  const followAttachment = async (from: Vm | undefined) => {
    const instance = await attachedTo();
    const to = lab.vms.find((v) => v.running && iid[v.name] === instance);
    if (!to) throw new Error(`the stable interface is attached to ${instance}, which no running VM is`);
    await lab.moveAddress(STABLE_IP, from, to);
  };

  /**
   * EC2's data plane for the attached interface's device, while `beforeAll` boots the VMs: once the emulator has the
   * stable interface attached to an instance, its VM gets a device of that interface's own with a default route (on
   * EC2 the OS configures the second interface: a device, its address and a default route of a higher metric), which
   * a node with mirrors waits for before it routes the mirrors' port by it. The address itself stays with the lab
   * (`followAttachment`). A dummy device: nothing is routed by it, as nothing would leave by the second interface here.
   */
  let devicesOn = false;
  const attachedDevices = async () => {
    const done = new Set<string>();
    while (devicesOn) {
      for (const c of byCli(await emu.calls())) {
        const instance = c.params.InstanceId;
        if (c.action !== 'AttachNetworkInterface' || c.status !== 200 || done.has(instance)) continue;
        const vm = lab.vms.find((v) => v.running && iid[v.name] === instance);
        if (!vm) continue;
        done.add(instance);
        await vm.execOk('ip link add eth1 type dummy && ip link set eth1 up && ip route add default dev eth1 metric 10001');
        progress(`${vm.name}: the attached interface's device (eth1) and its default route`);
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  };

  /** The origin's sha256 of each file of the elastic tree. */
  const originSums = async () => (await origin.execOk('cd /srv/efs/tree && sha256sum t*.bin')).trim().split('\n');
  /** Lines the client's reader has written so far (a file each, and one per pass). */
  const readerLines = async () => Number((await client.execOk('cat /root/elastic.sums 2>/dev/null | wc -l')).trim());
  const waitUntil = async (done: () => boolean | Promise<boolean>, ms: number, what: string) => {
    const end = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  /**
   * The lab as the elastic fleet's group and load balancer: once the emulator has an elastic node's launch hook
   * completed with CONTINUE, that node goes into IPVS (never before), and what the client had read by then is noted.
   */
  const registerElastic = async () => {
    while (registering) {
      for (const vm of lab.vms.filter((v) => v.name.startsWith('elastic-') && v.running && !registered[v.name])) {
        const hooks = (await callsOf(vm)).filter((c) => c.action === 'CompleteLifecycleAction' && c.status === 200 &&
          c.params.LifecycleHookName === 'efs-cache-serving' && c.params.LifecycleActionResult === 'CONTINUE');
        if (hooks.length === 0) continue;
        const state = { readerLines: await readerLines(), nfsdReadBytes: await nfsdReadBytes(vm) };
        await client.execOk(`ipvsadm -a -t ${ELASTIC_VIP}:2049 -r ${vm.ip}:2049 -m -w 1`);
        registered[vm.name] = state;
        progress(`${vm.name}: in IPVS, after its launch hook (the client had read ${state.readerLines} lines)`);
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  };

  /** Mounts a node's export from the origin VM and lists it (the probe the emulator waits for at each signal). */
  const probe = async (source: string): Promise<Probe> => {
    const vm = lab.vms.find((v) => v.ip === source);
    if (vm?.name === 'seeder') {
      const files = await origin.execOk(`cd /srv/efs${SEED_TARGET} 2>/dev/null && find . -type f | xargs -r sha256sum | sort || true`);
      return { vm: vm.name, served: false, detail: '', files: files.split('\n').filter(Boolean) };
    }
    const r = await origin.exec([
      'd=$(mktemp -d)',
      `if timeout 40 mount -t nfs4 -o ro,vers=4.1,soft,timeo=30,retrans=1,retry=0 ${source}:${ud.exportPath} "$d" 2>&1; then`,
      '  ls -A "$d"; umount "$d"',
      'else echo not-served; fi',
      'rmdir "$d"',
    ].join('\n'), { timeoutMs: 60_000 });
    const detail = r.stdout.trim().replace(/\s+/g, ' ');
    return { vm: vm?.name ?? source, served: r.code === 0 && /\bdata\b/.test(detail) && /\bwarm\b/.test(detail), detail };
  };

  beforeAll(async () => {
    ud = labUserData({ s3Mirror: { bucket: MIRROR_BUCKET, prefix: MIRROR_PREFIX }, enaExpress: true });
    lab = await Lab.create({ name: 'aws' });
    emu = await Emulator.start({ netns: lab.netns });
    for (const host of AWS_HOSTS) await lab.setDnsRecord(host, [lab.gateway]);
    const stackId = await emu.registerStack('Lab', [...ud.nodeTags.map((t) => t[SIGNAL_TAG]), ud.impatientNodeTags[SIGNAL_TAG], ud.elasticNodeTags[SIGNAL_TAG]]);
    // The lab's subnet in the emulator's EC2, so that the stable interface's address is one the lab can move.
    const vpc = (await emu.api('ec2', 'create_vpc', { CidrBlock: '10.77.0.0/16' })).Vpc.VpcId;
    const subnet = (await emu.api('ec2', 'create_subnet', { VpcId: vpc, CidrBlock: LAB_SUBNET, AvailabilityZone: 'us-east-1a' })).Subnet.SubnetId;
    const [first, second] = await Promise.all([[STABLE_IP, 'stable address of node 1'], ['10.77.0.101', 'stable address of node 2']]
      .map(async ([PrivateIpAddress, Description]) => (await emu.api('ec2', 'create_network_interface',
        { SubnetId: subnet, PrivateIpAddress, Description })).NetworkInterface.NetworkInterfaceId as string));
    eni = first;
    const { documents } = rolePolicies(ud.template, ud.nodeRoleId, {
      ...EMULATOR_VALUES, 'AWS::StackId': stackId, [`Ref:${ud.nodeInterfaceIds[0]}`]: first, [`Ref:${ud.nodeInterfaceIds[1]}`]: second,
    });
    role = await emu.instanceRole('NodeRole', documents);
    // The elastic fleet: its group (tags and hooks as synthesized) and its nodes' role, with exactly its statements.
    await emu.elasticGroup(ELASTIC_GROUP, ud.elasticGroupTags, subnet);
    elasticRole = await emu.instanceRole('ElasticRole', rolePolicies(ud.template, ud.elasticRoleId, { ...EMULATOR_VALUES, 'AWS::StackId': stackId }).documents);
    // Each user data's code in the stack's assets bucket, as `cdk deploy` publishes it, under the bucket's names.
    // node-x runs with the fleet's role (below): the impatient fleet renders the same code, so the same object.
    expect(parameters(ud.impatientNode).EFSC_CODE_KEY).toBe(parameters(ud.cacheNode).EFSC_CODE_KEY);
    const codeHosts = new Set<string>();
    for (const u of [ud.cacheNode, ud.impatientNode, ud.elasticNode, seed.userData]) for (const host of await emu.putCode(u)) codeHosts.add(host);
    for (const host of codeHosts) await lab.setDnsRecord(host, [lab.gateway]);
    // The seeder: its stack, its bucket (and an object outside its prefix), its role's session, the bucket's names.
    const seedStackId = await emu.registerStack(SEED_STACK, [seed.logicalId]);
    await emu.api('s3', 'create_bucket', { Bucket: SEED_BUCKET });
    for (const [Key, Body] of Object.entries({ ...SEED_FILES, 'other/d.txt': 'outside the source prefix\n' })) {
      await emu.api('s3', 'put_object', { Bucket: SEED_BUCKET, Key, Body });
    }
    const seederRole = await emu.instanceRole('SeederRole',
      rolePolicies(seed.template, seed.roleId, { ...EMULATOR_VALUES, 'AWS::StackId': seedStackId }).documents);
    for (const host of [`${SEED_BUCKET}.s3.amazonaws.com`, `${SEED_BUCKET}.s3.us-east-1.amazonaws.com`]) await lab.setDnsRecord(host, [lab.gateway]);
    // The fleet's S3 mirror: its bucket, the prefix's objects and one outside it, the bucket's names.
    await emu.api('s3', 'create_bucket', { Bucket: MIRROR_BUCKET });
    for (const [Key, Body] of Object.entries({ ...MIRROR_OBJECTS, 'other/secret.txt': 'outside the prefix\n' })) {
      await emu.api('s3', 'put_object', { Bucket: MIRROR_BUCKET, Key, Body });
    }
    for (const host of [`${MIRROR_BUCKET}.s3.amazonaws.com`, `${MIRROR_BUCKET}.s3.us-east-1.amazonaws.com`]) await lab.setDnsRecord(host, [lab.gateway]);
    // Each signal waits for the probe: does the signalling node serve its export at this moment?
    const socket = path.join(lab.dir, 'probe.sock');
    probeServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        const { source } = JSON.parse(body) as { source: string };
        probe(source).then((p) => res.end(JSON.stringify(p)), (e) => res.end(JSON.stringify({ error: String(e) })));
      });
    });
    await new Promise<void>((resolve) => probeServer.listen(socket, resolve));
    await emu.probeSignals(socket);
    vendor = vendorData(emu.ca);

    origin = await lab.startVm({ name: 'origin', ip: ORIGIN_IP, userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME], cpus: 1 });
    // The elastic fleet's first node boots beside the origin, on the other core (its mount waits for the origin): the
    // node completes its group's launch hook once it serves.
    iid['elastic-1'] = await launch(subnet, ud.elasticNodeTags);
    elastic1 = await lab.startVm({ name: 'elastic-1', ip: ELASTIC_1_IP, userData: ud.elasticNode, vendorData: vendor, cpus: 1,
      instance: { instanceId: iid['elastic-1'], tags: elasticTags(), role: { name: 'ElasticRole', credentials: elasticRole }, targetLifecycleState: 'InService' } });
    boot.origin = await origin.waitForCloudInit();
    await origin.execOk([
      'head -c 24M /dev/urandom > /srv/efs/warm/model.bin',
      'for i in $(seq 1 20); do head -c 64K /dev/urandom > /srv/efs/data/f$i.bin; done',
      `mkdir -p /srv/efs/tree && for i in $(seq -w 1 ${ELASTIC_TREE_FILES}); do head -c 1M /dev/urandom > /srv/efs/tree/t$i.bin; done`,
      'sync',
      // The impatient node's NFS traffic never reaches the origin (nothing else of it is dropped: its signal goes out).
      'tc qdisc add dev eth0 ingress',
      `tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip src ${NODE_X_IP}/32 match ip dport 2049 0xffff action drop`,
    ].join(' && '));

    devicesOn = true;
    const devices = attachedDevices();
    const nodeATags = { ...ud.nodeTags[0], [ENI_TAG]: eni };
    iid['node-a'] = await launch(subnet, nodeATags);
    iid['node-x'] = await launch(subnet, ud.impatientNodeTags);
    nodeA = await lab.startVm({ name: 'node-a', ip: NODE_A_IP, userData: ud.cacheNode, vendorData: vendor, cpus: 1,
      instance: { instanceId: iid['node-a'], tags: nodeATags, role: { name: 'NodeRole', credentials: role } } });
    // node-x runs with the fleet's role: the impatient fleet's own role grants the same SignalResource on the stack.
    nodeX = await lab.startVm({ name: 'node-x', ip: NODE_X_IP, userData: ud.impatientNode, vendorData: vendor, cpus: 1,
      instance: { instanceId: iid['node-x'], tags: ud.impatientNodeTags, role: { name: 'NodeRole', credentials: role } } });
    [boot['node-a'], boot['node-x'], boot['elastic-1']] = await Promise.all([nodeA.waitForCloudInit(), nodeX.waitForCloudInit({ expectError: true }),
      elastic1.waitForCloudInit()]);
    firstAttachment = await attachedTo();
    await followAttachment(undefined);
    await lab.setDnsRecord(FLEET_NAME, [STABLE_IP]);
    // What node-x left behind once its user data ended: no export, nothing listening on 2049.
    nodeXAfter = { exports: (await nodeX.exec('exportfs -v')).stdout.trim(), listening: (await nodeX.exec("ss -Hltn 'sport = :2049'")).stdout.trim() };
    await nodeX.kill(); // its part is over (signal and log kept): the lab's two cores go to the rest
    // The client mounts the fleet through the stable address while node-a holds it. Meanwhile node 1's replacement
    // boots, a new instance with the same tags (booted early only to share the lab's time: an attach it tries before
    // node-a's instance is terminated is refused, in use, and retried).
    nodeBTags = { ...ud.nodeTags[0], [ENI_TAG]: eni };
    iid['node-b'] = await launch(subnet, nodeBTags);
    client = await lab.startVm({ name: 'client', ip: '10.77.0.21', userData: ud.fleetClient, cpus: 1, nvmeDisks: [
      { sizeMiB: 384, serial: 'c-is-0', blank: true }, { sizeMiB: 384, serial: 'c-is-1', blank: true }] });
    nodeB = await lab.startVm({ name: 'node-b', ip: NODE_B_IP, userData: ud.cacheNode, vendorData: vendor, cpus: 1,
      instance: { instanceId: iid['node-b'], tags: nodeBTags, role: { name: 'NodeRole', credentials: role } } });
    iid.seeder = await launch(subnet, { Name: 'seeder' });
    seeder = await lab.startVm({ name: 'seeder', ip: SEEDER_IP, userData: seed.userData, vendorData: vendor, cpus: 1,
      instance: { instanceId: iid.seeder, role: { name: 'SeederRole', credentials: seederRole } } });
    // The seeder powers itself off a minute after its signal: its boot is watched from now on, not once the client
    // and the elastic fleet are up (by then it may be off). A failure is thrown where it is awaited, below.
    const seederBoot = seeder.waitForCloudInit();
    seederBoot.catch(() => undefined);
    boot.client = await client.waitForCloudInit();
    beforeReplacement = {
      source: (await client.execOk('findmnt -no SOURCE /mnt/efs')).trim(),
      read: await sha256(client, '/mnt/efs/data/f1.bin'),
      servedBy: await nfsdReadBytes(nodeA),
    };
    // node-a's instance ends as soon as the client has read through it: each attach node-b tries before then is one more
    // start of its aws CLI (about 20 guest CPU-seconds each, retried every 15 s), which the lab's two cores pay for.
    await emu.api('ec2', 'terminate_instances', { InstanceIds: [iid['node-a']] }); // EC2 detaches its secondary interface
    await nodeA.kill();
    // The elastic fleet. IPVS stands in for the load balancer, on the client (the lab host's kernel has no IPVS): a
    // virtual service at ELASTIC_VIP, round robin, NAT to the nodes, the client's own connections masqueraded (as
    // kube-proxy does for a host's own traffic to a virtual address) so that the nodes' replies come back through it.
    // The lab plays the group: it puts a node into IPVS only once the node completed its launch hook (registerElastic).
    await client.execOk([
      'modprobe ip_vs', 'modprobe ip_vs_rr', 'sysctl -qw net.ipv4.vs.conntrack=1 net.ipv4.vs.expire_nodest_conn=1',
      `ip link add elb0 type dummy`, `ip addr add ${ELASTIC_VIP}/32 dev elb0`, 'ip link set elb0 up',
      'nft add table ip elb', `nft 'add chain ip elb post { type nat hook postrouting priority 100; }'`,
      `nft add rule ip elb post ip daddr '{ ${ELASTIC_1_IP}, ${ELASTIC_2_IP} }' tcp dport 2049 masquerade`,
      `ipvsadm -A -t ${ELASTIC_VIP}:2049 -s rr`,
    ].join(' && '));
    registering = true;
    registrations = registerElastic();
    await waitUntil(() => registered['elastic-1'] !== undefined, 60_000, 'elastic-1 in IPVS');
    await client.execOk(`mkdir -p /mnt/elastic && mount -t nfs4 -o vers=4.1,ro,hard,timeo=100,retrans=3 ${ELASTIC_VIP}:/efs /mnt/elastic`, { timeoutMs: 3 * MIN });
    // The reader: the tree, again and again (the page cache dropped before each pass, so every file is read from the
    // fleet), one line per file, until told to stop.
    await client.execOk('cat > /root/elastic-reader.sh', { input: [
      'while [ ! -e /root/elastic.stop ]; do',
      '  echo 1 > /proc/sys/vm/drop_caches',
      '  for f in /mnt/elastic/tree/t*.bin; do',
      '    if s=$(sha256sum "$f"); then echo "$s" >> /root/elastic.sums; else echo "$f $?" >> /root/elastic.err; fi',
      '    sleep 1',
      '  done',
      '  echo pass >> /root/elastic.sums',
      'done',
      'touch /root/elastic.done',
    ].join('\n') + '\n' });
    await client.execOk('systemd-run --unit elastic-reader bash /root/elastic-reader.sh');
    await waitUntil(async () => (await readerLines()) > 0, 2 * MIN, 'the reader\'s first file');
    // The second node boots while the rest boots, the other tests run and the client reads.
    iid['elastic-2'] = await launch(subnet, ud.elasticNodeTags);
    elastic2 = await lab.startVm({ name: 'elastic-2', ip: ELASTIC_2_IP, userData: ud.elasticNode, vendorData: vendor, cpus: 1,
      instance: { instanceId: iid['elastic-2'], tags: elasticTags(), role: { name: 'ElasticRole', credentials: elasticRole }, targetLifecycleState: 'InService' } });
    boot.seeder = await seederBoot;
    await seeder.kill(); // it would power off a minute after its signal (its shutdown behavior terminates it)
    boot['node-b'] = await nodeB.waitForCloudInit();
    devicesOn = false;
    await devices;
    await followAttachment(nodeA);

  }, 40 * MIN);

  afterAll(async () => {
    registering = false;
    await registrations;
    await tearDown(emu, 'lab-calls.json', []);
    probeServer?.close();
    await lab?.destroy();
    if (lab) fs.rmSync(path.join(lab.dir, 'probe.sock'), { force: true });
  });

  test('the origin, node-a, the client, the seeder and elastic-1 finished their user data without errors; node-x failed', () => {
    for (const name of ['origin', 'node-a', 'client', 'seeder', 'elastic-1']) {
      expect({ name, status: boot[name].status, errors: boot[name].errors }).toEqual({ name, status: 'done', errors: [] });
    }
    expect(boot['node-x'].status).toBe('error');
    for (const [name, r] of Object.entries(boot)) progress(`${name}: user data done ${r.seconds.toFixed(0)} s after power on`);
  });

  test('the code of node-a, node-x, node-b and the seeder: fetched from the stack\'s assets bucket by each VM\'s own CLI with its role\'s session, once, and kept', async () => {
    for (const [vm, userData] of [[nodeA, ud.cacheNode], [nodeX, ud.impatientNode], [nodeB, ud.cacheNode], [seeder, seed.userData]] as const) {
      const { EFSC_CODE_BUCKET: bucket, EFSC_CODE_KEY: key } = parameters(userData);
      const fetches = await fetchesOf(vm);
      expect({ vm: vm.name, fetches: fetches.map((c) => `${c.host} ${c.action} ${c.status}`) })
        .toEqual({ vm: vm.name, fetches: [expect.stringMatching(new RegExp(`^${bucket}\\.s3\\.(us-east-1\\.)?amazonaws\\.com GET /${key} 200$`))] });
      expect(fetches[0].client).toMatch(/^aws-cli\/2\./);
    }
    // node-b still runs: what it kept is the code, byte for byte (the loader ran it only after this check).
    const kept = keptCode(ud.cacheNode)!;
    expect((await nodeB.execOk(`sha256sum < ${kept.path}`)).trim()).toBe(`${parameters(ud.cacheNode).EFSC_CODE_SHA256}  -`);
  });

  test('node-a: the stable interface attached to the instance that booted, then one SUCCESS signal, sent while another VM could mount its export', async () => {
    const calls = await callsOf(nodeA);
    progress(`node-a's calls: ${actions(calls).join(', ')}`);
    // The real CLI, v2, over TLS to the emulator's names: nothing in the scripts was redirected.
    for (const c of calls) expect(c.client).toMatch(/^aws-cli\/2\./);
    expect(actions(calls)).toEqual(['DescribeNetworkInterfaces 200', 'AttachNetworkInterface 200', 'DescribeNetworkInterfaces 200', 'SignalResource 200']);
    // The fleet has enaExpress: Debian's aws CLI (2.9.19) asks for ENA Express (SRD) on the attachment, and for nothing about UDP.
    expect(calls[1].params).toEqual({ InstanceId: iid['node-a'], NetworkInterfaceId: eni, DeviceIndex: '1', 'EnaSrdSpecification.EnaSrdEnabled': 'true' });
    expect(calls[3].params).toEqual({ StackName: 'Lab', LogicalResourceId: ud.nodeTags[0][SIGNAL_TAG], UniqueId: iid['node-a'], Status: 'SUCCESS' });
    expect(calls[3].probe).toMatchObject({ vm: 'node-a', served: true });
    expect(firstAttachment).toBe(iid['node-a']);
    // Whatever the node publishes goes through the CloudWatch agent (StatsD): the scripts call no CloudWatch API.
    expect(calls.filter((c) => c.service === 'monitoring')).toEqual([]);
    // Its credentials came from the metadata service, as an instance profile's (IMDSv2: a token first).
    const asked = lab.imdsRequests(nodeA).map((r) => `${r.method} ${r.path} ${r.status}`);
    expect(asked).toEqual(expect.arrayContaining(['PUT /latest/api/token 200', 'GET /latest/meta-data/iam/security-credentials/NodeRole 200']));
  });

  test('node-x, whose origin is unreachable: exactly one FAILURE signal, as its instance, while nothing was served; the reason in its log', async () => {
    const calls = await callsOf(nodeX);
    expect(actions(calls)).toEqual(['SignalResource 200']);
    expect(calls[0].params).toEqual({ StackName: 'Lab', LogicalResourceId: ud.impatientNodeTags[SIGNAL_TAG], UniqueId: iid['node-x'], Status: 'FAILURE' });
    expect(calls[0].probe).toMatchObject({ vm: 'node-x', served: false });
    expect(boot['node-x'].output).toMatch(/efs-cache: FATAL: .*(origin|mount)/);
    // The harness's account of a failed boot (the canary of test/heavy/lab/harness/diagnose.ts): the FATAL line among the
    // lines it printed and that npm test prints again at its end, the whole journal kept in the checkout.
    const kept = path.join(FAILURES_DIR, lab.name, 'node-x');
    const diagnosis = fs.readFileSync(path.join(kept, DIAGNOSIS_FILE), 'utf8');
    expect(diagnosis.split('\n')[0]).toBe(`${lab.name}/node-x: expected boot error`);
    expect(summarize(diagnosis).join('\n')).toMatch(/efs-cache FATAL and WARN lines .*: FATAL: .*(origin|mount)/);
    expect(fs.readFileSync(path.join(kept, 'journal.txt'), 'utf8')).toMatch(/FATAL: .*(origin|mount)/);
    // The console from the VM's first boot on: a restore of the template (template.ts), or a power on (LAB_RESTORE=off).
    expect(fs.readFileSync(path.join(kept, 'console.log'), 'utf8')).toMatch(restoreEnabled() ? /lab: restored from \S+/ : /lab: power on/);
  });

  test('node-x, whose origin is unreachable: once its user data ended, nothing is exported and nothing listens on 2049', () => {
    expect(nodeXAfter).toEqual({ exports: '', listening: '' });
  });

  test('the client mounted the fleet through the stable address and read the origin\'s bytes from node-a', async () => {
    expect(beforeReplacement.source).toMatch(new RegExp(`^${FLEET_NAME.replace(/\./g, '\\.')}:`));
    expect(beforeReplacement.read).toBe(await sha256(origin, '/srv/efs/data/f1.bin'));
    expect(beforeReplacement.servedBy).toBeGreaterThanOrEqual(64 * 1024);
  });

  test('the seeder: the bucket\'s prefix fetched by its own CLI, then one SUCCESS signal, with every file already in the origin', async () => {
    const calls = await callsOf(seeder);
    progress(`seeder's calls: ${actions(calls).join(', ')}`);
    for (const c of calls) expect(c.client).toMatch(/^aws-cli\/2\./);
    const reads = calls.filter((c) => c.service === 's3');
    expect(reads.length).toBeGreaterThanOrEqual(1 + Object.keys(SEED_FILES).length); // a listing, then each object
    expect(reads.every((c) => c.status === 200 && c.host.startsWith(`${SEED_BUCKET}.s3.`))).toBe(true);
    const signals = calls.filter((c) => c.action === 'SignalResource');
    expect(signals.map((c) => c.params)).toEqual([{ StackName: SEED_STACK, LogicalResourceId: seed.logicalId, UniqueId: iid.seeder, Status: 'SUCCESS' }]);
    expect(calls[calls.length - 1]).toBe(signals[0]);
    // At the moment it signalled, the origin held the prefix byte for byte, and nothing from outside it.
    const sha = (b: string) => crypto.createHash('sha256').update(b).digest('hex');
    const want = Object.entries(SEED_FILES).map(([k, b]) => `${sha(b)}  ./${k.slice('raw/'.length)}`).sort();
    expect(signals[0].probe).toEqual({ vm: 'seeder', served: false, detail: '', files: want });
    expect(boot.seeder.output).toMatch(/efs-cache: verified: all 3 files/);
  });

  describe('a replacement: the instance of node 1 terminated, a new instance with the same tags booted', () => {
    test('the new instance: the interface attached to it after node-a\'s instance was terminated (never before), then SUCCESS once, while serving', async () => {
      expect({ status: boot['node-b'].status, errors: boot['node-b'].errors }).toEqual({ status: 'done', errors: [] });
      const calls = await callsOf(nodeB);
      progress(`node-b's calls: ${actions(calls).join(', ')}`);
      const terminated = (await emu.calls()).find((c) => c.action === 'TerminateInstances')!.t;
      const refused = calls.filter((c) => c.action === 'AttachNetworkInterface' && c.status === 400);
      expect(refused.every((c) => c.t < terminated)).toBe(true);
      expect(actions(calls)).toEqual(['DescribeNetworkInterfaces 200', ...refused.map(() => 'AttachNetworkInterface 400'),
        'AttachNetworkInterface 200', 'DescribeNetworkInterfaces 200', 'SignalResource 200']);
      const attach = calls[1 + refused.length];
      expect(attach.t).toBeGreaterThan(terminated);
      expect(attach.params).toEqual({ InstanceId: iid['node-b'], NetworkInterfaceId: eni, DeviceIndex: '1', 'EnaSrdSpecification.EnaSrdEnabled': 'true' });
      const signal = calls[calls.length - 1];
      expect(signal.params).toMatchObject({ LogicalResourceId: ud.nodeTags[0][SIGNAL_TAG], UniqueId: iid['node-b'], Status: 'SUCCESS' });
      expect(signal.probe).toMatchObject({ vm: 'node-b', served: true });
      expect(await attachedTo()).toBe(iid['node-b']);
      // One signal per instance in all: node-a's and node-b's to the same resource, node-x's to its own.
      // (The elastic fleet's signals are its tests'.)
      const signals = byCli(await emu.calls()).filter((c) => c.action === 'SignalResource' && c.params.LogicalResourceId !== ud.elasticNodeTags[SIGNAL_TAG])
        .map((c) => `${c.params.LogicalResourceId} ${c.params.UniqueId} ${c.params.Status}`);
      expect(signals.sort()).toEqual([
        `${ud.nodeTags[0][SIGNAL_TAG]} ${iid['node-a']} SUCCESS`,
        `${ud.nodeTags[0][SIGNAL_TAG]} ${iid['node-b']} SUCCESS`,
        `${ud.impatientNodeTags[SIGNAL_TAG]} ${iid['node-x']} FAILURE`,
        `${seed.logicalId} ${iid.seeder} SUCCESS`,
      ].sort());
    });

    test('the client that mounted the stable address reads on, through the new instance (same fsid: no stale handle)', async () => {
      const before = await nfsdReadBytes(nodeB);
      expect(await sha256(client, '/mnt/efs/data/f2.bin')).toBe(await sha256(origin, '/srv/efs/data/f2.bin'));
      expect(await nfsdReadBytes(nodeB) - before).toBeGreaterThanOrEqual(64 * 1024); // f2 came from node-b
      expect(await client.execOk('dmesg')).not.toMatch(/stale/i);
    });
  });

  describe('an S3 mirror (Mirror.s3): the prefix site/ of a bucket in the emulator\'s S3, synced by each node\'s own CLI', () => {
    const listings = (calls: ApiCall[]) => calls.filter((c) => c.params['list-type'] === '2');
    const fetches = (calls: ApiCall[]) => calls.filter((c) => c.action.startsWith('GET /') && c.params['list-type'] === undefined);
    /** What a tree holds: each file's path and the sha256 of its bytes, sorted. */
    const tree = async (vm: Vm, dir: string) => (await vm.execOk(
      `cd ${dir} && find . -type f | LC_ALL=C sort | while read -r f; do printf '%s %s\\n' "$f" "$(sha256sum < "$f" | cut -c1-64)"; done`)).trim();
    const want = (objects: Record<string, string>) => Object.keys(objects).sort().map((k) =>
      `./${k.slice(MIRROR_PREFIX.length)} ${crypto.createHash('sha256').update(objects[k]).digest('hex')}`).join('\n');
    /** One sync of node-b's mirrors, as its timer starts it; whether the unit succeeded. */
    const sync = async () => (await nodeB.exec('systemctl start efs-cache-mirror.service', { timeoutMs: 5 * MIN })).code === 0;
    /**
     * After one sync of node-b, polls the client's view of the mirror until it holds `objects`, at most MIRROR_BOUND_MS;
     * the seconds it took.
     */
    const reaches = async (objects: Record<string, string>) => {
      expect(await sync()).toBe(true);
      expect(await tree(nodeB, '/mirror/site')).toBe(want(objects));
      const t0 = Date.now();
      let seen = await tree(client, '/mnt/site');
      while (seen !== want(objects) && Date.now() - t0 < MIRROR_BOUND_MS) {
        await client.execOk('sleep 2');
        seen = await tree(client, '/mnt/site');
      }
      expect(seen).toBe(want(objects));
      return Math.round((Date.now() - t0) / 1000);
    };
    const objects = { ...MIRROR_OBJECTS };

    test('node-a and node-b: the first sync before serving, a listing of site/ and a fetch of each object, with the role\'s statements, before their signal; nothing outside the prefix', async () => {
      for (const vm of [nodeA, nodeB]) {
        const signal = byCli(await emu.calls()).find((c) => c.source === vm.ip && c.action === 'SignalResource')!;
        const calls = await mirrorCallsOf(vm);
        const first = calls.filter((c) => c.t < signal.t);
        progress(`${vm.name}: S3 mirror calls before its signal: ${first.map((c) => `${c.action} ${c.status}`).join(', ')}`);
        for (const c of calls) expect(c.client).toMatch(/^aws-cli\/2\./);
        // The first sync (part of the boot, before nfsd serves): a listing, then each object once. A timer's sync may
        // follow before the signal: a listing alone (nothing changed).
        expect(listings(first).length).toBeGreaterThanOrEqual(1);
        expect(listings(first).map((c) => `${c.params.prefix} ${c.status}`)).toEqual(listings(first).map(() => 'site/ 200'));
        expect(fetches(first).map((c) => `${c.action} ${c.status}`).sort()).toEqual(Object.keys(MIRROR_OBJECTS).sort().map((k) => `GET /${k} 200`));
        expect(calls.filter((c) => c.action.includes('other/') || (listings([c]).length > 0 && c.params.prefix !== MIRROR_PREFIX))).toEqual([]);
        // It routed the mirrors' port by the attached interface as soon as that had its route (the lab's device).
        expect(boot[vm.name].output).not.toMatch(/no default route by the attached interface/);
      }
    });

    test('a client mounts it through the stable address (node-b\'s now) on the mirrors\' port and reads every object byte for byte', async () => {
      await client.execOk(`mkdir -p /mnt/site && (mountpoint -q /mnt/site || mount -t nfs4 -o vers=4.1,port=2050,ro ${STABLE_IP}:/mirror/site /mnt/site)`, { timeoutMs: 3 * MIN });
      expect(await tree(client, '/mnt/site')).toBe(want(objects));
      expect(await tree(nodeB, '/mirror/site')).toBe(want(objects));
    });

    test('a changed, an added and a removed object: the next sync copies them, and the client sees them within its attribute cache', async () => {
      objects['site/index.html'] = '<h1>version 2</h1>\n';
      objects['site/new/b.txt'] = 'added at the origin\n';
      delete objects['site/old.txt'];
      await emu.api('s3', 'put_object', { Bucket: MIRROR_BUCKET, Key: 'site/index.html', Body: objects['site/index.html'] });
      await emu.api('s3', 'put_object', { Bucket: MIRROR_BUCKET, Key: 'site/new/b.txt', Body: objects['site/new/b.txt'] });
      await emu.api('s3', 'delete_object', { Bucket: MIRROR_BUCKET, Key: 'site/old.txt' });
      const s = await reaches(objects);
      progress(`S3 mirror: a changed, an added and a removed object reached the client ${s} s after the sync`);
    });

    test('a failed listing (node-b\'s S3 traffic refused) keeps the last copy served and is counted; once S3 answers again the next sync catches up', async () => {
      const failures = async () => Number((await nodeB.execOk('cat /run/efs-cache/mirror/failures 2>/dev/null || echo 0')).trim());
      const f0 = await failures();
      const served = want(objects);
      await nodeB.execOk(`nft add table inet lab_s3 && nft add chain inet lab_s3 out '{ type filter hook output priority 0; }' && ` +
        `nft add rule inet lab_s3 out ip daddr ${lab.gateway} tcp dport 443 reject with tcp reset`);
      try {
        objects['site/index.html'] = '<h1>version 3</h1>\n';
        delete objects['site/css/a.css'];
        await emu.api('s3', 'put_object', { Bucket: MIRROR_BUCKET, Key: 'site/index.html', Body: objects['site/index.html'] });
        await emu.api('s3', 'delete_object', { Bucket: MIRROR_BUCKET, Key: 'site/css/a.css' });
        expect(await sync()).toBe(false); // the unit fails, the timer goes on, the copy stays served
        expect(await failures()).toBe(f0 + 1);
        // The copy as it was: nothing fetched, nothing removed; the client reads it.
        expect(await tree(nodeB, '/mirror/site')).toBe(served);
        expect(await tree(client, '/mnt/site')).toBe(served);
        expect(await nodeB.execOk('journalctl -b -o cat -u efs-cache-mirror.service | tail -n 50')).toMatch(/WARN/);
      } finally {
        await nodeB.execOk('nft delete table inet lab_s3');
      }
      const s = await reaches(objects);
      progress(`S3 mirror: after the failed listing, the next sync's changes reached the client ${s} s after it`);
    });

    test('IAM: node-b\'s role may list only that prefix and read only its objects: another prefix and an object outside it are refused (403)', async () => {
      // Each call starts the CLI's python: on a slow machine under the lab's load one took more than the 2 minutes exec
      // allows by default, so the bound is that of a hang, not of a wait.
      const list = await nodeB.exec(`aws s3api list-objects-v2 --region us-east-1 --bucket ${MIRROR_BUCKET} --prefix other/`, { timeoutMs: 10 * MIN });
      const get = await nodeB.exec(`aws s3api get-object --region us-east-1 --bucket ${MIRROR_BUCKET} --key other/secret.txt /tmp/secret.txt`, { timeoutMs: 10 * MIN });
      expect([list.code, get.code].every((c) => c !== 0)).toBe(true);
      expect(list.stderr + get.stderr).toMatch(/AccessDenied/);
      const refused = (await mirrorCallsOf(nodeB)).filter((c) => c.action.includes('other/') || c.params.prefix === 'other/');
      expect(refused.map((c) => c.status)).toEqual([403, 403]);
      expect((await nodeB.exec('test -e /tmp/secret.txt')).code).not.toBe(0);
    });
  });
  describe('an elastic fleet: one Auto Scaling group behind the load balancer (IPVS on the client), grown and shrunk under a reader', () => {
    const hooksOf = async (vm: Vm) => (await callsOf(vm)).filter((c) => c.action === 'CompleteLifecycleAction');

    test('elastic-1: its launch hook completed (CONTINUE) by its own CLI while another VM could mount its export, before its SUCCESS signal', async () => {
      const calls = await callsOf(elastic1);
      expect(actions(calls)).toEqual(['CompleteLifecycleAction 200', 'SignalResource 200']);
      expect(calls[0].params).toEqual({
        AutoScalingGroupName: ELASTIC_GROUP, LifecycleHookName: 'efs-cache-serving', InstanceId: iid['elastic-1'], LifecycleActionResult: 'CONTINUE',
      });
      expect(calls[0].client).toMatch(/^aws-cli\/2\./);
      expect(calls[0].probe).toMatchObject({ vm: 'elastic-1', served: true });
      expect(calls[1].params).toMatchObject({ LogicalResourceId: ud.elasticNodeTags[SIGNAL_TAG], Status: 'SUCCESS' });
    });

    test('(a) elastic-2 joins the virtual service only after its bootstrap completed the launch hook, while serving; nothing reached it before', async () => {
      boot['elastic-2'] = await elastic2.waitForCloudInit();
      expect({ status: boot['elastic-2'].status, errors: boot['elastic-2'].errors }).toEqual({ status: 'done', errors: [] });
      await waitUntil(() => registered['elastic-2'] !== undefined, 60_000, 'elastic-2 in IPVS');
      const calls = await callsOf(elastic2);
      expect(actions(calls)).toEqual(['CompleteLifecycleAction 200', 'SignalResource 200']);
      expect(calls[0].params).toMatchObject({ LifecycleHookName: 'efs-cache-serving', InstanceId: iid['elastic-2'], LifecycleActionResult: 'CONTINUE' });
      expect(calls[0].probe).toMatchObject({ vm: 'elastic-2', served: true });
      // The client was reading all along, and elastic-2 had served no READ when it joined.
      expect(registered['elastic-2'].readerLines).toBeGreaterThan(registered['elastic-1'].readerLines);
      expect(registered['elastic-2'].nfsdReadBytes).toBe(0);
      expect(await client.execOk(`ipvsadm -Ln -t ${ELASTIC_VIP}:2049`)).toContain(`${ELASTIC_2_IP}:2049`);
      // The client's one connection is still elastic-1's (a new node takes new connections only).
      expect((await elastic1.execOk("ss -Htn state established '( sport = :2049 )'")).trim()).not.toBe('');
    }, 15 * MIN);

    test('(b) elastic-1 drained and removed mid-read: the reads complete, byte-identical, on the same mount; its terminate hook completed only once it no longer served', async () => {
      const mount = async () => (await client.execOk('findmnt -no SOURCE,FSTYPE /mnt/elastic && stat -c %d /mnt/elastic')).trim();
      const before = await mount();
      const e2ReadBefore = await nfsdReadBytes(elastic2);
      // The group takes elastic-1 out: the load balancer first (no new connection: weight 0), its deregistration delay,
      // then the instance's target state is Terminated and its terminate hook waits for the node.
      await client.execOk(`ipvsadm -e -t ${ELASTIC_VIP}:2049 -r ${ELASTIC_1_IP}:2049 -m -w 0`);
      const linesAtDrain = await readerLines();
      await new Promise((r) => setTimeout(r, 3000));
      lab.setInstance(elastic1, { instanceId: iid['elastic-1'], tags: elasticTags(), role: { name: 'ElasticRole', credentials: elasticRole }, targetLifecycleState: 'Terminated' });
      const terminatedAt = Date.now() / 1000;
      await waitUntil(async () => (await hooksOf(elastic1)).some((c) => c.params.LifecycleHookName === 'efs-cache-drained'), 3 * MIN, 'elastic-1\'s terminate hook');
      const drained = (await hooksOf(elastic1)).filter((c) => c.params.LifecycleHookName === 'efs-cache-drained');
      const journal = async () => elastic1.execOk('journalctl -o cat -u efs-cache-drain --no-pager');
      await waitUntil(async () => /\bdrained$/m.test(await journal()), 60_000, 'elastic-1\'s drain to end');
      const drainLog = await journal();
      // Then the group terminates it: out of IPVS, the instance gone.
      await client.execOk(`ipvsadm -d -t ${ELASTIC_VIP}:2049 -r ${ELASTIC_1_IP}:2049`);
      await emu.api('ec2', 'terminate_instances', { InstanceIds: [iid['elastic-1']] });
      await elastic1.kill();
      // The reader reads on, through elastic-2 alone: a whole pass more.
      const linesAfter = await readerLines();
      await waitUntil(async () => (await readerLines()) >= linesAfter + ELASTIC_TREE_FILES + 1, 10 * MIN, 'a pass more of the reader');
      await client.execOk('touch /root/elastic.stop');
      await waitUntil(async () => (await client.exec('test -e /root/elastic.done')).code === 0, 5 * MIN, 'the reader to stop');
      progress(`elastic: the reader had written ${linesAtDrain} lines when elastic-1 was deregistered, ${linesAfter} when it was gone`);

      expect(drained.map((c) => `${c.status} ${c.params.LifecycleActionResult} ${c.params.InstanceId}`)).toEqual([`200 CONTINUE ${iid['elastic-1']}`]);
      expect(drained[0].t).toBeGreaterThan(terminatedAt);
      // At that moment another VM could not mount elastic-1's export: it had stopped serving first.
      expect(drained[0].probe).toMatchObject({ vm: 'elastic-1', served: false });
      expect(drainLog).toMatch(/draining: the Auto Scaling group terminates this node\n[\s\S]*completed the lifecycle action of efs-cache-drained with CONTINUE\n[\s\S]*drained\n/);
      // Mid-read: the reader was busy when the node went, and went on.
      expect(linesAtDrain).toBeGreaterThan(0);
      expect(linesAfter).toBeGreaterThan(linesAtDrain);
      // No read failed, every file read is the origin's, and the mount is the one from before (same fsid: no stale handle).
      expect((await client.execOk('cat /root/elastic.err 2>/dev/null || true')).trim()).toBe('');
      const origin = new Map((await originSums()).map((l) => [l.split(/\s+/)[1].replace(/^.*\//, ''), l.split(/\s+/)[0]]));
      const read = (await client.execOk('grep -v ^pass /root/elastic.sums')).trim().split('\n');
      expect(read.length).toBeGreaterThanOrEqual(2 * ELASTIC_TREE_FILES);
      for (const l of read) {
        const [sum, file] = l.split(/\s+/);
        expect({ file, sum }).toEqual({ file, sum: origin.get(file.replace(/^.*\//, '')) });
      }
      expect(await mount()).toBe(before);
      // elastic-2 served what came after.
      expect(await nfsdReadBytes(elastic2)).toBeGreaterThan(e2ReadBefore);
    }, 25 * MIN);
  });
});
