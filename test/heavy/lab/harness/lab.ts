import { ChildProcess, spawn } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { failedTests } from './diagnose';
import { CACHE_DIR, findImage, LabImage, LAB_DIR } from './image';
import { elapsed, progress } from './log';
import { isAlive, run, runSync, sleep } from './proc';
import { keptCodeVendorData } from './user-data';
import { InstanceMetadata, Vm, VmOptions } from './vm';

export interface LabOptions {
  /** Short name for logs and the network namespace; [a-z0-9-]. */
  readonly name: string;
  /** First three octets of the lab's /24; the host side (DNS, gateway) is .1. @default '10.77.0' */
  readonly subnet?: string;
  /** @default - the image build.sh produced for the current recipe (or LAB_IMAGE_DIR) */
  readonly image?: LabImage;
}

export interface LinkOptions {
  /** One-way delay added to what the VM sends, in milliseconds. */
  readonly delayMs?: number;
  /** Rate cap on what the VM sends, in Mbit/s. */
  readonly rateMbit?: number;
  /** Random packet loss, percent. */
  readonly lossPercent?: number;
}

const REAPER = path.join(LAB_DIR, 'harness', 'reaper.sh');
const IMDS = path.join(LAB_DIR, 'harness', 'imds.py');
/** The instance metadata service's address, as on EC2. */
export const IMDS_ADDRESS = '169.254.169.254';
/** The region the lab's metadata service reports. */
export const LAB_REGION = 'us-east-1';

/** One request the lab's metadata service answered. */
export interface ImdsRequest {
  /** Seconds since the epoch. */
  readonly t: number;
  readonly source: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
}
const live = new Set<Lab>();
let handlersInstalled = false;

/**
 * A private network for lab VMs: a network namespace of its own with a bridge, a DNS server standing in for Route 53
 * and EFS names, and the VMs' taps. Nothing leaves the namespace. destroy() (or the exit of this process, however
 * it happens) removes every VM, the namespace and the temporary files.
 */
export class Lab {
  /** Makes the namespace, bridge and DNS server. */
  static async create(options: LabOptions): Promise<Lab> {
    if (!/^[a-z0-9-]{1,24}$/.test(options.name)) throw new Error(`lab name must match [a-z0-9-]{1,24}: ${options.name}`);
    const image = options.image ?? findImage();
    installExitHandlers();
    runSync('bash', [REAPER, 'sweep']);
    const lab = new Lab(options, image);
    live.add(lab);
    try {
      await lab.setUp();
    } catch (e) {
      await lab.destroy();
      throw e;
    }
    return lab;
  }

  readonly name: string;
  readonly netns: string;
  readonly dir: string;
  readonly gateway: string;
  readonly prefixLength = 24;
  readonly image: LabImage;
  private readonly subnet: string;
  private readonly vmList: Vm[] = [];
  private nextTap = 0;
  private readonly records = new Map<string, string[]>();
  private dnsmasq: ChildProcess | undefined;
  private imds: ChildProcess | undefined;
  private readonly instances = new Map<string, InstanceMetadata & { instanceId: string }>();
  private reaper: ChildProcess | undefined;
  private destroyed = false;
  private readonly createdAt = Date.now();
  private readonly failuresBefore = failedTests().length;

  private constructor(options: LabOptions, image: LabImage) {
    this.name = options.name;
    this.subnet = options.subnet ?? '10.77.0';
    this.gateway = `${this.subnet}.1`;
    this.image = image;
    this.netns = `efsclab-${process.pid}-${options.name}`;
    this.dir = fs.mkdtempSync(path.join(process.env.LAB_RUN_DIR ?? os.tmpdir(), `efsclab-${process.pid}-${options.name}-`));
  }

  /** The VMs started so far. */
  get vms(): readonly Vm[] {
    return this.vmList;
  }

  vm(name: string): Vm {
    const vm = this.vmList.find((v) => v.name === name);
    if (!vm) throw new Error(`lab ${this.name}: no VM named ${name}`);
    return vm;
  }

