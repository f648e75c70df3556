import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { DIAGNOSE_SCRIPT, DiagnosisReason, hostSideScript, keepDiagnosis, summarize } from './diagnose';
import { LabImage } from './image';
import { elapsed, progress } from './log';
import { KERNEL_ARGS, machineArgs, ROOT_PORTS } from './machine';
import { cpuSeconds, isAlive, run, sleep } from './proc';
import { GuestAgent, GuestAgentError } from './qga';
import { Qmp } from './qmp';
import { ensureTemplate, restoreEnabled, Template } from './template';

/** A blank (or given) disk behind an emulated NVMe controller. QEMU's model string is always "QEMU NVMe Ctrl". */
export interface NvmeDisk {
  readonly sizeMiB: number;
  /** Controller serial (up to 20 characters), visible as /sys/block/nvmeXn1/device/serial. */
  readonly serial: string;
  /**
   * true: a blank (all zero, sparse) device, like new instance store. false: the first MiB holds random bytes, like
   * a device that was used before and not wiped.
   * @default true
   */
  readonly blank?: boolean;
}

/** Any further disk: virtio (/dev/vdb, ...) or one more NVMe controller. */
export interface ExtraDisk {
  readonly sizeMiB: number;
  readonly bus?: 'virtio' | 'nvme';
  /** Serial for the disk. @default - derived from the VM name */
  readonly serial?: string;
}

/**
 * How long a boot (power on or reboot to the agent, or to cloud-init's end) may take before the harness calls it hung
 * and diagnoses the VM. A limit on a boot that never ends, not a wait: a boot that ends in an error is reported as soon
 * as cloud-init writes its result. test/heavy/lab/run.sh runs two lab files at once, so up to seven VMs boot together on two
 * cores; one that booted alone in 90 s has been seen to take 250 s then. The slowest boots are aws.lab's nodes, whose
 * user data runs the aws CLI about ten times (655 s in a clean clone, two files at once), and kernels.lab's five VMs
 * booting together (730 s). On a machine measured two to three times slower, aws.lab's elastic-1 was still booting, and
 * working, at 20 minutes (a clean run of ed731c2): the limit is 30.
 */
export const BOOT_LIMIT_MS = 30 * 60_000;

export interface VmOptions {
  /** Hostname and DNS name of the VM inside the lab; [a-z0-9-]. */
  readonly name: string;
  /** Address on the lab network, e.g. '10.77.0.11'. */
  readonly ip: string;
  /** The EC2 user-data, passed unchanged to cloud-init through a NoCloud seed (e.g. a '#!/bin/bash' script). */
  readonly userData: string;
  /** Extra meta-data keys (instance-id and local-hostname are set). */
  readonly metaData?: Record<string, string>;
  /**
   * cloud-init vendor data (the NoCloud seed's vendor-data file): what an image or a provider sets up before the
   * user data runs, such as a CA the instance trusts. @default - for a user data the library rendered, its code kept
   * where its loader looks first (`keptCodeVendorData`: as an earlier fetch from S3 leaves it); otherwise none
   */
  readonly vendorData?: string;
  /** @default 1024 */
  readonly memoryMiB?: number;
  /** @default 1 */
  readonly cpus?: number;
  readonly nvmeDisks?: NvmeDisk[];
  readonly extraDisks?: ExtraDisk[];
  /** More DNS names that resolve to this VM (e.g. an EFS DNS name for the origin VM). */
  readonly hostRecords?: string[];
  /** Appended to the kernel command line. */
  readonly kernelArgs?: string;
  /**
   * The kernel to boot: a tag of the image's kernel matrix (test/heavy/lab/image/kernels, e.g. '6.12', '7').
   * @default - bookworm's own (6.1)
   */
  readonly kernel?: string;
  /**
   * What the lab's instance metadata service (169.254.169.254, IMDSv2) answers this VM: its instance id and instance
   * tags (what EC2 serves with instance metadata tags on).
   * @default - instance id `i-` and 17 hex digits derived from the VM name, no tags
   */
  readonly instance?: InstanceMetadata;
}

/** What the lab's metadata service tells one VM. */
export interface InstanceMetadata {
  /** @default - `i-` and 17 hex digits derived from the VM name */
  readonly instanceId?: string;
  /** Instance tags, served under meta-data/tags/instance/. */
  readonly tags?: Record<string, string>;
  /** The instance profile's role and its session keys, served under meta-data/iam/security-credentials/. @default - none */
  readonly role?: { readonly name: string; readonly credentials: { AccessKeyId: string; SecretAccessKey: string; Token: string } };
  /**
   * What its Auto Scaling group plans for the instance, served under meta-data/autoscaling/target-lifecycle-state
   * (InService, Terminated...). @default - not served (404), as for an instance of no group
   */
  readonly targetLifecycleState?: string;
}

