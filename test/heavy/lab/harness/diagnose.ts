/**
 * What a failed VM says of itself, kept where a reader of CI's log can find it: the guest's own reason (cloud-init's
 * errors, failed units, the efs-cache FATAL and WARN lines, a node's exports and nfsds, the network) printed into the
 * log, and its console, journal and cloud-init output kept under FAILURES_DIR/<lab>/<vm>/. test/run-all.sh prints the
 * first lines of each kept diagnosis again at the end of `npm test`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CACHE_DIR } from './image';

/** Where failed VMs' diagnoses are kept: one folder per lab, one per VM. test/heavy/lab/run.sh empties it at its start. */
export const FAILURES_DIR = path.join(CACHE_DIR, 'failures');

/** The diagnosis's file in a VM's kept folder; its first line names the VM, the lab and why it was kept. */
export const DIAGNOSIS_FILE = 'diagnosis.txt';

/**
 * One guest command, so that a diagnosis costs one round trip of the guest agent: each part under a `## ` heading,
 * each bounded in lines, none allowed to fail the whole.
 */
export const DIAGNOSE_SCRIPT = String.raw`
export SYSTEMD_PAGER= LC_ALL=C
part() { printf '## %s\n' "$1"; }
part "cloud-init result"
if [ -s /run/cloud-init/result.json ]; then tr -s ' \n' ' ' < /run/cloud-init/result.json | cut -c1-1500; echo; else echo "(none yet: cloud-init has not finished)"; fi
part "failed units"
systemctl --failed --no-legend --plain 2>&1 | head -n 15
part "efs-cache FATAL and WARN lines (last 12)"
# The scripts' log() writes each line to stderr with its prefix and, outside a unit, once more to the journal by logger.
journalctl -b -o cat --no-pager 2>/dev/null | grep -E '^(efs-cache: )?(FATAL|WARN): ' | sed -E 's/^efs-cache: //' | awk '!seen[$0]++' | tail -n 12
part "efs-cache's last lines (journal)"
journalctl -b -o short-monotonic --no-pager 2>/dev/null | grep -E ' efs-cache(\[[0-9]+\])?: |: efs-cache: ' | tail -n 15
part "cloud-init output (last 15 lines)"
tail -n 15 /var/log/cloud-init-output.log 2>/dev/null
part "network"
ip -br addr 2>&1; ip route 2>&1 | head -n 5
# systemd's (PID 1) and the kernel's lines only: the guest agent logs each command it runs, this script included.
journalctl -b -o cat --no-pager _PID=1 + _TRANSPORT=kernel 2>/dev/null | grep -E 'Timed out waiting for device|Dependency failed for|NETDEV WATCHDOG' | head -n 5
if [ -e /proc/fs/nfsd/threads ] || command -v exportfs > /dev/null; then
  part "nfs server"
  printf 'nfsd threads: %s; nfsd processes: %s\n' "$(cat /proc/fs/nfsd/threads 2>/dev/null || echo none)" "$(pgrep -c -x nfsd || true)"
  exportfs -v 2>&1 | head -n 10
  findmnt -t nfs,nfs4 -no TARGET,SOURCE,FSTYPE 2>/dev/null | head -n 10
fi
true
`;

/**
 * The lab's own side of a VM's network, read on the host (one bash command line, in the lab's namespace): the bridge's
 * address, the VM's tap and its counters, what the namespace's neighbour table and the bridge's forwarding table hold
 * for the VM, the metadata service's listener, and the namespace's counters of dropped packets and connections since
 * the lab began (they are cumulative: a drop while the VM booted still shows when it is diagnosed later). Its first
 * line, `lab side: ...`, is the summary a log's tail gets.
 */
export function hostSideScript(netns: string, tap: string, ip: string, mac: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return String.raw`
ns=${q(netns)} tap=${q(tap)} ip=${q(ip)} mac=${q(mac)}
nsx() { ip netns exec "$ns" "$@"; }
br=$(ip -n "$ns" -br link show br0 2>/dev/null | awk '{print $3}')
tapstate=$(ip -n "$ns" -br link show "$tap" 2>/dev/null | awk '{print $2}')
neigh=$(ip -n "$ns" neigh show "$ip" 2>/dev/null | awk '{print $NF}')
fdb=$(bridge -n "$ns" fdb show br br0 2>/dev/null | grep -i "^$mac " | awk '{print $3}' | head -n 1)
drops=$(nsx nstat -asz 2>/dev/null | awk '$1 ~ /^(TcpExtListenOverflows|TcpExtListenDrops|TcpExtTCPReqQFullDrop|IpInDiscards|IpInAddrErrors|IpExtInNoRoutes)$/ && $2 > 0 {printf "%s=%s ", $1, $2}')
[ -n "$neigh" ] || neigh=none; [ -n "$fdb" ] || fdb=none; [ -n "$drops" ] || drops=none
printf 'lab side: bridge %s; %s %s; neighbour %s %s; forwarding entry on %s; drops since the lab began: %s\n' \
  "$br" "$tap" "$tapstate" "$ip" "$neigh" "$fdb" "$drops"
echo "### $tap"; ip -n "$ns" -s -s link show "$tap" 2>&1
echo "### neighbours"; ip -n "$ns" neigh show 2>&1
echo "### forwarding table"; bridge -n "$ns" fdb show br br0 2>&1 | grep -v ' permanent' | head -n 40
echo "### listeners"; nsx ss -ltn 2>&1 | head -n 20
echo "### counters (nonzero)"; nsx nstat -asz 2>&1 | awk 'NR > 1 && $2 > 0' | grep -E '^(Ip|Tcp|Udp|Icmp)[A-Z]' | head -n 60
true
`;
}

