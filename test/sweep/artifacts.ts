/**
 * Where a deploy-time value lands in a synthesized template, and whether, resolved to a hostile value, it stays data
 * there: every artifact that holds one is resolved as CloudFormation would and then read as its consumer reads it
 * (cloud-init's MIME split, YAML, JSON, a mount option list, an env file, bash in a sandbox with canaries).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { CfnTemplate, PSEUDO_VALUES, resolveIntrinsics, resolveUserData, UnresolvedIntrinsicError } from '../heavy/lab/harness/user-data';
import { runScript } from '../util/run-script';
import { mimeParts, parameters } from '../util/user-data';

/** One place a value reached: a resource's top-level property (the artifact) and the path inside it. */
export interface Place {
  readonly resource: string;
  readonly type: string;
  /** `UserData`, `Volumes`, `Manifest`, ...: the resource's property that holds it, from the template's Properties. */
  readonly property: string;
  readonly at: string;
}

/** What an artifact did with a hostile value. */
export interface Finding {
  readonly kind: 'execution' | 'changed meaning';
  /** The export name whose hostile value did it (executions), or the artifact (changed meanings). */
  readonly what: string;
  readonly where: string;
  readonly detail: string;
}

/** What one check of a resolved template found, and what it read. */
export interface CheckResult {
  readonly findings: Finding[];
  /** Artifacts read, each as `consumer: resource.property`. */
  readonly parsed: string[];
  /** Sandbox runs of shell. */
  readonly runs: number;
}

/** Every place `{ "Fn::ImportValue": name }` stands in the template's resources, for each name. */
export function placesOf(template: CfnTemplate, names: readonly string[]): Map<string, Place[]> {
  const out = new Map<string, Place[]>(names.map((n) => [n, []]));
  const walk = (node: unknown, resource: string, type: string, property: string, at: string) => {
    if (Array.isArray(node)) {
      node.forEach((x, i) => walk(x, resource, type, property, `${at}[${i}]`));
    } else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (typeof o['Fn::ImportValue'] === 'string' && out.has(o['Fn::ImportValue'])) {
        out.get(o['Fn::ImportValue'])!.push({ resource, type, property, at });
      }
      for (const [k, v] of Object.entries(o)) walk(v, resource, type, property, `${at}.${k}`);
    }
  };
  for (const [id, r] of Object.entries(template.Resources ?? {})) {
    for (const [k, v] of Object.entries(r.Properties ?? {})) walk(v, id, r.Type, k, k);
  }
  return out;
}

/**
 * Resolves `value` with `values`, giving every other intrinsic (a resource's Ref or attribute, an asset parameter,
 * the AZs) a plain stand-in: only the values under test are hostile.
 */
function resolveWith<T>(resolve: (values: Record<string, unknown>) => T, values: Record<string, unknown>): T {
  const all: Record<string, unknown> = { ...PSEUDO_VALUES, 'Fn::GetAZs': ['us-east-1a', 'us-east-1b'], ...values };
  for (let i = 0; i < 20; i++) {
    try {
      return resolve(all);
    } catch (e) {
      if (!(e instanceof UnresolvedIntrinsicError)) throw e;
      const keys = new Set(e.missing.map((m) => /^((?:Ref|Fn::GetAtt|Fn::ImportValue):\S+)/.exec(m)?.[1]));
      for (const key of keys) {
        if (!key || key in all) throw e;
        all[key] = `stand-in-${key.replace(/[^A-Za-z0-9]/g, '').toLowerCase().slice(-40)}`;
      }
    }
  }
  throw new Error('the template did not resolve');
}

/** A value's shape: what a consumer sees of its structure (keys, lengths, types), not its scalars' text. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a < b ? -1 : 1).map(([k, x]) => [k, shape(x)]));
  return typeof v;
}

/** The header of a rendered user data as bash reads it: its parameters' names, and how many lines it has. */
function headerShape(script: string): unknown {
  const lines = script.split('\n');
  const header = lines.slice(lines.indexOf('set -a') + 1, lines.indexOf('set +a'));
  return { names: Object.keys(parameters(script)).sort(), lines: header.length };
}

/** Whether a place is inside an instance's user data. */
function isUserData(p: Place): boolean {
  return p.property === 'UserData' || p.at.startsWith('LaunchTemplateData.UserData');
}

/** The canaries a run left: the files its hostile values would have created had any of them run. */
function canaries(dir: string): string[] {
  return fs.readdirSync(dir);
}

/**
 * Resolves every artifact the tried values reach, with `benign` values and with `hostile` ones, and reads each as its
 * consumer does. User data: bash's view of the header (names and lines) and a sandboxed run whose canaries must stay
 * absent; a MIME document: its parts (count and content types) as cloud-init splits it, each YAML part's structure,
 * each shell part that holds a value run in the sandbox. Other properties: a JSON document's structure, a mount option
 * list's option names (Docker's `o`), an env file's names; any other field is one value of an AWS API call.
 */
