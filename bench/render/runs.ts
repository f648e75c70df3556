/** The runs behind the figures: when, on which machine and with which settings each part was measured. */
import { PartRun, Results } from '../results';
import { NOT_MEASURED } from './format';

function machineLine(p: PartRun): string {
  const m = p.machine;
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel}${m.qemu ? `, QEMU ${m.qemu} (TCG)` : ''}`;
}

/** A part's run as a Markdown list item, its settings as items under it. */
export function partLines(name: string, p: PartRun | undefined): string[] {
  if (!p) return [`- **${name}**: ${NOT_MEASURED}.`];
  const lines = [`- **${name}**: ${p.date.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}, ${Math.round(p.durationSeconds)} s; ${machineLine(p)}.`];
  for (const [k, v] of Object.entries(p.settings)) lines.push(`  - ${k}: ${v}`);
  return lines;
}

/** One-line summary of the settings, for the README and the chart. */
export function settingsLine(results: Results): string {
  const p = results.lab ?? results.synth ?? results.seeding;
  const parts = [p ? `${p.date.slice(0, 10)}, ${machineLine(p)}` : ''];
  if (results.lab) parts.push(`items 1-3: ${results.lab.settings['origin link'].replace(/ \(EFS stand-in.*\)$/, '')}`);
  return parts.filter(Boolean).join('; ');
}