export interface ExecOptions {
  /** @default 120000 */
  readonly timeoutMs?: number;
  /** Written to the command's stdin. */
  readonly input?: string | Buffer;
}

export interface ExecResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CloudInitResult {
  /**
   * cloud-init's verdict from /run/cloud-init/result.json: 'done' when every stage and the user-data succeeded,
   * 'error' when it recorded errors, 'disabled' when cloud-init did not run.
   */
  readonly status: string;
  /** Errors cloud-init recorded (/run/cloud-init/result.json), e.g. a user-data script that exited non-zero. */
  readonly errors: string[];
  /** What the user-data printed in the last boot's final stage (from /var/log/cloud-init-output.log). */
  readonly userDataOutput: string;
  /** The whole /var/log/cloud-init-output.log. */
  readonly output: string;
  /** Seconds from QEMU start until cloud-init reported a result. */
  readonly seconds: number;
}

export interface WaitForCloudInitOptions {
  /** @default 600000 */
  readonly timeoutMs?: number;
  /**
   * The test expects this boot to end in an error (a node whose origin cannot be reached): its diagnosis is still
   * kept and printed, labelled as expected. @default false
   */
  readonly expectError?: boolean;
}

export interface StartOptions {
  /** Replace the NVMe backing files with blank ones first (what an EC2 stop/start does to instance store). */
  readonly replaceNvmeWithBlank?: boolean;
}

/** Facts the VM needs from its lab. */
export interface VmHost {
  readonly netns: string;
  readonly gateway: string;
  readonly prefixLength: number;
  readonly image: LabImage;
  readonly labName: string;
}

interface DiskFile {
  /** Instance store is blanked by stop/start; extra disks (EBS-like) keep their data. */
  readonly kind: 'instance-store' | 'extra';
  readonly file: string;
  readonly sizeMiB: number;
  readonly serial: string;
  readonly bus: 'virtio' | 'nvme';
  readonly blank: boolean;
}

/** One QEMU guest on the lab's bridge, controlled through the QEMU guest agent. */
export class Vm {
  readonly name: string;
  readonly ip: string;
  readonly dir: string;
  readonly serialLogPath: string;
  readonly agent: GuestAgent;
  private process: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private startedAt = 0;
  private readonly disks: DiskFile[];
  private readonly overlay: string;
  private readonly seed: string;
  private readonly qgaSocket: string;
  private readonly qmpSocket: string;
  /** The template this VM's first power on restores (template.ts); undefined: it boots cold. */
  private template: Template | undefined;
  private powerOns = 0;
  private diagnosed: DiagnosisReason | undefined;
  private nicWatch: NodeJS.Timeout | undefined;
  /** QEMU's CPU time at its last reading (every 5 s while it runs, and just before a kill): what the VM cost the host. */
  private cpuSeen: number | undefined;
  private consoleRead = 0;
  private resettingNic = false;
  /** Times the harness reset the guest's NIC after its transmit queue stalled (resetNic). */
  nicResets = 0;

  constructor(
    private readonly host: VmHost,
    readonly options: VmOptions,
    dir: string,
    readonly tap: string,
  ) {
    this.name = options.name;
    this.ip = options.ip;
    this.dir = dir;
    this.serialLogPath = path.join(dir, 'serial.log');
    this.overlay = path.join(dir, 'root.qcow2');
    this.seed = path.join(dir, 'seed.img');
    this.qgaSocket = path.join(dir, 'qga.sock');
    this.qmpSocket = path.join(dir, 'qmp.sock');
    this.agent = new GuestAgent(this.qgaSocket);
    this.disks = [
      ...(options.extraDisks ?? []).map((d, i) => ({
        kind: 'extra' as const,
        file: path.join(dir, `extra${i}.raw`),
        sizeMiB: d.sizeMiB,
        serial: d.serial ?? `${options.name}-x${i}`.slice(0, 20),
        bus: d.bus ?? 'virtio',
        blank: true,
      })),
      ...(options.nvmeDisks ?? []).map((d, i) => ({
        kind: 'instance-store' as const,
        file: path.join(dir, `nvme${i}.raw`),
        sizeMiB: d.sizeMiB,
        serial: d.serial,
        bus: 'nvme' as const,
        blank: d.blank ?? true,
      })),
    ];
  }

  /** QEMU's process id while it runs. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  /** The NVMe backing files, in controller order. */
  get nvmeFiles(): string[] {
    return this.disks.filter((d) => d.kind === 'instance-store').map((d) => d.file);
  }