export function checkTemplate(template: CfnTemplate, places: Place[], benign: Record<string, unknown>, hostile: Record<string, unknown>,
  canaryDir: string): CheckResult {
  const findings: Finding[] = [];
  const parsed: string[] = [];
  let runs = 0;
  const artifacts = new Map<string, Place>();
  for (const p of places) artifacts.set(`${p.resource}.${isUserData(p) ? 'UserData' : p.property}`, p);
  for (const [name, p] of artifacts) {
    const changed = (consumer: string, detail: string) => findings.push({ kind: 'changed meaning', what: name, where: consumer, detail });
    if (isUserData(p)) {
      const read = (v: Record<string, unknown>) => resolveWith((all) => resolveUserData(template, p.resource, all as never), v);
      const [b, h] = [read(benign), read(hostile)];
      const [mb, mh] = [mimeParts(b), mimeParts(h)];
      const scripts: string[] = [];
      if (mb) {
        parsed.push(`cloud-init MIME: ${name}`);
        const types = (m: ReturnType<typeof mimeParts>) => m?.parts.map((x) => x.type);
        if (JSON.stringify(types(mb)) !== JSON.stringify(types(mh)) || mh?.end !== mb.end) {
          changed('cloud-init MIME', `parts ${JSON.stringify(types(mb))} became ${JSON.stringify(types(mh))}`);
        }
        mb.parts.forEach((part, i) => {
          const other = mh?.parts[i];
          if (!other || other.body === part.body) return;
          if (/yaml|node\.eks\.aws/.test(part.type) || /^(apiVersion|#cloud-config)/m.test(part.body)) {
            parsed.push(`YAML (${part.type}): ${name}`);
            const docs = (t: string) => parseAllDocuments(t).map((d) => (d.errors.length ? { errors: d.errors.length } : d.toJS()));
            let hs: unknown;
            try {
              hs = shape(docs(other.body));
            } catch (e) {
              hs = `unparsable: ${(e as Error).message}`;
            }
            if (JSON.stringify(shape(docs(part.body))) !== JSON.stringify(hs)) changed(`YAML part ${part.type}`, JSON.stringify(hs).slice(0, 300));
          } else if (part.type === 'text/x-shellscript') {
            scripts.push(other.body);
          } else {
            changed(`MIME part ${part.type}`, 'a part of a type the sweep cannot read holds a deploy-time value');
          }
        });
      } else {
        scripts.push(h);
      }
      for (const script of scripts) {
        parsed.push(`bash: ${name}`);
        if (script.includes('\nset -a\n') && JSON.stringify(headerShape(script)) !== JSON.stringify(headerShape(b.includes('\nset -a\n') ? b : script))) {
          changed('bash header', JSON.stringify(headerShape(script)).slice(0, 300));
        }
        runScript(script, [], { tags: { 'cdk-efs-cache:signal-resource': 'SweepGroupASG0123ABCD' } });
        runs++;
      }
      continue;
    }
    const property = template.Resources![p.resource].Properties![p.property];
    const read = (v: Record<string, unknown>) => resolveWith((all) => resolveIntrinsics(property, template, all as never), v);
    const [b, h] = [read(benign), read(hostile)];
    parsed.push(...readFields(b, h, name, changed));
  }
  for (const file of canaries(canaryDir)) findings.push({ kind: 'execution', what: file, where: 'a sandboxed run', detail: 'its canary exists' });
  return { findings, parsed, runs };
}

/**
 * Compares the strings of a resolved property with benign and hostile values as their consumers read them, and
 * returns what it read. Strings are compared where they sit in the property (the same path in both).
 */
function readFields(b: unknown, h: unknown, name: string, changed: (consumer: string, detail: string) => void, at = ''): string[] {
  if (Array.isArray(b)) {
    if (!Array.isArray(h) || h.length !== b.length) {
      changed('CloudFormation property', `${at}: a list of ${b.length} became ${JSON.stringify(h).slice(0, 200)}`);
      return [];
    }
    return b.flatMap((x, i) => readFields(x, h[i], name, changed, `${at}[${i}]`));
  }
  if (b && typeof b === 'object') {
    const hb = (h ?? {}) as Record<string, unknown>;
    if (JSON.stringify(Object.keys(b).sort()) !== JSON.stringify(Object.keys(hb).sort())) changed('CloudFormation property', `${at}: keys changed`);
    return Object.entries(b).flatMap(([k, x]) => readFields(x, hb[k], name, changed, `${at}.${k}`));
  }
  if (typeof b !== 'string' || b === h) return [];
  const hs = String(h);
  if (/^\s*[[{]/.test(b)) {
    let hp: unknown;
    try {
      hp = shape(JSON.parse(hs));
    } catch (e) {
      hp = `unparsable: ${(e as Error).message}`;
    }
    if (JSON.stringify(shape(JSON.parse(b))) !== JSON.stringify(hp)) changed('JSON', `${name}${at}: ${JSON.stringify(hp).slice(0, 300)}`);
    return [`JSON: ${name}${at}`];
  }
  if (/DriverOpts\.o$/.test(at)) {
    const names = (s: string) => s.split(',').map((o) => o.split('=')[0]);
    if (JSON.stringify(names(b)) !== JSON.stringify(names(hs))) changed('mount options', `${name}${at}: ${JSON.stringify(names(hs))}`);
    return [`mount option list: ${name}${at}`];
  }
  if (/\n/.test(b) && /^[A-Z_]+=/m.test(b)) {
    const names = (s: string) => s.split('\n').filter((l) => l.trim()).map((l) => l.split('=')[0]);
    if (JSON.stringify(names(b)) !== JSON.stringify(names(hs))) changed('env file', `${name}${at}: ${JSON.stringify(names(hs))}`);
    return [`env file: ${name}${at}`];
  }
  if (/(PolicyDocument|KeyPolicy|Policies)/.test(name + at)) {
    const wild = (s: string) => (s.match(/[*?]/g) ?? []).length;
    if (wild(hs) > wild(b)) changed('IAM', `${name}${at}: a deploy-time value widens ${JSON.stringify(hs).slice(0, 200)}`);
    return [`IAM policy: ${name}${at}`];
  }
  return [`AWS API field: ${name}${at}`];
}

/** A fresh folder for the canaries of one check. */
export function canaryFolder(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-sweep-'));
}
