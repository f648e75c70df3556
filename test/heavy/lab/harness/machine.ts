/**
 * The QEMU machine every lab VM is, apart from its disks: a template boot (template.ts) and each VM restored from it
 * must be the same machine, device for device and in the same order, or QEMU refuses the restore.
 */

/** How many empty PCIe root ports a machine has: the slots a restore plugs the VM's disks and seed into. */
export const ROOT_PORTS = 6;

export interface MachineSpec {
  readonly name: string;
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly kernel: string;
  readonly initrd: string;
  /** The kernel command line. */
  readonly append: string;
  readonly serialLog: string;
  readonly qgaSocket: string;
  readonly qmpSocket: string;
  /** The root disk (qcow2). */
  readonly root: string;
  /** The tap in the lab's namespace that the NIC is joined to. */
  readonly tap: string;
  readonly mac: string;
}

/**
 * The kernel command line's fixed part. mitigations=off: the guest kernel's defences against speculative execution
 * (barriers and retpolines on every system call, context switch and indirect branch) protect nothing in a lab VM, and
 * under software emulation each costs instructions to translate and run. Measured here, one VM alone, two boots each:
 * a boot 28.6-29.5 QEMU CPU-seconds against 31.0-31.8 (7 % less), a guest workload (process spawns, find, reads) 8.1
 * against 8.5-9.0.
 */
export const KERNEL_ARGS = 'root=/dev/vda rw console=ttyS0,115200 net.ifnames=0 mitigations=off';

export function machineArgs(m: MachineSpec): string[] {
  const args = [
    '-name', m.name,
    '-machine', 'q35,accel=tcg',
    // qemu64, not max: under software emulation the guest's code is translated instruction by instruction, and with
    // max's AVX2 glibc and python take their vector paths, which TCG emulates at a higher cost. Measured here, one VM
    // alone, same image: 200 process spawns 5.5-7.1 s against 7.1-11.0 s, the aws CLI 7.5-9.5 s against 9.0-15.4 s,
    // cloud-init done 82-92 s against 95-110 s after power on. Nothing the lab runs needs more than x86-64's base.
    '-cpu', 'qemu64',
    '-smp', String(m.cpus),
    '-m', String(m.memoryMiB),
    '-nodefaults', '-display', 'none', '-vga', 'none',
    '-chardev', `file,id=console0,path=${m.serialLog},append=on`,
    '-serial', 'chardev:console0',
    '-kernel', m.kernel,
    '-initrd', m.initrd,
    '-append', m.append,
    '-drive', `file=${m.root},if=virtio,format=qcow2,cache=unsafe`,
    '-netdev', `tap,id=n0,ifname=${m.tap},script=no,downscript=no`,
    '-device', `virtio-net-pci,netdev=n0,mac=${m.mac}`,
    '-device', 'virtio-rng-pci',
    // The VM generation id: a restored copy gets a new one (guid=auto), and the guest kernel reseeds its RNG from it.
    '-device', 'vmgenid,guid=auto',
    '-device', 'virtio-serial-pci',
    '-chardev', `socket,id=qga0,path=${m.qgaSocket},server=on,wait=off`,
    '-device', 'virtserialport,chardev=qga0,name=org.qemu.guest_agent.0',
    '-qmp', `unix:${m.qmpSocket},server=on,wait=off`,
  ];
  for (let i = 0; i < ROOT_PORTS; i++) {
    args.push('-device', `pcie-root-port,id=rp${i},bus=pcie.0,chassis=${i + 1},slot=${i + 1}`);
  }
  return args;
}
