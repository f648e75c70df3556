/** The seeding lab's figures (item 4): found by their names for the results table, and listed in full. */
import { SeedingResults } from '../results';
import { table } from './format';

/** The seeding lab's figures, found by their names (whatever else it reports is listed under the table). */
export function seedingFigures(s: SeedingResults | undefined): {
  loader?: [string, number]; cp?: [string, number]; rsync?: [string, number]; ceiling?: [string, number];
} {
  const entries = Object.entries(s?.results ?? {});
  const find = (re: RegExp, not?: RegExp) => entries.find(([k]) => re.test(k.trim()) && !(not && not.test(k)));
  return {
    loader: find(/seed|loader|parallel/i, /again|of which|fpsync|ceiling|warm|node/i),
    cp: find(/^cp -R$/),
    rsync: find(/^rsync -a$/),
    ceiling: find(/ceiling/i),
  };
}

/** Every figure of a seeding run whose tests passed, with its note; undefined when there is none to publish. */
export function seedingTable(s: SeedingResults | undefined): string | undefined {
  if (!s?.results || !Object.keys(s.results).length || (s.exitCode ?? 0) !== 0) return undefined;
  const out = [table(['Measurement', 'Seconds'], Object.entries(s.results).map(([k, v]) => [k.trim(), v.toFixed(1)]))];
  if (s.note) out.push('', `Note: ${s.note}.`);
  return out.join('\n');
}
