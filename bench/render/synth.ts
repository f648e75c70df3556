/** The synthesis table (item 5): synth time, template size and resources as the fleet grows. */
import { SynthResults } from '../results';
import { kib, NOT_MEASURED, pct, table, x } from './format';

/** CloudFormation's limit on a template's size (a template uploaded through S3), bytes. */
export const TEMPLATE_LIMIT_BYTES = 1_000_000;

/** The synthesis table in Markdown, each size compared with one node. */
export function synthTable(synth: SynthResults | undefined): string {
  if (!synth) return `Synthesis (item 5): ${NOT_MEASURED}.`;
  const one = synth.rows.find((r) => r.nodes === 1 && r.seconds !== undefined);
  return table(
    ['Cache nodes', 'Synth time', 'vs 1 node', 'Template', 'vs 1 node', "Of CloudFormation's 1 MB limit", 'Resources'],
    synth.rows.map((r) => r.seconds === undefined || r.templateBytes === undefined
      ? [String(r.nodes), `does not synthesize: ${r.error ?? r.defaultError ?? 'unknown'}`, '', '', '', '', '']
      : [
        `${r.nodes}${r.elastic ? ' (elastic: maxNodes)' : ''}${r.dashboard ? '' : ' (without dashboard)'}`,
        `${r.seconds.toFixed(2)} s`, one?.seconds ? x(r.seconds / one.seconds) : '',
        kib(r.templateBytes), one?.templateBytes ? x(r.templateBytes / one.templateBytes) : '',
        pct(r.templateBytes / TEMPLATE_LIMIT_BYTES), String(r.resources ?? ''),
      ]),
  );
}

/** A line for each fleet size whose default stack (with its dashboard) did not synthesize, each followed by an empty line. */
export function synthFailures(synth: SynthResults | undefined): string[] {
  const failed = synth?.rows.filter((r) => r.defaultError) ?? [];
  return failed.flatMap((r) => (r.error ? [] : [`With ${r.nodes} nodes the default stack (with its dashboard) did not synthesize: "${r.defaultError}".`, '']));
}
