/**
 * Smoke test of the lab itself: an NFSv4.1 origin standing in for EFS, and a client that builds a RAID 0 over blank
 * emulated NVMe disks, runs cachefilesd and mounts the origin by its EFS-style DNS name with fsc. The user-data here
 * is a throwaway; the project's real scripts are proved by the other *.lab.ts files.
 */
import { CloudInitResult, Lab, progress, restoreEnabled, Vm } from './harness';

const EFS_NAME = 'fs-0123456789abcdef0.efs.us-east-1.amazonaws.com';

const ORIGIN_USER_DATA = `#!/bin/bash
set -euo pipefail
echo "origin: exporting /srv/efs over NFSv4.1 only"
mkdir -p /srv/efs
echo "hello from the origin" > /srv/efs/hello.txt
nfsconf --set nfsd vers3 n
nfsconf --set nfsd vers4.0 n
nfsconf --set nfsd vers4.2 n
printf '/srv/efs 10.77.0.0/24(rw,sync,fsid=0,no_subtree_check,no_root_squash,insecure)\\n' > /etc/exports
systemctl enable --now nfs-server
exportfs -ra
cat /proc/fs/nfsd/versions
`;

const CLIENT_USER_DATA = `#!/bin/bash
set -euo pipefail
model='QEMU NVMe Ctrl'
devices=()
for sys in /sys/block/nvme*n*; do
  [[ -e "\${sys}/device/model" ]] || continue
  # sysfs pads the model with spaces
  if [[ "$(sed 's/[[:space:]]*$//' "\${sys}/device/model")" == "\${model}" ]]; then devices+=("/dev/\${sys##*/}"); fi
done
echo "client: cache devices: \${devices[*]}"
(( \${#devices[@]} == 2 ))
mdadm --create /dev/md/fscache --run --level=0 --raid-devices="\${#devices[@]}" "\${devices[@]}"
mkfs.ext4 -q -L fscache /dev/md/fscache
mkdir -p /var/cache/fscache
mount /dev/md/fscache /var/cache/fscache
sed -i 's/^#\\?RUN=.*/RUN=yes/' /etc/default/cachefilesd
systemctl restart cachefilesd || echo "client: cachefilesd unit reported failure, checking the daemon itself"
for _ in $(seq 30); do
  if pgrep -x cachefilesd > /dev/null && grep -q ' A ' /proc/fs/fscache/caches 2> /dev/null; then break; fi
  sleep 1
done
pgrep -x cachefilesd > /dev/null
cat /proc/fs/fscache/caches
getent hosts ${EFS_NAME}
mkdir -p /mnt/efs
for attempt in $(seq 60); do
  if timeout 30 mount -t nfs4 -o nfsvers=4.1,fsc,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport ${EFS_NAME}:/ /mnt/efs; then
    break
  fi
  echo "client: mount attempt \${attempt} failed, the origin may still be booting"
  sleep 5
done
mountpoint /mnt/efs
cat /mnt/efs/hello.txt
`;

