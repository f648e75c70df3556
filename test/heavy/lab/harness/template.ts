import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { LabImage, CACHE_DIR } from './image';
import { elapsed, progress } from './log';
import { KERNEL_ARGS, machineArgs } from './machine';
import { cpuSeconds, isAlive, run, sleep } from './proc';
import { Qmp } from './qmp';

/**
 * Template boots: a VM's first boot, saved where the image's lab-gate unit stops it (before the network and before
 * cloud-init's first stage, with no identity yet), once per image, kernel, memory size and vCPU count. A lab VM of
 * that kind is a copy of it restored in about a second, which the lab then gives its disks, its NoCloud seed and its
 * own identity (image/rootfs/usr/local/sbin/lab-gate): from there on, cloud-init and the user data run as on EC2's
 * first boot. A boot of the image to that point costs 20-40 QEMU CPU-seconds that no VM after the first pays.
 *
 * What a restore cannot reproduce, and why no test depends on it: the kernel's log and command line in memory up to
 * the gate are the template's (the VM's own words are read from /run/lab/cmdline; a reboot boots the VM's own command
 * line); the boot id and uptime carry on from the template's boot; the VM's disks and seed arrive by PCIe hotplug just
 * before the gate lets the boot go on, not at power on; PID 1 keeps the template's machine id in memory (the file,
 * journald, restarted by the gate, and every process started after it have the VM's), so the boot's journal up to the
 * gate is in the template's journal files, which journalctl does not show. A VM given kernelArgs boots cold (its kernel
 * command line must be its own from the start), and LAB_RESTORE=off boots every VM cold.
 */
export interface Template {
  readonly dir: string;
  /** The root disk at the gate (qcow2): the backing file of every restored VM's root disk. */
  readonly root: string;
  /** QEMU's saved state (a migration stream). */
  readonly state: string;
}

export interface TemplateKey {
  readonly image: LabImage;
  /** The kernel's tag, '' for the image's own. */
  readonly kernelTag: string;
  readonly kernel: string;
  readonly initrd: string;
  readonly memoryMiB: number;
  readonly cpus: number;
}

/** Changes whenever what a template is made of changes (machine.ts, lab-gate), so that an older one is not restored. */
const RECIPE = 'gate-2';
/** The marker lab-gate prints on the console once the template boot has reached it. */
export const GATE_MARKER = "lab-gate: waiting for this VM's identity";
/** A template's own MAC address; a restored VM's gate replaces it with the VM's before the NIC comes up. */
const TEMPLATE_MAC = '52:54:00:00:00:fe';

export function restoreEnabled(): boolean {
  return (process.env.LAB_RESTORE ?? 'on') !== 'off';
}

function templateDir(key: TemplateKey): string {
  const name = `${path.basename(key.image.dir)}-k${key.kernelTag || 'base'}-${key.memoryMiB}m-${key.cpus}c-${RECIPE}`;
  return path.join(CACHE_DIR, 'templates', name);
}

/**
 * The template of this kind of VM, built first if there is none yet. Two lab files that need the same one at once
 * wait for each other (a lock directory holding the builder's pid); templates of older images are removed.
 * `netns` and `tap` are the network the template boot's NIC joins (its link stays down).
 */
export async function ensureTemplate(key: TemplateKey, netns: string, tap: string): Promise<Template> {
  const dir = templateDir(key);
  const template = { dir, root: path.join(dir, 'root.qcow2'), state: path.join(dir, 'state') };
  const lock = `${dir}.lock`;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  for (;;) {
    if (fs.existsSync(path.join(dir, 'done'))) return template;
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
    } catch {
      const owner = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8') || '0');
      if (owner && !isAlive(owner)) fs.rmSync(lock, { recursive: true, force: true });
      else await sleep(1_000);
      continue;
    }
    try {
      if (!fs.existsSync(path.join(dir, 'done'))) await build(key, dir, netns, tap);
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}

async function build(key: TemplateKey, dir: string, netns: string, tap: string): Promise<void> {
  const prefix = path.basename(key.image.dir);
  for (const old of fs.readdirSync(path.dirname(dir))) {
    if (!old.startsWith(prefix)) fs.rmSync(path.join(path.dirname(dir), old), { recursive: true, force: true });
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const name = path.basename(dir);
  const t0 = Date.now();
  progress(`template ${name}: booting the image to its gate (once; every VM of this kind is then restored from it)`);
  await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'raw', '-b', key.image.rootImage, path.join(tmp, 'root.qcow2')]);
  const serialLog = path.join(tmp, 'serial.log');
  const qmpSocket = path.join(tmp, 'qmp.sock');
  const args = machineArgs({
    name: 'template', cpus: key.cpus, memoryMiB: key.memoryMiB, kernel: key.kernel, initrd: key.initrd,
    append: `${KERNEL_ARGS} lab.template=1`, serialLog, qgaSocket: path.join(tmp, 'qga.sock'), qmpSocket,
    root: path.join(tmp, 'root.qcow2'), tap, mac: TEMPLATE_MAC,
  });
  const log = fs.openSync(path.join(tmp, 'qemu.log'), 'a');
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'ip', 'netns', 'exec', netns, 'qemu-system-x86_64', ...args], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let alive = true;
  void exited.then(() => (alive = false));
  const tail = () => (fs.existsSync(serialLog) ? fs.readFileSync(serialLog, 'latin1').split('\n').slice(-20).join('\n') : '(no console)');
  try {
    const deadline = Date.now() + 20 * 60_000;
    while (!(fs.existsSync(serialLog) && fs.readFileSync(serialLog, 'latin1').includes(GATE_MARKER))) {
      if (!alive) throw new Error(`template ${name}: qemu exited before the gate; console:\n${tail()}`);
      if (Date.now() > deadline) throw new Error(`template ${name}: the boot did not reach the gate in 20 minutes; console:\n${tail()}`);
      await sleep(500);
    }
    const qmp = await Qmp.connect(qmpSocket);
    try {
      await qmp.execute('stop');
      await qmp.execute('migrate-set-parameters', { 'max-bandwidth': 4 * 1024 ** 3 });
      await qmp.execute('migrate', { uri: `exec:cat > ${path.join(tmp, 'state')}` });
      for (;;) {
        const m = await qmp.execute<{ status?: string; 'error-desc'?: string }>('query-migrate');
        if (m.status === 'completed') break;
        if (m.status === 'failed' || m.status === 'cancelled') throw new Error(`template ${name}: saving its state ${m.status}: ${m['error-desc'] ?? ''}`);
        await sleep(200);
      }
      const cpu = child.pid ? cpuSeconds(child.pid) : undefined;
      await qmp.execute('quit').catch(() => undefined);
      await exited;
      const seconds = (Date.now() - t0) / 1000;
      fs.writeFileSync(path.join(tmp, 'done'), JSON.stringify({ seconds, cpuSeconds: cpu }) + '\n');
      progress(`template ${name}: saved at its gate after ${elapsed(t0)}${cpu === undefined ? '' : ` (QEMU ${cpu.toFixed(1)} CPU-s)`}`);
    } finally {
      qmp.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    if (alive && child.pid) process.kill(child.pid, 'SIGKILL');
    await exited;
  }
}
