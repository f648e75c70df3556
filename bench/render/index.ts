/**
 * Turns the recorded figures into docs/benchmarks.md, the README's benchmark section and the chart's data. Each table
 * is rendered by its own module; this one assembles the page in its order.
 */
import { Results } from '../results';
import { cmsSummary, cmsTables } from './cms';
import { fanInTable } from './fan-in';
import { labChecks, mainTable } from './main-table';
import { metadataDetail, metadataTables } from './metadata';
import { mirrorSyncTables, syncResults } from './mirror-sync';
import { protocolTables } from './protocol';
import { partLines } from './runs';
import { appTreeLabel, seedingTable } from './seeding';
import { synthFailures, synthTable } from './synth';

export { chartSpec, metaChart } from './chart';
export type { ChartSpec, MetaBar, MetaChart } from './chart';
export { CMS_MODE_LABELS, CMS_MODE_ORDER, cmsRatio, cmsRows, cmsSummary, cmsTables, quantile } from './cms';
export { fanInTable } from './fan-in';
export { mainTable, rows } from './main-table';
export type { Row } from './main-table';
export { META_MODE_LABELS, metaAvoided, metaCell, metadataDetail, metadataTables, metaSpeedup } from './metadata';
export { MIRROR_DECISION_END, MIRROR_DECISION_START, mirrorDecisionSection } from './mirror-decision';
export { mirrorSyncTables, syncProjection } from './mirror-sync';
export { protocolTables } from './protocol';
export { README_END, README_PARTS, README_START, readmePartRange, readmeSection, renderReadme } from './readme';
export type { ReadmePart } from './readme';
export { settingsLine } from './runs';
export { appTreeLabel, seedingBound, seedingFigures } from './seeding';
export { synthTable, TEMPLATE_LIMIT_BYTES } from './synth';

/** A section's heading, then the prose that introduces its figures when it has some (a blank line after each). */
function section(out: string[], heading: string, measured: boolean, prose: string[]): void {
  out.push(heading, '');
  if (measured) out.push(...prose, '');
}

/** docs/benchmarks.md: every table in the order of the page, with the prose around them. */
export function markdown(results: Results, opts: { chart?: string; smoke?: boolean }): string {
  const out: string[] = ['# Benchmarks', ''];
  out.push(
    'Written by `npm run bench` (see [bench/](../bench)) from the figures it measured and recorded in',
    '`bench/figures.json`. Each speed-up and each fraction of a ceiling is a ratio of two figures measured in the same run,',
    'on the same machine; the VMs are emulated (QEMU TCG, no KVM), so absolute speeds are 10-20x below hardware and only',
    'the ratios mean something. The origin link is shaped like a remote service, and the speed-ups of items 1 and 2 depend',
    'on how it is shaped (stated below): a slower or farther origin gives larger ratios.',
    '',
  );
  if (opts.smoke) out.push('**Smoke run**: only what this run measured is shown; it is not a benchmark result.', '');
  if (opts.chart) out.push(`![Benchmark chart](${opts.chart})`, '');
  out.push('## Results', '', mainTable(results), '');
  out.push('Speed-up: baseline time / cached time. Of the ceiling: cached speed / the ceiling\'s speed for the same work.', '');
  section(out, '## Metadata-heavy work, cold, warm and steady (item 6)', results.metadata !== undefined, [
    'Against an origin that behaves like EFS (no delegations), each workload through each mode, run by the library\'s own',
    'client user data (the baseline mounts the origin with EFS\'s recommended options). The settings are under "Runs and',
    'settings"; a part of the run that failed is listed under the tables and left out of them.',
  ]);
  out.push(metadataTables(results.metadata), '');
  if (results.metadata) out.push(metadataDetail(results.metadata));
  section(out, '## The mirrors\' sync (item 7)', syncResults(results.mirrorSync) !== undefined, [
    'What a mirror costs the origin and how long its sync takes, against the same kind of origin, by one cache node; each',
    'sync started by hand with the timer held. The settings are under "Runs and settings".',
  ]);
  out.push(mirrorSyncTables(results.mirrorSync), '');
  out.push('## Several clients, one warm file, one node (item 8)', '', fanInTable(results.fanIn), '');
  out.push('## NFSv4.1 or NFSv3 between clients and a node, and nconnect (item 9)', '', protocolTables(results.protocol), '');
  section(out, '## A real CMS: WordPress through each mode (item 10)', results.cms !== undefined, [
    'WordPress from Debian\'s archive on an origin that behaves like EFS, served by nginx and PHP-FPM on a web server that runs the',
    'library\'s client user data, its database on its own disk; wrk and a load script on another VM. The settings are under',
    '"Runs and settings".',
  ]);
  const summary = cmsSummary(results.cms);
  if (summary) out.push(summary, '');
  out.push(cmsTables(results.cms), '');
  out.push('## Synthesis: how cost grows with the fleet (item 5)', '', synthTable(results.synth), '');
  out.push(...synthFailures(results.synth));
  const seeding = seedingTable(results.seeding);
  if (seeding) out.push('## Seeding: every figure of the seeding lab (item 4)', '', seeding, '');
  const app = seedingTable(results.seedingApp);
  if (app) out.push(`## Seeding ${appTreeLabel(results.seedingApp)}: every figure (item 4)`, '', app, '');
  if (results.lab) out.push('## Checks and first passes', '', labChecks(results.lab), '');
  out.push('## Runs and settings', '');
  out.push(...partLines('Items 1-3 (lab VMs)', results.lab));
  out.push(...partLines('Item 4 (seeding lab)', results.seeding));
  if (results.seedingApp) out.push(...partLines('Item 4, a web application\'s tree (seeding lab)', results.seedingApp));
  out.push(...partLines('Item 5 (synthesis)', results.synth));
  out.push(...partLines('Item 6 (metadata lab)', results.metadata));
  out.push(...partLines('Item 7 (mirror sync lab)', results.mirrorSync));
  out.push(...partLines('Item 8 (fan-in lab)', results.fanIn));
  out.push(...partLines('Item 9 (protocol lab)', results.protocol));
  out.push(...partLines('Item 10 (CMS lab)', results.cms));
  out.push('', '## Re-running', '');
  out.push(
    '```',
    'sudo npm run bench                       # everything (root: the lab makes network namespaces and taps)',
    'npm run bench -- --only synth            # one part: synth, lab (items 1-3), seeding and seeding-app (item 4), metadata (item 6), mirror-sync (item 7), fan-in (item 8), protocol (item 9), cms (item 10)',
    'npm run bench -- --only render           # the table, chart and README section from bench/figures.json',
    'npm run bench -- --smoke                 # cheap check: synth with 1 node, rendered into a temporary folder',
    '```',
    '',
    'Options: `--delay-ms` and `--rate-mbit` shape the origin link (defaults 2 ms and 16 Mbit/s), `--out DIR` writes the',
    'table and chart elsewhere. The chart needs matplotlib, installed into `.venv` from `requirements-bench.txt` by',
    '`bench/setup.sh` (the bench runs it).',
    '',
  );
  return out.join('\n');
}
