/** The seeding lab's figures (item 4): found by their names for the results table, and listed in full. */
import { SeedingResults } from '../results';
import { table } from './format';

/**
 * The trees the seeding lab loads: its own generated one (3,000 files of 50 KiB; figures named as they are) and
 * WordPress's, as Debian packs it (figures named "WordPress: ..."; the run's settings give its version and file count).
 */
export const SEEDING_TREES = [
  { prefix: '', label: 'a generated tree' },
  { prefix: 'WordPress: ', label: 'WordPress (Debian\'s package)' },
] as const;

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

/** Every figure of a seeding run whose tests passed, with its note; undefined when there is none to publish. */
export function seedingTable(s: SeedingResults | undefined): string | undefined {
  if (!s?.results || !Object.keys(s.results).length || (s.exitCode ?? 0) !== 0) return undefined;
  const out = [table(['Measurement', 'Seconds'], Object.entries(s.results).map(([k, v]) => [k.trim(), v.toFixed(1)]))];
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
      `the whole run ${(cp[1] / loader[1]).toFixed(1)}x (the 6.4x above compares fpsync's copy alone). Where the lab bounds ` +
      'these ratios was not measured: its 50 rsync workers and the NFS client run on two emulated vCPUs.');
  }
  if (s.note) out.push('', `Note: ${s.note}.`);
  return out.join('\n');
}
