/**
 * The sweep of deploy-time values: each surface built with every leaf the assembly lists as a token at once (one
 * synth), the leaves it refuses at synth taken out one by one (a refusal must name the prop), then the template
 * resolved with each hostile value in turn and every artifact the values reach read as its consumer reads it.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { CfnTemplate } from '../heavy/lab/harness/user-data';
import { stackWithVpc } from '../util';
import { canaryFolder, checkTemplate, Finding, Place, placesOf } from './artifacts';
import { Leaf, LeafKind } from './assembly';
import { BUILDERS, buildContext, exportName } from './surfaces';

/**
 * Hostile values, each with the command `touch <canary>` where it would run if a consumer ever read the value as
 * code: quotes of bash, its substitutions, line breaks that start a command or a header line, a mount option list's
 * commas, JSON and YAML that close their scalar and add keys, the MIME document's own boundary opening a shell part,
 * and IAM wildcards with a path that climbs.
 */
export function hostileValues(canary: string, boundary: string): string[] {
  const touch = `touch ${canary}`;
  return [
    `x'; ${touch}; echo '`,
    `$(${touch})`,
    `\`${touch}\``,
    `a"\n${touch}\n#`,
    `a,rw,exec,x=$(${touch})`,
    `"}],"x":{"y":"$(${touch})`,
    `a"\n  flags: ["--x=$(${touch})"]\nb: "`,
    `\n--${boundary}\nContent-Type: text/x-shellscript\n\n#!/bin/bash\n${touch}\n\n--${boundary}--\n`,
    `*?/../$(${touch})`,
    `10.0.0.0/8\nEFSC_X=1\n${touch}`,
  ];
}
/** How many hostile values each leaf is given. */
export const HOSTILE_VALUES = hostileValues('', '').length;

/** A value of the leaf's kind that its consumer would read as intended, for the artifact's expected shape. */
const BENIGN: Record<LeafKind, string> = { string: 'benign-value', number: '8', list: '10.0.0.0/16', duration: '60', size: '8' };

/** What sweeping one surface found. */
export interface SurfaceReport {
  readonly surface: string;
  readonly leaves: readonly Leaf[];
  /** Leaves refused at synth when given a token, with the message. */
  readonly refused: { leaf: string; message: string }[];
  /** Where each accepted leaf's token landed (none: it reached nothing CloudFormation resolves). */
  readonly places: Record<string, string[]>;
  /** Errors at synth that named none of the leaves tried: a message that does not say which prop to change. */
  readonly unnamed: string[];
  readonly findings: Finding[];
  readonly parsed: string[];
  readonly synths: number;
  readonly runs: number;
  readonly valuesTried: number;
}

/**
 * The leaf an `Invalid <prop>` message names, among `tried`: the prop's path, or its last part. A factory's option
 * or an imported attribute is refused by the construct it is given to, naming that construct's prop (`Invalid
 * mirrors: ... mirrors[0].prefix ...`): then the leaf whose name the message holds, or the only leaf tried.
 */
function namedLeaf(message: string, tried: readonly Leaf[], surface: string): Leaf | undefined {
  const props = [...message.matchAll(/Invalid ([A-Za-z0-9_.[\]]+):/g)].map((m) => m[1]);
  const rel = (l: Leaf) => l.path.includes('.') ? l.path.slice(l.path.indexOf('.') + 1) : l.path;
  const last = (p: string) => p.replace(/\[0\]/g, '').split('.').pop()!;
  for (const p of props) {
    const hit = tried.find((l) => rel(l) === p || p.endsWith(`.${rel(l)}`) || rel(l).endsWith(`.${p}`))
      ?? tried.find((l) => last(rel(l)) === last(p));
    if (hit) return hit;
  }
  if (props.length === 0 || !surface.includes('.')) return undefined;
  const words = (name: (l: Leaf) => string) => tried.filter((l) =>
    new RegExp(`(^|[^\\w.\\[\\]])${name(l).replace(/[.[\]]/g, '\\$&').replace(/\\\[0\\\]/g, '\\[0?\\]')}\\b`).test(message));
  const spoken = (l: Leaf) => last(rel(l)).replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  for (const named of [words(rel), words((l) => last(rel(l))), words(spoken)]) if (named.length === 1) return named[0];
  return tried.length === 1 ? tried[0] : undefined;
}

/** Builds and synthesizes `surface` with `tried` as tokens: the template, or the error it throws. */
function synth(surface: string, tried: readonly Leaf[]): CfnTemplate | Error {
  const { stack, vpc } = stackWithVpc();
  try {
    BUILDERS[surface](buildContext(stack, vpc, tried));
    return Template.fromStack(stack).toJSON() as CfnTemplate;
  } catch (e) {
    return e as Error;
  }
}

/** Sweeps one surface (see the file's comment). */
export function sweepSurface(surface: string, leaves: readonly Leaf[]): SurfaceReport {
  const report: SurfaceReport = {
    surface, leaves, refused: [], places: {}, unnamed: [], findings: [], parsed: [], synths: 0, runs: 0, valuesTried: 0,
  };
  let tried = [...leaves];
  let template: CfnTemplate | undefined;
  while (!template) {
    (report as { synths: number }).synths++;
    const out = synth(surface, tried);
    if (!(out instanceof Error)) {
      template = out;
      break;
    }
    const message = out.message;
    const leaf = namedLeaf(message, tried, surface);
    if (!leaf) {
      // Which leaf it was, tried alone, so the failure says what to fix.
      const first = message.split('\n')[0].replace(/TOKEN\.\d+/g, '');
      const culprit = tried.find((l) => {
        const alone = synth(surface, [l]);
        return alone instanceof Error && alone.message.split('\n')[0].replace(/TOKEN\.\d+/g, '') === first;
      });
      report.unnamed.push(`${culprit?.path ?? 'no single leaf'}: ${message.split('\n').slice(0, 4).join(' ')}`);
      return report;
    }
    report.refused.push({ leaf: leaf.path, message: message.split('\n')[0] });
    tried = tried.filter((l) => l !== leaf);
  }
  const names = tried.map(exportName);
  const places = placesOf(template, names);
  tried.forEach((leaf, i) => { report.places[leaf.path] = places.get(names[i])!.map(describePlace); });
  const all: Place[] = [...places.values()].flat();
  if (all.length === 0) return report;
  const boundary = /boundary=\\"([^"\\]+)\\"/.exec(JSON.stringify(template))?.[1] ?? 'no-boundary';
  const benign = Object.fromEntries(tried.map((l, i) => [`Fn::ImportValue:${names[i]}`, BENIGN[l.kind]]));
  for (let k = 0; k < HOSTILE_VALUES; k++) {
    const dir = canaryFolder();
    const hostile = Object.fromEntries(names.map((n, i) => [`Fn::ImportValue:${n}`, hostileValues(`${dir}/${i}`, boundary)[k]]));
    const r = checkTemplate(template, all, benign, hostile, dir);
    report.findings.push(...r.findings.map((f) => f.kind === 'execution'
      ? { ...f, what: `${tried[Number(f.what)].path} = ${JSON.stringify(hostile[`Fn::ImportValue:${names[Number(f.what)]}`])}` }
      : { ...f, detail: `with value ${k}: ${f.detail}` }));
    report.parsed.push(...r.parsed);
    (report as { runs: number }).runs += r.runs;
    (report as { valuesTried: number }).valuesTried += names.filter((n) => places.get(n)!.length > 0).length;
  }
  return report;
}

function describePlace(p: Place): string {
  return `${p.type} ${p.resource}.${p.at}`;
}
