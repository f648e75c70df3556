/** The parts of the README and docs pages written by the bench between markers, and how to render them in place. */
import { Results } from '../results';
import { cmsSummary } from './cms';
import { mainTable } from './main-table';
import { metadataTables } from './metadata';
import { MIRROR_DECISION_END, MIRROR_DECISION_START, mirrorDecisionSection } from './mirror-decision';
import { settingsLine } from './runs';
import { synthTable } from './synth';

export const README_START = '<!-- benchmarks:start (written by npm run bench) -->';
export const README_END = '<!-- benchmarks:end -->';

/** The README's benchmark section, from its start marker up to (not including) its end marker. */
export function readmeSection(results: Results): string {
  return [
    README_START,
    `Measured by \`npm run bench\` (${settingsLine(results)}); details, settings and every figure in`,
    '[docs/benchmarks.md](docs/benchmarks.md).',
    '',
    '![Benchmark chart](docs/benchmarks.png)',
    '',
    mainTable(results),
    '',
    ...(cmsSummary(results.cms) ? [cmsSummary(results.cms)!, ''] : []),
    '**Metadata-heavy work (item 6)**, against an origin with no delegations, like EFS:',
    '',
    metadataTables(results.metadata),
    '',
    synthTable(results.synth),
    '',
  ].join('\n');
}

/** A part of the README or of a docs page written by the bench: from its start marker up to (not including) its end marker. */
export interface ReadmePart {
  /** What the part is, for messages. */
  readonly name: string;
  /** The file that holds it, from the repository's root. */
  readonly file: string;
  readonly start: string;
  readonly end: string;
  readonly render: (results: Results) => string;
}

export const README_PARTS: ReadmePart[] = [
  { name: 'benchmark section', file: 'README.md', start: README_START, end: README_END, render: readmeSection },
  { name: 'Mirrors decision table', file: 'docs/mirrors.md', start: MIRROR_DECISION_START, end: MIRROR_DECISION_END, render: mirrorDecisionSection },
];

/** Where a part's generated text is in `text` ([start, end)), or undefined when its markers are missing or out of order. */
export function readmePartRange(text: string, part: ReadmePart): [number, number] | undefined {
  const start = text.indexOf(part.start);
  const end = start < 0 ? -1 : text.indexOf(part.end, start);
  return start >= 0 && end > start ? [start, end] : undefined;
}

/** `text` (the file `file`) with every part of that file between its markers rendered again; `missing` names the parts without markers. */
export function renderReadme(text: string, results: Results, file = 'README.md'): { text: string; missing: string[] } {
  let out = text;
  const missing: string[] = [];
  for (const part of README_PARTS.filter((p) => p.file === file)) {
    const range = readmePartRange(out, part);
    if (!range) {
      missing.push(part.name);
      continue;
    }
    out = out.slice(0, range[0]) + part.render(results) + out.slice(range[1]);
  }
  return { text: out, missing };
}
