import { KERNEL_ARGS, machineArgs, MachineSpec, ROOT_PORTS } from './machine';

const base: MachineSpec = {
  name: 'node', cpus: 1, memoryMiB: 1024, kernel: '/img/vmlinuz', initrd: '/img/initrd.img',
  append: `${KERNEL_ARGS} lab.ip=10.77.0.31/24`, serialLog: '/run/a/serial.log', qgaSocket: '/run/a/qga.sock',
  qmpSocket: '/run/a/qmp.sock', root: '/run/a/root.qcow2', tap: 'tap3', mac: '52:54:0a:4d:00:1f',
};

/** The guest-visible devices of a machine, in order, without what only the host sees (paths, tap, MAC). */
function devices(args: string[]): string[] {
  return args.flatMap((a, i) => (args[i - 1] === '-device' ? [a.replace(/,mac=[0-9a-f:]+/, '')] : []));
}

describe('the lab machine a template and its restored VMs share (machine.ts)', () => {
  test('a template boot and a VM restored from it are the same machine: same devices in the same order', () => {
    const template = machineArgs({ ...base, name: 'template', append: `${KERNEL_ARGS} lab.template=1`, root: '/t/root.qcow2',
      serialLog: '/t/serial.log', qgaSocket: '/t/qga.sock', qmpSocket: '/t/qmp.sock', tap: 'tap0', mac: '52:54:00:00:00:fe' });
    const vm = machineArgs(base);
    expect(devices(vm)).toEqual(devices(template));
    expect(vm[vm.indexOf('-smp') + 1]).toBe(template[template.indexOf('-smp') + 1]);
    expect(vm[vm.indexOf('-m') + 1]).toBe(template[template.indexOf('-m') + 1]);
  });

  test('it has the empty root ports a restore plugs disks into, a VM generation id, and a QMP socket', () => {
    const d = devices(machineArgs(base));
    expect(d.filter((x) => x.startsWith('pcie-root-port,')).length).toBe(ROOT_PORTS);
    expect(d).toContain('vmgenid,guid=auto');
    expect(machineArgs(base)).toContain('unix:/run/a/qmp.sock,server=on,wait=off');
  });

  test('VMs that differ in memory or vCPUs are different machines (different templates)', () => {
    const a = machineArgs(base);
    const b = machineArgs({ ...base, memoryMiB: 1536 });
    expect(a[a.indexOf('-m') + 1]).not.toBe(b[b.indexOf('-m') + 1]);
  });
});
