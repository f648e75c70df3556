/** The protocol table (item 9): NFSv4.1 against NFSv3 between clients and a node, and nconnect on a large file. */
import { ProtocolMode, ProtocolResults } from '../results';
import { median } from '../stats';
import { NOT_MEASURED, opsPerPass, ratio, table, timeRange } from './format';

const PROTOCOL_LABELS: Record<ProtocolMode, string> = {
  direct: 'origin directly (EFS options)', v41: 'node, NFSv4.1 (fleet client options)', v3: 'node, NFSv3 (same options, vers=3, nolock)',
};

/** Item 9: the storm through the origin, a node over NFSv4.1 and a node over NFSv3; the large file with nconnect. */
export function protocolTables(p: ProtocolResults | undefined): string {
  if (!p) return `NFSv4.1 against NFSv3 between a client and a node (item 9): ${NOT_MEASURED}.`;
  const out: string[] = [
    `The include/stat storm (${p.stormFiles} files) against an origin without delegations: time per pass (median, range), speed-up over the origin directly ` +
      '(ratio of medians, range over every pair of passes), and what each pass cost the origin and the node (their own nfsd counters):',
    '',
  ];
  const body: string[][] = [];
  for (const state of ['warm', 'steady'] as const) {
    const base = p.cells.find((c) => c.mode === 'direct' && c.state === state);
    for (const mode of ['direct', 'v41', 'v3'] as ProtocolMode[]) {
      const c = p.cells.find((k) => k.mode === mode && k.state === state);
      const label = `${state === 'warm' ? 'warm (client caches dropped)' : 'steady (nothing dropped)'}: ${PROTOCOL_LABELS[mode]}`;
      if (!c) {
        body.push([label, `${NOT_MEASURED} (failed)`, '', '', '', '', '']);
        continue;
      }
      const lat = c.latency.open ? `${c.latency.open.p50.toFixed(0)} / ${c.latency.open.p99.toFixed(0)} µs` : '';
      const speed = base && mode !== 'direct'
        ? ratio({
          median: median(base.seconds) / median(c.seconds), low: Math.min(...base.seconds) / Math.max(...c.seconds),
          high: Math.max(...base.seconds) / Math.min(...c.seconds),
        },
        Math.min(base.seconds.length, c.seconds.length)) : '';
      body.push([label, timeRange(c.seconds), speed, opsPerPass(c.originOps), opsPerPass(c.originOpens), mode === 'direct' ? '' : opsPerPass(c.nodeOps), lat]);
    }
  }
  out.push(table(['State and mount', 'Time per pass', 'Speed-up', 'Origin ops / pass', 'Origin OPENs / pass', 'Node ops / pass', 'open p50 / p99'], body), '');
  const n1 = p.nconnect['1'] ?? [];
  const n4 = p.nconnect['4'] ?? [];
  if (n1.length && n4.length) {
    const n = Math.min(n1.length, n4.length);
    const gains = Array.from({ length: n }, (_, i) => n1[i] / n4[i]);
    out.push(`One file of ${p.fileMiB} MiB, warm on the node, read over NFSv4.1 after the client dropped its caches: nconnect=1 ${timeRange(n1)}, nconnect=4 ${timeRange(n4)}; ` +
      `nconnect=4 over nconnect=1: ${ratio({ median: median(n1) / median(n4), low: Math.min(...gains), high: Math.max(...gains) }, n)} (each pass paired with the one after it).`, '');
  } else {
    out.push(`nconnect: ${NOT_MEASURED} (failed).`, '');
  }
  if (p.handles) out.push(`File handles (name_to_handle_at on the client's mounts, bytes; a client's copy is the server's handle plus a few bytes): ${p.handles}.`, '');
  if (p.failures.length) out.push('What failed in this run (left out of the tables):', '', ...p.failures.map((f) => `- ${f}`), '');
  return out.join('\n');
}