describe('lab smoke: NFS origin + FS-Cache client on RAID 0 of blank NVMe', () => {
  let lab: Lab;
  let origin: Vm;
  let client: Vm;
  let results: CloudInitResult[];

  beforeAll(async () => {
    lab = await Lab.create({ name: 'smoke' });
    origin = await lab.startVm({ name: 'origin', ip: '10.77.0.10', userData: ORIGIN_USER_DATA, hostRecords: [EFS_NAME] });
    client = await lab.startVm({
      name: 'client',
      ip: '10.77.0.21',
      userData: CLIENT_USER_DATA,
      nvmeDisks: [
        { sizeMiB: 512, serial: 'lab-is-0', blank: true },
        { sizeMiB: 512, serial: 'lab-is-1', blank: true },
      ],
    });
    results = await Promise.all([origin.waitForCloudInit(), client.waitForCloudInit()]);
  }, 15 * 60 * 1000);

  afterAll(async () => {
    await lab?.destroy();
  });

  test('cloud-init finished without errors on both VMs', () => {
    for (const r of results) {
      expect({ status: r.status, errors: r.errors }).toEqual({ status: 'done', errors: [] });
    }
    expect(results[1].userDataOutput).toContain('hello from the origin');
  });

  test('the client built a RAID 0 over both emulated NVMe disks', async () => {
    const mdstat = await client.execOk('cat /proc/mdstat');
    expect(mdstat).toMatch(/^md\d+ : active raid0 nvme\dn1\[\d\] nvme\dn1\[\d\]/m);
    expect(await client.execOk("lsblk -dno MODEL /dev/nvme0n1 | sed 's/ *$//'")).toBe('QEMU NVMe Ctrl\n');
  });

  test('the NFS mount uses FS-Cache', async () => {
    const volumes = await client.execOk('cat /proc/fs/nfsfs/volumes');
    expect(volumes).toMatch(/^v4 .* yes$/m);
    expect(await client.execOk('cat /proc/fs/fscache/caches')).toMatch(/ A /);
  });

  test('a file written on the origin reads byte-identical on the client', async () => {
    await origin.execOk('head -c 8M /dev/urandom > /srv/efs/blob.bin && sync');
    const written = await origin.readFile('/srv/efs/blob.bin');
    const read = await client.readFile('/mnt/efs/blob.bin');
    expect(read.length).toBe(8 << 20);
    expect(read.equals(written)).toBe(true);
    // Again after dropping the page cache: now from FS-Cache (or the origin), still identical.
    await client.execOk('sync && echo 3 > /proc/sys/vm/drop_caches');
    expect((await client.readFile('/mnt/efs/blob.bin')).equals(written)).toBe(true);
  });

  test('a restored VM\'s journal is its own from the gate on: journalctl shows the gate\'s identity line and the user data\'s output', async () => {
    for (const vm of [origin, client]) {
      const journal = await vm.execOk('journalctl -b -o cat --no-pager -u lab-gate.service -u cloud-final.service');
      // LAB_RESTORE=off: every VM boots cold, and the gate never runs.
      expect(/lab-gate: identity set/.test(journal)).toBe(restoreEnabled());
      expect(journal).toMatch(vm === origin ? /origin: exporting/ : /hello from the origin/);
      expect(await vm.execOk('id=$(cat /etc/machine-id); test -d "/var/log/journal/$id" -o -d "/run/log/journal/$id" && echo kept')).toBe('kept\n');
    }
  });

  test('lab DNS answers records set at run time, several addresses per name', async () => {
    await lab.setDnsRecord('cache.efs-cache.internal', ['10.77.0.31', '10.77.0.32']);
    const answer = await client.execOk('getent ahostsv4 cache.efs-cache.internal | cut -d" " -f1 | sort -u');
    expect(answer.trim().split('\n')).toEqual(['10.77.0.31', '10.77.0.32']);
    await lab.setDnsRecord('cache.efs-cache.internal', []);
    expect((await client.exec('getent hosts cache.efs-cache.internal')).code).not.toBe(0);
  });

  test('a reboot keeps the instance store, an EC2 stop/start blanks it', async () => {
    const examine = 'mdadm --examine /dev/nvme0n1 /dev/nvme1n1 > /dev/null 2>&1 && echo md || echo none';
    await client.reboot();
    expect(await client.execOk(examine)).toBe('md\n');
    progress(`client after reboot: ${(await client.execOk('cat /proc/mdstat')).split('\n').filter((l) => l.startsWith('md')).join('; ') || 'no array assembled'}`);
    await client.stopStart({ replaceNvmeWithBlank: true });
    expect(await client.execOk(examine)).toBe('none\n');
    expect(await client.execOk('cat /proc/mdstat')).not.toMatch(/^md\d+ : active/m);
  });

  test('setLink delays what a VM sends', async () => {
    await lab.setLink(origin, { delayMs: 50 });
    const ping = await client.execOk('ping -c 3 -i 0.3 -q 10.77.0.10');
    const avg = Number(/= [\d.]+\/([\d.]+)\//.exec(ping)?.[1]);
    expect(avg).toBeGreaterThanOrEqual(50);
    await lab.setLink(origin, undefined);
  });
});