  /**
   * Creates a VM (qcow2 overlay of the image, NoCloud seed with the user-data, blank NVMe disks, a tap on the bridge)
   * and powers it on. Returns once QEMU runs; call vm.waitForCloudInit() to wait for the user-data.
   */
  async startVm(options: VmOptions): Promise<Vm> {
    this.assertLive();
    if (!/^[a-z][a-z0-9-]{0,30}$/.test(options.name)) throw new Error(`VM name must match [a-z][a-z0-9-]*: ${options.name}`);
    if (this.vmList.some((v) => v.name === options.name)) throw new Error(`lab ${this.name}: VM ${options.name} exists`);
    if (!options.ip.startsWith(`${this.subnet}.`) || options.ip === this.gateway) {
      throw new Error(`VM ${options.name}: ip ${options.ip} is not a free address in ${this.subnet}.0/24`);
    }
    if (this.vmList.some((v) => v.ip === options.ip)) throw new Error(`VM ${options.name}: ip ${options.ip} is taken`);
    // Reserve name, address and tap before the first await, so that VMs can be started in parallel.
    const tap = `tap${this.nextTap++}`;
    // A VM given no vendor data finds the code of its user data kept, as after a fetch (the loader's fetch from S3 is
    // proved against the emulator: test/heavy/emulator and aws.lab.ts, whose VMs trust it through their vendor data).
    const vm = new Vm(
      { netns: this.netns, gateway: this.gateway, prefixLength: this.prefixLength, image: this.image, labName: this.name },
      { ...options, vendorData: options.vendorData ?? keptCodeVendorData(options.userData) },
      path.join(this.dir, options.name),
      tap,
    );
    this.vmList.push(vm);
    await this.ip('tuntap', 'add', 'dev', tap, 'mode', 'tap');
    await this.ip('link', 'set', tap, 'master', 'br0');
    await this.ip('link', 'set', tap, 'up');
    // The VMs already up keep the bridge's address as their gateway's (setUp says why it must not change).
    const address = (await run('ip', ['-n', this.netns, '-br', 'link', 'show', 'br0'])).stdout.trim().split(/\s+/)[2];
    if (address !== bridgeMac(this.subnet)) throw new Error(`lab ${this.name}: the bridge's address is ${address} once ${tap} joined it, not ${bridgeMac(this.subnet)}`);
    await vm.prepare();
    this.setInstance(vm, options.instance ?? {});
    const names = [options.name, ...(options.hostRecords ?? [])];
    for (const n of names) this.records.set(n, [...(this.records.get(n) ?? []).filter((x) => x !== options.ip), options.ip]);
    await this.reloadDns();
    await vm.start();
    return vm;
  }

  /**
   * Sets the A records of a name (several addresses: all are returned, as Route 53 multivalue answers do);
   * an empty list removes the name. Takes effect before this returns; guests have no DNS cache.
   */
  async setDnsRecord(name: string, ips: string[]): Promise<void> {
    this.assertLive();
    if (ips.length === 0) this.records.delete(name);
    else this.records.set(name, [...ips]);
    await this.reloadDns();
  }

