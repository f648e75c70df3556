/** The seeding lab's figures (item 4): found by their names for the results table, and listed in full. */
import { SeedingResults } from '../results';
import { int, table } from './format';

/**
 * The trees the seeding lab loads: its own generated one (3,000 files of 50 KiB; figures named as they are) and
 * WordPress's, as Debian packs it (figures named "WordPress: ..."; the run's settings give its version and file count).
 */
export const SEEDING_TREES = [
  { prefix: '', label: 'a generated tree' },
  { prefix: 'WordPress: ', label: 'WordPress (Debian\'s package)' },
] as const;

/**
 * What the web application's tree (the bench's seeding-app part: a generated tree shaped like the fourth seed's) is
 * called in the tables, from the run's settings: "a web application's tree (11,000 files, 98 MB)".
 */
export function appTreeLabel(s: SeedingResults | undefined): string {
  const link = (s?.link ?? {}) as { files?: number; fileBytes?: number };
  const size = link.files && link.fileBytes ? ` (${int(link.files)} files, ${Math.round((link.files * link.fileBytes) / 1e6)} MB)` : '';
  return `a web application's tree${size}`;
}

/** A tree's seeding figures, found by their names (whatever else it reports is listed under the table). */
export function seedingFigures(s: SeedingResults | undefined, prefix = ''): {
  loader?: [string, number]; cp?: [string, number]; rsync?: [string, number]; tar?: [string, number]; ceiling?: [string, number];
} {
  const mine = (k: string) => (prefix ? k.startsWith(prefix) : !SEEDING_TREES.some((t) => t.prefix && k.startsWith(t.prefix)));
  const entries = Object.entries(s?.results ?? {}).filter(([k]) => mine(k)).map(([k, v]): [string, number] => [k.slice(prefix.length), v]);
  const find = (re: RegExp, not?: RegExp) => entries.find(([k]) => re.test(k.trim()) && !(not && not.test(k)));
  return {
    loader: find(/seed|loader|parallel/i, /again|of which|fpsync|ceiling|warm|node/i),
    cp: find(/^cp -R$/),
    rsync: find(/^rsync -a$/),
    tar: find(/^tar x$/),
    ceiling: find(/ceiling/i),
  };
}

/** A share of a VM's vCPUs, as recorded (whole percent), or empty when not recorded. */
const busy = (v: number | undefined) => (v === undefined ? '' : `${v} %`);

/**
 * Where the lab bounds the loader's copy, from its figures: how many files its workers kept going at once, by `cp -R`'s
 * pace of one file at a time over the same link, against how many a link-bound copy would; then, when the run recorded
 * them, how busy each VM counted its own vCPUs. Undefined without the copy's and `cp -R`'s times.
 */
export function seedingBound(s: SeedingResults | undefined): string | undefined {
  const r = s?.results ?? {};
  const cp = r['cp -R'];
  const copy = Object.entries(r).find(([k]) => /^\s*of which the copy/.test(k))?.[1];
  const workers = (s?.link as { workers?: number } | undefined)?.workers;
  if (!cp || !copy || !workers) return undefined;
  const files = (s?.link as { files?: number } | undefined)?.files;
  const perFile = files ? ` (${((cp / files) * 1000).toFixed(0)} ms a file)` : '';
  const inFlight = cp / copy;
  const said = [`By \`cp -R\`'s pace${perFile}, the copy kept about ${inFlight.toFixed(1)} files going at once with its ${workers} workers; ` +
    `workers that each waited only on the link, as \`cp -R\` does, would have taken about ${(cp / workers).toFixed(0)} s.`];
  said.push(inFlight >= 0.8 * workers ? 'The link bounds this ratio, not the lab.'
    : 'The lab bounds this ratio, not the link: which of its limits (two VMs\' emulated vCPUs sharing the host\'s cores, the NFS ' +
      'client\'s concurrency, fpsync\'s own scheduling) holds the copy was not measured.');
  const l = s?.cpu?.['seeding script (whole run)'];
  const c = s?.cpu?.['cp -R'];
  if (l && c) {
    said.push(`By their own accounting, the loader's vCPUs were ${busy(l.loader)} busy during the loader's run (the origin's ${busy(l.origin)}) ` +
      `and ${busy(c.loader)} during \`cp -R\` (${busy(c.origin)}); under emulation a guest may not count the time its vCPUs wait for a ` +
      'host core, so these shares do not rule out the CPUs.');
  }
  return said.join(' ');
}

/** Every figure of a seeding run whose tests passed, with its note; undefined when there is none to publish. */
export function seedingTable(s: SeedingResults | undefined): string | undefined {
  if (!s?.results || !Object.keys(s.results).length || (s.exitCode ?? 0) !== 0) return undefined;
  const cpu = s.cpu ?? {};
  const columns = Object.keys(cpu).length ? ['Loader\'s vCPUs busy', 'Origin\'s vCPUs busy'] : [];
  const out = [table(['Measurement', 'Seconds', ...columns], Object.entries(s.results).map(([k, v]) =>
    [k.trim(), v.toFixed(1), ...(columns.length ? [busy(cpu[k]?.loader), busy(cpu[k]?.origin)] : [])]))];
  const r = s.results;
  const copy = Object.entries(r).find(([k]) => /^\s*of which the copy/.test(k))?.[1];
  const again = r['seeding script, again after 4 changes'];
  const { loader, cp } = seedingFigures(s);
  out.push('', 'For comparison, on AWS (the figures this project started from): `cp -R` of 3,000 files (150 MB) into EFS took ' +
    '38 s and fpsync 5.9 s (6.4x); untarring 11,000 files (98 MB) took 8 minutes and a parallel rsync 1 minute (8x).');
  if (loader && cp && copy && again) {
    out.push('', `Here the loader's whole run includes a part that grows with the source, not with what it copies: mounting, listing the ` +
      `source and checking every file at the target (\`rsync --dry-run\` over NFS); a run that copied 4 files took ` +
      `${again.toFixed(1)} s. Its copy alone (${copy.toFixed(1)} s) was ${(cp[1] / copy).toFixed(1)}x faster than \`cp -R\`, ` +
      `the whole run ${(cp[1] / loader[1]).toFixed(1)}x (the 6.4x above compares fpsync's copy alone). ` +
      (seedingBound(s) ?? 'Where the lab bounds these ratios was not measured: its 50 rsync workers and the NFS client run on two emulated vCPUs.'));
  }
  if (s.note) out.push('', `Note: ${s.note}.`);
  return out.join('\n');
}