/**
 * The tests of this file that failed so far, as the lab's jest environment (test/heavy/lab/harness/environment.js) records
 * them: a lab destroyed after a failure diagnoses its VMs while they still run.
 */
export function failedTests(): readonly string[] {
  return ((globalThis as { __labFailedTests?: string[] }).__labFailedTests ?? []).slice();
}

/** Why a VM's diagnosis was kept. */
export type DiagnosisReason = 'boot error' | 'boot timeout' | 'test failed' | 'expected boot error';

/** Paths of what was kept for one VM. */
export interface KeptDiagnosis {
  readonly dir: string;
  readonly diagnosis: string;
}

/**
 * Writes a VM's diagnosis and whatever else could be read of it (files: name to content) into
 * FAILURES_DIR/<lab>/<vm>/, replacing what an earlier diagnosis of the same VM kept.
 */
export function keepDiagnosis(
  lab: string, vm: string, reason: DiagnosisReason, diagnosis: string, files: Record<string, string | Buffer>, root: string = FAILURES_DIR,
): KeptDiagnosis {
  const dir = path.join(root, lab, vm);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, DIAGNOSIS_FILE);
  fs.writeFileSync(file, `${lab}/${vm}: ${reason}\n${diagnosis.trimEnd()}\n`);
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  return { dir, diagnosis: file };
}

/** The kept diagnoses, as `lab/vm` and the file's path, in a stable order. */
export function keptDiagnoses(root: string = FAILURES_DIR): { name: string; file: string }[] {
  if (!fs.existsSync(root)) return [];
  const out: { name: string; file: string }[] = [];
  for (const lab of fs.readdirSync(root).sort()) {
    const labDir = path.join(root, lab);
    if (!fs.statSync(labDir).isDirectory()) continue;
    for (const vm of fs.readdirSync(labDir).sort()) {
      const file = path.join(labDir, vm, DIAGNOSIS_FILE);
      if (fs.existsSync(file)) out.push({ name: `${lab}/${vm}`, file });
    }
  }
  return out;
}

/**
 * The lines of a diagnosis that say why, for a log's tail: its first line, cloud-init's errors, the failed units, the
 * FATAL and WARN lines and the network's errors (at most `max` lines).
 */
export function summarize(diagnosis: string, max = 12): string[] {
  const lines = diagnosis.split('\n');
  const wanted = new Set(['cloud-init result', 'failed units', 'efs-cache FATAL and WARN lines (last 12)']);
  const out = [lines[0]];
  let section = '';
  for (const l of lines.slice(1)) {
    if (l.startsWith('## ')) {
      section = l.slice(3);
      continue;
    }
    if (!l.trim()) continue;
    const alarming = /Timed out waiting for device|Dependency failed for|NETDEV WATCHDOG|Kernel panic/.test(l);
    if (wanted.has(section) || section.startsWith('the guest agent does not answer') || l.startsWith('lab side: ') || alarming) {
      out.push(`  ${section}: ${l.length > 300 ? `${l.slice(0, 300)}...` : l}`);
    }
  }
  return out.slice(0, max);
}

/**
 * The kept diagnoses for the end of `npm test` (test/run-all.sh): where they are, and the lines of each that say why.
 * Expected boot errors (a test's deliberately broken node) are listed too, so that every run shows the mechanism works.
 */
export function printKept(root: string = FAILURES_DIR): void {
  const kept = keptDiagnoses(root);
  if (kept.length === 0) return;
  console.log(`lab VMs that failed, or were expected to, and what each said (whole journals and consoles in ${root}):`);
  for (const k of kept) {
    for (const l of summarize(fs.readFileSync(k.file, 'utf8'), 12)) console.log(`  ${l}`);
  }
}