  /**
   * What the metadata service tells a VM from now on (a new instance id stands for a replaced instance). Returns the
   * instance id.
   */
  setInstance(vm: Vm, instance: InstanceMetadata): string {
    const instanceId = instance.instanceId ?? `i-${crypto.createHash('sha256').update(vm.name).digest('hex').slice(0, 17)}`;
    this.instances.set(vm.ip, { ...instance, instanceId });
    const config: Record<string, unknown> = {};
    for (const [ip, i] of this.instances) {
      config[ip] = {
        'instance-id': i.instanceId, 'region': LAB_REGION, 'availability-zone': `${LAB_REGION}a`, 'tags': i.tags ?? {},
        ...(i.role ? { 'iam-role': i.role.name, 'credentials': i.role.credentials } : {}),
        ...(i.targetLifecycleState ? { 'target-lifecycle-state': i.targetLifecycleState } : {}),
      };
    }
    const tmp = `${this.imdsConfig}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(config, null, 1));
    fs.renameSync(tmp, this.imdsConfig);
    return instanceId;
  }

  /** The instance id the metadata service gives a VM. */
  instanceId(vm: Vm): string {
    const i = this.instances.get(vm.ip);
    if (!i) throw new Error(`lab ${this.name}: ${vm.name} has no instance metadata`);
    return i.instanceId;
  }

  /** Every request the metadata service answered, in order (optionally of one VM). */
  imdsRequests(vm?: Vm): ImdsRequest[] {
    const text = fs.existsSync(this.imdsLog) ? fs.readFileSync(this.imdsLog, 'utf8') : '';
    const all = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ImdsRequest);
    return vm ? all.filter((r) => r.source === vm.ip) : all;
  }

  /** Current DNS records of the lab. */
  dnsRecords(): ReadonlyMap<string, readonly string[]> {
    return this.records;
  }

  /**
   * Shapes what a VM sends (tc netem on the guest's eth0: the host kernel here has no netem). undefined clears it.
   * Put it on a server VM to make it behave like a remote service (a rate cap well below the VM's own read speed).
   */
  async setLink(vm: Vm, link: LinkOptions | undefined): Promise<void> {
    const parts: string[] = [];
    if (link?.delayMs) parts.push(`delay ${link.delayMs}ms`);
    if (link?.lossPercent) parts.push(`loss ${link.lossPercent}%`);
    if (link?.rateMbit) parts.push(`rate ${link.rateMbit}mbit`);
    if (parts.length === 0) {
      await vm.exec('tc qdisc del dev eth0 root 2>/dev/null || true');
      progress(`${vm.name}: link unshaped`);
      return;
    }
    await vm.execOk(`tc qdisc replace dev eth0 root netem ${parts.join(' ')} limit 100000`);
    progress(`${vm.name}: link ${parts.join(', ')}`);
  }

  /** Moves a secondary address from one VM to another (a stable node address), with gratuitous ARP. */
  async moveAddress(ip: string, from: Vm | undefined, to: Vm): Promise<void> {
    const cidr = `${ip}/${this.prefixLength}`;
    if (from?.running) await from.exec(`ip addr del ${cidr} dev eth0 2>/dev/null || true`);
    await to.execOk(`ip addr replace ${cidr} dev eth0 && (arping -q -U -c 2 -I eth0 ${ip} || true)`);
    progress(`address ${ip} moved ${from ? `from ${from.name} ` : ''}to ${to.name}`);
  }

  /** Kills every VM, stops DNS, removes the namespace and the run directory (logs are kept in .lab-cache/logs). */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const failed = failedTests().slice(this.failuresBefore);
    if (failed.length) {
      progress(`lab ${this.name}: ${failed.length} test(s) failed (${failed.join('; ').slice(0, 500)}): each VM says what it sees`);
      for (const vm of this.vmList.filter((v) => v.running)) {
        await vm.diagnose('test failed').catch((e) => progress(`${vm.name}: no diagnosis: ${(e as Error).message}`));
      }
    }
    await Promise.all(this.vmList.map((v) => v.kill()));
    this.keepLogs();
    this.teardownSync();
    live.delete(this);
    progress(`lab ${this.name}: destroyed after ${elapsed(this.createdAt)}`);
  }

  /** Synchronous teardown, safe to call from exit and signal handlers. */
  teardownSync(): void {
    this.destroyed = true;
    for (const vm of this.vmList) vm.killSync();
    if (this.dnsmasq?.pid && isAlive(this.dnsmasq.pid)) {
      try {
        process.kill(this.dnsmasq.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    // Anything else that ended up in the namespace goes too.
    for (let i = 0; i < 20; i++) {
      const pids = runSync('ip', ['netns', 'pids', this.netns]).stdout.split(/\s+/).filter(Boolean).map(Number);
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      runSync('sleep', ['0.2']);
    }
    runSync('ip', ['netns', 'del', this.netns]);
    fs.rmSync(this.dir, { recursive: true, force: true });
    if (this.reaper?.pid && isAlive(this.reaper.pid)) {
      try {
        process.kill(-this.reaper.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    live.delete(this);
  }

  private async setUp(): Promise<void> {
    fs.writeFileSync(path.join(this.dir, '.alive'), `${process.pid}\n`);
    // The reaper outlives this process: if it dies without destroy(), the reaper removes the namespace and files.
    this.reaper = spawn('bash', [REAPER, 'watch', String(process.pid), this.netns, this.dir], { detached: true, stdio: 'ignore' });
    this.reaper.unref();
    runSync('ip', ['netns', 'del', this.netns]);
    await run('ip', ['netns', 'add', this.netns]);
    await this.ip('link', 'set', 'lo', 'up');
    // A bridge whose address is not set takes the lowest of its ports' addresses, so it changes when a tap with a lower
    // one joins. VMs already up keep sending to the old address, and those packets are lost until their ARP entries
    // for the gateway expire: a VM's connections to the metadata service failed for 35 s after another VM's tap joined
    // (aws.lab's elastic-1 died of it twice). A fixed address (locally administered, unlike the VMs' 52:54:...)
    // keeps the gateway's the same for the lab's whole life; startVm checks that it stays.
    await this.ip('link', 'add', 'br0', 'address', bridgeMac(this.subnet), 'type', 'bridge');
    await this.ip('addr', 'add', `${this.gateway}/${this.prefixLength}`, 'dev', 'br0');
    await this.ip('link', 'set', 'br0', 'up');
    await this.startDns();
    await this.startImds();
    progress(`lab ${this.name}: network ${this.subnet}.0/24 in netns ${this.netns}, DNS at ${this.gateway} (${elapsed(this.createdAt)})`);
  }

  private get hostsFile(): string {
    return path.join(this.dir, 'hosts');
  }

  private get dnsLog(): string {
    return path.join(this.dir, 'dnsmasq.log');
  }

  private async startDns(): Promise<void> {
    fs.writeFileSync(this.hostsFile, '');
    fs.writeFileSync(this.dnsLog, '');
    const args = [
      '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--no-poll', '--no-negcache',
      '--user=root', '--group=root', `--pid-file=${path.join(this.dir, 'dnsmasq.pid')}`,
      `--listen-address=${this.gateway}`, '--bind-interfaces', '--local-ttl=0', '--domain-needed',
      `--addn-hosts=${this.hostsFile}`, `--log-facility=${this.dnsLog}`, '--log-queries',
    ];
    this.dnsmasq = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'ip', 'netns', 'exec', this.netns, 'dnsmasq', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    this.dnsmasq.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    await this.waitForDnsLog(/read .*hosts - \d+ names|started, version/, 0, () => `dnsmasq did not start: ${stderr}`);
  }

  private get imdsConfig(): string {
    return path.join(this.dir, 'imds.json');
  }

  private get imdsLog(): string {
    return path.join(this.dir, 'imds.log');
  }

  /** The instance metadata service at 169.254.169.254 on the bridge: VMs reach it through their default route. */
  private async startImds(): Promise<void> {
    fs.writeFileSync(this.imdsConfig, '{}');
    fs.writeFileSync(this.imdsLog, '');
    await this.ip('addr', 'add', `${IMDS_ADDRESS}/32`, 'dev', 'br0');
    this.imds = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'ip', 'netns', 'exec', this.netns, 'python3', IMDS,
      IMDS_ADDRESS, this.imdsConfig, this.imdsLog], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    this.imds.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const probe = runSync('ip', ['netns', 'exec', this.netns, 'bash', '-c', `exec 3<>/dev/tcp/${IMDS_ADDRESS}/80`]);
      if (probe.code === 0) return;
      if (this.imds.exitCode !== null) break;
      await sleep(100);
    }
    throw new Error(`the metadata service did not start: ${stderr}`);
  }

  private async reloadDns(): Promise<void> {
    const lines: string[] = [];
    for (const [name, ips] of this.records) for (const ip of ips) lines.push(`${ip}\t${name}`);
    const tmp = `${this.hostsFile}.tmp`;
    fs.writeFileSync(tmp, lines.join('\n') + '\n');
    fs.renameSync(tmp, this.hostsFile);
    const before = countMatches(fs.readFileSync(this.dnsLog, 'utf8'), /read \S+ - \d+ names/g);
    if (!this.dnsmasq?.pid) throw new Error('dnsmasq is not running');
    process.kill(this.dnsmasq.pid, 'SIGHUP');
    await this.waitForDnsLog(/read \S+ - \d+ names/g, before, () => 'dnsmasq did not reload its hosts file');
  }

  private async waitForDnsLog(pattern: RegExp, moreThan: number, why: () => string): Promise<void> {
    const deadline = Date.now() + 10_000;
    const global = new RegExp(pattern.source, 'g');
    while (Date.now() < deadline) {
      if (countMatches(fs.readFileSync(this.dnsLog, 'utf8'), global) > moreThan) return;
      if (this.dnsmasq?.exitCode !== null) break;
      await sleep(50);
    }
    throw new Error(why());
  }

  private async ip(...args: string[]): Promise<void> {
    await run('ip', ['-n', this.netns, ...args]);
  }

  private assertLive(): void {
    if (this.destroyed) throw new Error(`lab ${this.name} is destroyed`);
  }

  private keepLogs(): void {
    const dest = path.join(CACHE_DIR, 'logs', this.name);
    try {
      fs.rmSync(dest, { recursive: true, force: true });
      fs.mkdirSync(dest, { recursive: true });
      for (const vm of this.vmList) {
        for (const f of ['serial.log', 'qemu.log']) {
          const src = path.join(vm.dir, f);
          if (fs.existsSync(src)) fs.copyFileSync(src, path.join(dest, `${vm.name}.${f}`));
        }
      }
      if (fs.existsSync(this.dnsLog)) fs.copyFileSync(this.dnsLog, path.join(dest, 'dnsmasq.log'));
      if (fs.existsSync(this.imdsLog)) fs.copyFileSync(this.imdsLog, path.join(dest, 'imds.log'));
    } catch (e) {
      progress(`lab ${this.name}: could not keep logs: ${(e as Error).message}`);
    }
  }
}

function countMatches(text: string, pattern: RegExp): number {
  return (text.match(pattern) ?? []).length;
}

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('exit', () => {
    for (const lab of [...live]) lab.teardownSync();
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      for (const lab of [...live]) lab.teardownSync();
      process.kill(process.pid, signal);
    });
  }
}

/** The lab bridge's fixed address: 02: (locally administered, unicast), then the subnet's three octets and 00:01. */
export function bridgeMac(subnet: string): string {
  const octets = subnet.split('.').map(Number);
  if (octets.length !== 3 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) throw new Error(`not a /24 prefix: ${subnet}`);
  return ['02', ...octets.map((o) => o.toString(16).padStart(2, '0')), '00', '01'].join(':');
}