  /**
   * Creates the root overlay, seed and disks; called once by Lab.startVm. The root overlay is that of the template of
   * this kind of VM (template.ts), built first if need be, unless the VM boots cold (kernelArgs, too many disks to
   * plug in, LAB_RESTORE=off).
   */
  async prepare(): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    const o = this.options;
    if (restoreEnabled() && o.kernelArgs === undefined && this.disks.length < ROOT_PORTS) {
      const k = this.bootKernel();
      this.template = await ensureTemplate({
        image: this.host.image, kernelTag: o.kernel ?? '', kernel: k.kernel, initrd: k.initrd,
        memoryMiB: o.memoryMiB ?? 1024, cpus: o.cpus ?? 1,
      }, this.host.netns, this.tap);
      await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'qcow2', '-b', this.template.root, this.overlay]);
    } else {
      await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'raw', '-b', this.host.image.rootImage, this.overlay]);
    }
    await this.writeSeed();
    for (const d of this.disks) this.blankDisk(d);
  }

  /** Boots the VM (power on). Returns once QEMU runs; use waitForAgent / waitForCloudInit to wait for the guest. */
  async start(options: StartOptions = {}): Promise<void> {
    if (this.running) throw new Error(`vm ${this.name} is already running`);
    if (options.replaceNvmeWithBlank) {
      for (const d of this.disks.filter((x) => x.kind === 'instance-store')) this.blankDisk({ ...d, blank: true });
    }
    this.agent.close();
    fs.rmSync(this.qgaSocket, { force: true });
    fs.rmSync(this.qmpSocket, { force: true });
    const restore = this.powerOns++ === 0 ? this.template : undefined;
    const args = restore ? [...this.restoreArgs(restore)] : this.qemuArgs();
    fs.appendFileSync(this.serialLogPath, restore
      ? `\n===== lab: restored from ${path.basename(restore.dir)} ${new Date().toISOString()} =====\n`
      : `\n===== lab: power on ${new Date().toISOString()} =====\n`);
    const log = fs.openSync(path.join(this.dir, 'qemu.log'), 'a');
    // setpriv: QEMU dies with the process that started it, even on SIGKILL; ip netns exec: it joins the lab network.
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'ip', 'netns', 'exec', this.host.netns, 'qemu-system-x86_64', ...args], {
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.process = child;
    this.cpuSeen = undefined;
    this.startedAt = Date.now();
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code, signal) => {
      if (this.process === child) {
        const cpu = this.cpuSeen === undefined ? '' : `, ${this.cpuSeen.toFixed(1)} CPU-s`;
        progress(`${this.name}: qemu exited (${signal ?? `code ${code}`}) after ${elapsed(this.startedAt)}${cpu}`);
      }
    });
    // The socket appears once QEMU has parsed its arguments and opened its devices.
    const deadline = Date.now() + 15_000;
    while (!fs.existsSync(this.qgaSocket)) {
      if (!this.running) throw new Error(`vm ${this.name}: qemu failed to start: ${this.qemuLogTail()}`);
      if (Date.now() > deadline) throw new Error(`vm ${this.name}: qemu did not open its agent socket: ${this.qemuLogTail()}`);
      await sleep(100);
    }
    progress(`${this.name}: ${restore ? 'restored' : 'booting'} (${this.ip}, ${this.options.cpus ?? 1} vCPU, ${this.options.memoryMiB ?? 1024} MiB, qemu pid ${child.pid})`);
    this.watchNic();
    if (restore) await this.plugIn();
  }

  /**
   * After a restore: waits until QEMU runs the restored state, then plugs in the VM's disks one by one, each once the
   * guest has taken the one before (so that they get the names a cold boot gives them), and last its NoCloud seed,
   * with the VM's identity for the gate (image/rootfs/usr/local/sbin/lab-gate). Stands for EC2 attaching what the
   * instance has at launch.
   */
  private async plugIn(): Promise<void> {
    const qmp = await Qmp.connect(this.qmpSocket);
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const st = await qmp.execute<{ status: string }>('query-status');
        if (st.status === 'running') break;
        // The template was saved stopped, and a restore keeps the state it was saved in: once loaded, it runs on here.
        if (st.status === 'paused') {
          await qmp.execute('cont');
          continue;
        }
        if (!/inmigrate|prelaunch|postmigrate|finish-migrate/.test(st.status) || Date.now() > deadline) {
          throw new Error(`vm ${this.name}: the restore ended in state ${st.status}: ${this.qemuLogTail()}`);
        }
        await sleep(100);
      }
      const waitFor: string[] = [];
      let nvme = 0;
      let virtio = 1;
      for (const [i, d] of this.disks.entries()) {
        const seen = fs.statSync(this.serialLogPath).size;
        if (d.bus === 'nvme') {
          await qmp.execute('device_add', { driver: 'nvme', id: `dev${i}`, drive: `disk${i}`, serial: d.serial, bus: `rp${i}` });
          await this.waitConsole(new RegExp(`nvme nvme${nvme}: pci function`), seen);
          waitFor.push(`nvme-QEMU_NVMe_Ctrl_${d.serial}`);
          nvme++;
        } else {
          await qmp.execute('device_add', { driver: 'virtio-blk-pci', id: `dev${i}`, drive: `disk${i}`, serial: d.serial, bus: `rp${i}` });
          await this.waitConsole(new RegExp(`\\[vd${String.fromCharCode(97 + virtio)}\\]`), seen);
          waitFor.push(`virtio-${d.serial}`);
          virtio++;
        }
      }
      await this.writeIdentity(waitFor);
      await qmp.execute('device_add', { driver: 'virtio-blk-pci', id: 'seeddev', drive: 'seed', bus: `rp${this.disks.length}` });
    } finally {
      qmp.close();
    }
  }

  /** Waits until the console, from byte `from` on, matches `re`. */
  private async waitConsole(re: RegExp, from: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.assertHealthy();
      const text = fs.readFileSync(this.serialLogPath, 'latin1').slice(from);
      if (re.test(text)) return;
      if (Date.now() > deadline) throw new Error(`vm ${this.name}: the guest did not show ${re} within ${timeoutMs} ms; console:\n${this.serialTail(20)}`);
      await sleep(200);
    }
  }

  /** Puts the VM's identity in its seed (lab-identity), as the gate reads it: written just before the seed is plugged in. */
  private async writeIdentity(waitFor: string[]): Promise<void> {
    const file = path.join(this.dir, 'seed', 'lab-identity');
    fs.writeFileSync(file, [
      `epoch=${Math.round(Date.now() / 1000)}`,
      `mac=${macFor(this.ip)}`,
      `cmdline=${this.identityArgs()}`,
      `machine_id=${randomBytes(16).toString('hex')}`,
      `random=${randomBytes(64).toString('hex')}`,
      `disks=${waitFor.join(' ')}`,
    ].join('\n') + '\n');
    await run('mcopy', ['-o', '-i', this.seed, file, '::']);
  }

  /**
   * Resets the guest's NIC (the image's lab-nic-reset: the virtio-net driver rebound, eth0's addresses, routes and
   * shaping put back) and says so in the log. The harness calls it when the console shows the NIC's transmit queue
   * stalled, which software emulation on a busy host can do and no instance script causes.
   */
  async resetNic(why: string): Promise<string> {
    this.resettingNic = true;
    try {
      progress(`${this.name}: resetting its NIC (${why})`);
      const out = (await this.execOk('/usr/local/sbin/lab-nic-reset', { timeoutMs: 60_000 })).trim();
      this.nicResets++;
      progress(`${this.name}: ${out}`);
      return out;
    } finally {
      this.resettingNic = false;
    }
  }

  /** Reads the console as it grows; a stalled transmit queue of eth0 gets the NIC reset (resetNic). */
  private watchNic(): void {
    clearInterval(this.nicWatch);
    this.consoleRead = fs.existsSync(this.serialLogPath) ? fs.statSync(this.serialLogPath).size : 0;
    this.nicWatch = setInterval(() => {
      if (!this.running) {
        clearInterval(this.nicWatch);
        return;
      }
      this.readCpu();
      if (this.resettingNic) return;
      const size = fs.statSync(this.serialLogPath).size;
      if (size <= this.consoleRead) return;
      const fd = fs.openSync(this.serialLogPath, 'r');
      const buf = Buffer.alloc(size - this.consoleRead);
      fs.readSync(fd, buf, 0, buf.length, this.consoleRead);
      fs.closeSync(fd);
      this.consoleRead = size;
      const stalled = /NETDEV WATCHDOG: eth0 .*timed out|eth0: TX timeout on queue/.exec(buf.toString('latin1'));
      if (stalled) {
        this.resetNic(`console: ${stalled[0]}`).catch((e) => progress(`${this.name}: NIC reset failed: ${(e as Error).message}`));
      }
    }, 5_000);
    this.nicWatch.unref();
  }

  /** Reads QEMU's CPU time into cpuSeen while it runs, and returns it. */
  private readCpu(): number | undefined {
    const pid = this.process?.pid;
    const cpu = pid && this.running ? cpuSeconds(pid) : undefined;
    if (cpu !== undefined) this.cpuSeen = cpu;
    return cpu;
  }

  /** Waits until the guest agent answers (about 20-30 s after power on under TCG). */
  async waitForAgent(timeoutMs = BOOT_LIMIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let nextNote = Date.now() + 30_000;
    while (Date.now() < deadline) {
      this.assertHealthy();
      if (await this.agent.waitUntilReady(Math.min(5_000, deadline - Date.now()), () => this.running)) {
        progress(`${this.name}: guest agent up ${elapsed(this.startedAt)} after power on`);
        return;
      }
      if (Date.now() > nextNote) {
        progress(`${this.name}: still booting (${elapsed(this.startedAt)}); console: ${this.serialTail(1).trim()}`);
        nextNote = Date.now() + 30_000;
      }
    }
    throw new Error(`vm ${this.name}: guest agent did not answer within ${timeoutMs} ms; console:\n${this.serialTail(30)}`);
  }

  /**
   * Waits until cloud-init has finished (all stages, including the user-data) and returns its verdict.
   * The result is cloud-init's own status and error list, not the state of a systemd unit.
   */
  async waitForCloudInit(options: WaitForCloudInitOptions = {}): Promise<CloudInitResult> {
    const timeoutMs = options.timeoutMs ?? BOOT_LIMIT_MS;
    const deadline = Date.now() + timeoutMs;
    try {
      await this.waitForAgent(timeoutMs);
    } catch (e) {
      await this.diagnose('boot timeout');
      throw e;
    }
    // cloud-init writes result.json when its last stage ends, with the errors of every stage: reading it is cheap.
    // Progress and a disabled cloud-init are read from its own files too, never with `cloud-init status`: that is
    // python, 10 to 20 s of the guest's one vCPU under emulation each time, taken from the boot it watches (run every
    // minute by each of three booting VMs, it took minutes from aws.lab's node-a, whose boot then outran its wait).
    let nextCheck = Date.now() + 60_000;
    let status = 'unknown';
    let errors: string[] | undefined;
    for (;;) {
      this.assertHealthy();
      // Read by the agent itself (guest-file-*), not by a command: a process the guest spawns every 2 s costs a
      // booting VM's one vCPU 50-100 ms each time under emulation.
      const result = await this.readFileIfExists('/run/cloud-init/result.json');
      if (result !== undefined && result.trim()) {
        try {
          errors = (JSON.parse(result) as { v1?: { errors?: string[] } }).v1?.errors ?? [];
        } catch {
          errors = [`unreadable /run/cloud-init/result.json: ${result.slice(0, 200)}`];
        }
        status = errors.length ? 'error' : 'done';
        break;
      }
      if (Date.now() > nextCheck) {
        status = await this.cloudInitProgress();
        if (status === 'disabled') break;
        progress(`${this.name}: cloud-init ${status} (${elapsed(this.startedAt)})`);
        nextCheck = Date.now() + 60_000;
      }
      if (Date.now() > deadline) {
        const why = await this.diagnose('boot timeout');
        throw new Error(`vm ${this.name}: cloud-init not finished after ${timeoutMs} ms:\n${why}\nconsole:\n${this.serialTail(30)}`);
      }
      await sleep(2_000);
    }
    const seconds = (Date.now() - this.startedAt) / 1000;
    const output = (await this.exec('cat /var/log/cloud-init-output.log')).stdout;
    const userDataOutput = lastFinalStage(output);
    const cpu = this.readCpu();
    progress(`${this.name}: cloud-init ${status} ${seconds.toFixed(1)}s after power on${cpu === undefined ? '' : ` (QEMU ${cpu.toFixed(1)} CPU-s)`}` +
      `${errors?.length ? ` (${errors.length} error(s))` : ''}`);
    // A metadata service that did not answer at once is retried by the scripts and may go unseen in a passing boot:
    // say so, with the lab's side of the network as it is now, so that a pattern shows before it fails a boot.
    const imdsRetries = userDataOutput.split('\n').filter((l) => /retry \d+\/\d+: imds_once /.test(l)).length;
    if (imdsRetries > 0) {
      const side = (await this.hostSide()).split('\n')[0];
      progress(`${this.name}: the metadata service needed ${imdsRetries} retr${imdsRetries === 1 ? 'y' : 'ies'} in the user data; ${side}`);
    }
    if (status !== 'done') await this.diagnose(options.expectError ? 'expected boot error' : 'boot error');
    return { status, errors: errors ?? [], userDataOutput, output, seconds };
  }

  /**
   * cloud-init's state from its own files (no python): `disabled` (its marker), `running` (a stage has started:
   * status.json), `unknown` (it has not started yet).
   */
  private async cloudInitProgress(): Promise<string> {
    const r = await this.exec('if [ -e /run/cloud-init/disabled ] || [ -e /etc/cloud/cloud-init.disabled ]; then echo disabled; ' +
      'elif [ -s /run/cloud-init/status.json ]; then echo running; else echo unknown; fi',
    { timeoutMs: 60_000 }).catch(() => undefined);
    return r?.stdout.trim() || 'unknown';
  }

  /**
   * Prints what the guest says of its own failure into the log (the lines of its diagnosis that say why) and keeps
   * its diagnosis, journal, cloud-init output and console under FAILURES_DIR/<lab>/<vm>/. Returns the printed lines.
   * A VM is diagnosed once per reason; a guest whose agent does not answer is described by its console alone.
   */
  /** The lab's side of this VM's network, read on the host (`hostSideScript`); its first line is a summary. */
  private async hostSide(): Promise<string> {
    return run('bash', ['-c', hostSideScript(this.host.netns, this.tap, this.ip, macFor(this.ip))], { allowFail: true, timeoutMs: 20_000 })
      .then((r) => r.stdout + (r.stderr ? `\n(stderr) ${r.stderr}` : ''), (e: Error) => `lab side: could not be read (${e.message})`);
  }

  async diagnose(reason: DiagnosisReason): Promise<string> {
    if (this.diagnosed === reason) return '';
    this.diagnosed = reason;
    const files: Record<string, string | Buffer> = {};
    if (fs.existsSync(this.serialLogPath)) files['console.log'] = fs.readFileSync(this.serialLogPath);
    let diagnosis: string;
    const answering = this.running && (await this.agent.waitUntilReady(5_000, () => this.running).catch(() => false));
    if (answering) {
      const read = async (command: string, timeoutMs: number) => {
        try {
          const r = await this.exec(command, { timeoutMs });
          return r.stdout + (r.stderr ? `\n(stderr) ${r.stderr}` : '');
        } catch (e) {
          return `(could not be read: ${(e as Error).message})`;
        }
      };
      diagnosis = await read(DIAGNOSE_SCRIPT, 120_000);
      files['journal.txt'] = await read('journalctl -b -o short-monotonic --no-pager', 120_000);
      files['cloud-init-output.log'] = await read('cat /var/log/cloud-init-output.log', 30_000);
    } else {
      diagnosis = `## the guest agent does not answer (qemu ${this.running ? 'running' : 'not running'}); console (last 40 lines)\n${this.serialTail(40)}`;
    }
    diagnosis = `${diagnosis.trimEnd()}\n## the lab's side of the network (host)\n${await this.hostSide()}`;
    const kept = keepDiagnosis(this.host.labName, this.name, reason, diagnosis, files);
    const lines = summarize(fs.readFileSync(kept.diagnosis, 'utf8'), 20);
    progress(`${this.name}: ${reason}; what the guest says (all of it in ${kept.dir}):\n${lines.join('\n')}`);
    return lines.join('\n');
  }

  /** Runs a bash command line in the guest as root. Throws on timeout (the command is killed). */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const args: Record<string, unknown> = { 'path': '/bin/bash', 'arg': ['-c', command], 'capture-output': true };
    if (options.input !== undefined) args['input-data'] = Buffer.from(options.input).toString('base64');
    const { pid } = await this.agent.call<{ pid: number }>('guest-exec', args);
    const deadline = Date.now() + timeoutMs;
    let wait = 50;
    for (;;) {
      const st = await this.agent.call<GuestExecStatus>('guest-exec-status', { pid });
      if (st.exited) {
        return {
          code: st.exitcode ?? (st.signal !== undefined ? 128 + st.signal : -1),
          stdout: decode(st['out-data']),
          stderr: decode(st['err-data']),
        };
      }
      if (Date.now() > deadline) {
        await this.agent
          .call('guest-exec', { 'path': '/bin/bash', 'arg': ['-c', `pkill -KILL -P ${pid}; kill -KILL ${pid}`] })
          .catch(() => undefined);
        throw new Error(`vm ${this.name}: command timed out after ${timeoutMs} ms: ${command}`);
      }
      await sleep(wait);
      wait = Math.min(wait * 2, 500);
    }
  }

  /** Like exec, but throws unless the command exits 0; returns its stdout. */
  async execOk(command: string, options: ExecOptions = {}): Promise<string> {
    const r = await this.exec(command, options);
    if (r.code !== 0) {
      throw new Error(`vm ${this.name}: '${command}' exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    return r.stdout;
  }

  /** Reads a file from the guest, byte for byte. */
  async readFile(file: string): Promise<Buffer> {
    const handle = await this.agent.call<number>('guest-file-open', { path: file, mode: 'r' });
    return this.readOpened(handle, 4 << 20);
  }

  /**
   * Reads a file from the guest as text, or undefined if it cannot be opened (it does not exist yet). Nothing is
   * spawned in the guest: the agent opens and reads the file itself.
   */
  async readFileIfExists(file: string): Promise<string | undefined> {
    let handle: number;
    try {
      handle = await this.agent.call<number>('guest-file-open', { path: file, mode: 'r' });
    } catch (e) {
      if (e instanceof GuestAgentError && /No such file or directory/.test(e.message)) return undefined;
      throw e;
    }
    // Small reads: the kernel's handlers of /proc/sys files allocate what is asked for, and refuse 4 MiB (ENOMEM).
    return (await this.readOpened(handle, 64 << 10)).toString('utf8');
  }

  /** Reads an opened guest file to its end, `count` bytes per call, and closes it. */
  private async readOpened(handle: number, count: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    try {
      for (;;) {
        const r = await this.agent.call<{ 'count': number; 'buf-b64': string; 'eof': boolean }>('guest-file-read', { handle, count });
        parts.push(Buffer.from(r['buf-b64'], 'base64'));
        if (r.eof || r.count === 0) break;
      }
    } finally {
      await this.agent.call('guest-file-close', { handle });
    }
    return Buffer.concat(parts);
  }

  /** Writes a file in the guest (created or truncated). */
  async writeFile(file: string, data: string | Buffer, mode?: number): Promise<void> {
    const bytes = Buffer.from(data);
    const handle = await this.agent.call<number>('guest-file-open', { path: file, mode: 'w' });
    try {
      for (let off = 0; off < bytes.length || off === 0; off += 4 << 20) {
        const chunk = bytes.subarray(off, off + (4 << 20));
        await this.agent.call('guest-file-write', { 'handle': handle, 'buf-b64': chunk.toString('base64') });
        if (bytes.length === 0) break;
      }
    } finally {
      await this.agent.call('guest-file-close', { handle });
    }
    if (mode !== undefined) await this.execOk(`chmod ${mode.toString(8)} '${file.replace(/'/g, "'\\''")}'`);
  }

  /** The guest's boot id, different on every boot. */
  async bootId(): Promise<string> {
    const id = await this.readFileIfExists('/proc/sys/kernel/random/boot_id');
    if (!id?.trim()) throw new Error(`vm ${this.name}: no boot id`);
    return id.trim();
  }

  /** Reboots the guest (same disks, same QEMU) and waits until its agent answers from the new boot. */
  async reboot(options: { timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? BOOT_LIMIT_MS;
    const before = await this.bootId();
    const t0 = Date.now();
    progress(`${this.name}: rebooting`);
    await this.agent.send('guest-shutdown', { mode: 'reboot' });
    const deadline = Date.now() + timeoutMs;
    await sleep(3_000);
    for (;;) {
      this.assertHealthy();
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`vm ${this.name}: no new boot within ${timeoutMs} ms; console:\n${this.serialTail(30)}`);
      if (await this.agent.waitUntilReady(Math.min(left, 10_000), () => this.running)) {
        const now = await this.bootId().catch(() => before);
        if (now !== before) break;
      }
      await sleep(1_000);
    }
    this.startedAt = t0;
    progress(`${this.name}: back after reboot (${elapsed(t0)})`);
  }

  /** Powers the guest off cleanly and waits for QEMU to exit (killing it after timeoutMs). */
  async shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    if (!this.running) return;
    progress(`${this.name}: powering off`);
    await this.agent.send('guest-shutdown', { mode: 'powerdown' }).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), options.timeoutMs ?? 120_000))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      progress(`${this.name}: did not power off in time, killing qemu`);
      await this.kill();
    }
    this.agent.close();
  }

  /** EC2 stop/start: clean power off, optionally blank instance store, power on, wait for the agent. */
  async stopStart(options: StartOptions & { timeoutMs?: number } = {}): Promise<void> {
    await this.shutdown();
    await this.start(options);
    await this.waitForAgent(options.timeoutMs);
  }

  /** Hard kill of QEMU, like losing the instance. Disks stay as they are; start() boots it again. */
  async kill(): Promise<void> {
    clearInterval(this.nicWatch);
    const child = this.process;
    if (child && this.running && child.pid) {
      this.readCpu();
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await this.exited;
    }
    this.agent.close();
  }

  /** Synchronous hard kill for exit handlers. */
  killSync(): void {
    clearInterval(this.nicWatch);
    const pid = this.process?.pid;
    if (pid && isAlive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    this.agent.close();
  }

  /** The last lines of the serial console. */
  serialTail(lines = 20): string {
    try {
      const text = fs.readFileSync(this.serialLogPath, 'latin1');
      // eslint-disable-next-line no-control-regex
      return text.replace(/\x1b\[[0-9;]*m/g, '').split(/\r?\n/).slice(-lines - 1).join('\n');
    } catch {
      return '(no console output)';
    }
  }

  private qemuLogTail(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'qemu.log'), 'utf8').trim().split('\n').slice(-10).join('\n');
    } catch {
      return '(no qemu log)';
    }
  }

  private assertHealthy(): void {
    if (!this.running) throw new Error(`vm ${this.name}: qemu is not running; console:\n${this.serialTail(30)}\nqemu: ${this.qemuLogTail()}`);
    const tail = this.serialTail(60);
    if (/Kernel panic - not syncing/.test(tail)) throw new Error(`vm ${this.name}: kernel panic; console:\n${tail}`);
  }

  private blankDisk(d: DiskFile): void {
    fs.rmSync(d.file, { force: true });
    fs.writeFileSync(d.file, d.blank ? Buffer.alloc(0) : randomBytes(1 << 20));
    fs.truncateSync(d.file, d.sizeMiB * 1024 * 1024);
  }

  private async writeSeed(): Promise<void> {
    const meta = {
      'instance-id': instanceId(`${this.host.labName}/${this.name}`),
      'local-hostname': this.name,
      ...(this.options.metaData ?? {}),
    };
    const seedDir = path.join(this.dir, 'seed');
    fs.mkdirSync(seedDir, { recursive: true });
    fs.writeFileSync(path.join(seedDir, 'user-data'), this.options.userData);
    fs.writeFileSync(path.join(seedDir, 'meta-data'), Object.entries(meta).map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`).join(''));
    const files = ['user-data', 'meta-data'];
    if (this.options.vendorData !== undefined) {
      fs.writeFileSync(path.join(seedDir, 'vendor-data'), this.options.vendorData);
      files.push('vendor-data');
    }
    fs.rmSync(this.seed, { force: true });
    const bytes = Buffer.byteLength(this.options.userData) + Buffer.byteLength(this.options.vendorData ?? '');
    const kib = Math.max(1024, Math.ceil((bytes * 2) / 1024) + 512);
    await run('mkfs.vfat', ['-C', '-n', 'CIDATA', this.seed, String(kib)]);
    await run('mcopy', ['-o', '-i', this.seed, ...files.map((f) => path.join(seedDir, f)), '::']);
  }

  private bootKernel(): { kernel: string; initrd: string } {
    const tag = this.options.kernel;
    if (tag === undefined) return this.host.image;
    const k = this.host.image.kernels[tag];
    if (!k) throw new Error(`vm ${this.name}: no kernel '${tag}' in the lab image (has: ${Object.keys(this.host.image.kernels).join(', ') || 'none'})`);
    return k;
  }

  /** The VM's own words on the kernel command line: address, gateway, DNS and host name, read by lab-net. */
  private identityArgs(): string {
    return `lab.ip=${this.ip}/${this.host.prefixLength} lab.gw=${this.host.gateway} lab.dns=${this.host.gateway} lab.hostname=${this.name}`;
  }

  /** The machine (machine.ts) with this VM's kernel command line, root disk, NIC and sockets. */
  private machine(): string[] {
    const o = this.options;
    return machineArgs({
      name: this.name, cpus: o.cpus ?? 1, memoryMiB: o.memoryMiB ?? 1024,
      kernel: this.bootKernel().kernel, initrd: this.bootKernel().initrd,
      append: [KERNEL_ARGS, this.identityArgs(), o.kernelArgs ?? ''].join(' ').trim(),
      serialLog: this.serialLogPath, qgaSocket: this.qgaSocket, qmpSocket: this.qmpSocket,
      root: this.overlay, tap: this.tap, mac: macFor(this.ip),
    });
  }

  /** A cold boot (power on): the machine with the VM's disks and its NoCloud seed present from the start. */
  private qemuArgs(): string[] {
    const args = this.machine();
    this.disks.forEach((d, i) => {
      const driver = d.bus === 'nvme' ? 'nvme' : 'virtio-blk-pci';
      args.push('-drive', `file=${d.file},if=none,id=disk${i},format=raw,cache=unsafe`, '-device', `${driver},drive=disk${i},serial=${d.serial}`);
    });
    args.push('-drive', `file=${this.seed},if=virtio,format=raw,readonly=on`);
    return args;
  }

  /**
   * A restore of the template (template.ts): the same machine, its state read from the template's, and the VM's disks
   * and seed as drives that plugIn() then connects. The kernel command line given here is the VM's own: the restored
   * memory holds the template's, and a reboot boots this one.
   */
  private restoreArgs(template: Template): string[] {
    const args = this.machine();
    this.disks.forEach((d, i) => args.push('-drive', `file=${d.file},if=none,id=disk${i},format=raw,cache=unsafe`));
    args.push('-drive', `file=${this.seed},if=none,id=seed,format=raw,readonly=on`);
    args.push('-incoming', `exec:cat ${template.state}`);
    return args;
  }
}

interface GuestExecStatus {
  'exited': boolean;
  'exitcode'?: number;
  'signal'?: number;
  'out-data'?: string;
  'err-data'?: string;
}

function decode(b64: string | undefined): string {
  return b64 ? Buffer.from(b64, 'base64').toString('utf8') : '';
}

/** A locally administered MAC derived from the IPv4 address. */
export function macFor(ip: string): string {
  const octets = ip.split('.').map((x) => Number(x));
  return ['52', '54', ...octets.map((o) => o.toString(16).padStart(2, '0'))].join(':');
}

/** An EC2-style instance id, stable for a name. */
function instanceId(name: string): string {
  let h = 0xcbf29ce484222325n;
  for (const c of Buffer.from(name)) h = ((h ^ BigInt(c)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return `i-0${h.toString(16).padStart(16, '0').slice(0, 16)}`;
}

/** The part of cloud-init-output.log written by the last boot's final stage (where the user-data runs). */
export function lastFinalStage(output: string): string {
  const start = output.lastIndexOf("running 'modules:final'");
  if (start < 0) return '';
  const from = output.indexOf('\n', start) + 1;
  const end = output.indexOf('Cloud-init v.', from);
  return output.slice(from, end < 0 ? undefined : end);
}
