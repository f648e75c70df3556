/**
 * Turns the UserData of a synthesized CloudFormation template into the plain script EC2 would hand to cloud-init,
 * with the template's intrinsic functions resolved from values the caller gives (lab addresses, a fake file system
 * id, the region). The lab runs exactly what CDK rendered, not a hand-written copy of it.
 */

import { codeSha256, keptCodePath, renderedCode } from '../../../../lib/instance/user-data';

/** A resolved value: scalars, lists (Fn::Split, Fn::GetAZs, list parameters) or a condition. */
export type IntrinsicValue = string | readonly string[] | boolean;

/**
 * Values for what only a deployment knows. Keys:
 * - 'Ref:LogicalId' (also pseudo parameters: 'AWS::Region' or 'Ref:AWS::Region', 'AWS::URLSuffix', ...)
 * - 'Fn::GetAtt:LogicalId.Attribute'
 * - 'Fn::ImportValue:ExportName'
 * - 'Fn::GetAZs' (a list)
 * - 'Condition:Name' (true or false; otherwise the template's Conditions are evaluated)
 */
export type IntrinsicValues = Readonly<Record<string, IntrinsicValue>>;

/** A CloudFormation template as JSON (the output of Template.fromStack(...).toJSON() or cdk.out). */
export interface CfnTemplate {
  readonly Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  readonly Parameters?: Record<string, { Type?: string; Default?: unknown }>;
  readonly Mappings?: Record<string, Record<string, Record<string, unknown>>>;
  readonly Conditions?: Record<string, unknown>;
}

/**
 * The pseudo parameters of the account and region the lab, the emulator and the host's runs of user data stand for
 * (moto's default account): a template's code asset lives in this account's and region's assets bucket.
 */
export const PSEUDO_VALUES: IntrinsicValues = {
  'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012', 'AWS::URLSuffix': 'amazonaws.com',
};

/** Thrown when the template uses intrinsics that the given values do not cover. */
export class UnresolvedIntrinsicError extends Error {
  constructor(readonly where: string, readonly missing: readonly string[]) {
    super(
      `cannot resolve ${missing.length} intrinsic(s) in ${where}:\n` +
        missing.map((m) => `  - ${m}`).join('\n') +
        '\nPass a value for each (keys like Ref:LogicalId, Fn::GetAtt:LogicalId.Attribute, AWS::Region).',
    );
    this.name = 'UnresolvedIntrinsicError';
  }
}

const USER_DATA_TYPES: Record<string, (props: Record<string, unknown>) => unknown> = {
  'AWS::EC2::LaunchTemplate': (p) => (p.LaunchTemplateData as Record<string, unknown> | undefined)?.UserData,
  'AWS::EC2::Instance': (p) => p.UserData,
  'AWS::AutoScaling::LaunchConfiguration': (p) => p.UserData,
};

/** Logical ids of the resources in a template that carry user-data. */
export function userDataResources(template: CfnTemplate): { logicalId: string; type: string }[] {
  return Object.entries(template.Resources ?? {})
    .filter(([, r]) => r.Type in USER_DATA_TYPES && USER_DATA_TYPES[r.Type](r.Properties ?? {}) !== undefined)
    .map(([logicalId, r]) => ({ logicalId, type: r.Type }));
}

/**
 * The plain user-data script of an AWS::EC2::LaunchTemplate (LaunchTemplateData.UserData), an AWS::EC2::Instance or
 * an AWS::AutoScaling::LaunchConfiguration. UserData is Fn::Base64 of a string or of intrinsics, or a base64 string.
 * @throws UnresolvedIntrinsicError naming every intrinsic the values do not cover
 */
export function resolveUserData(template: CfnTemplate, logicalId: string, values: IntrinsicValues = {}): string {
  const resource = template.Resources?.[logicalId];
  if (!resource) {
    const known = userDataResources(template).map((r) => `${r.logicalId} (${r.type})`);
    throw new Error(`no resource ${logicalId} in the template; resources with user-data: ${known.join(', ') || 'none'}`);
  }
  const pick = USER_DATA_TYPES[resource.Type];
  if (!pick) throw new Error(`${logicalId} is a ${resource.Type}, not one of ${Object.keys(USER_DATA_TYPES).join(', ')}`);
  const userData = pick(resource.Properties ?? {});
  if (userData === undefined) throw new Error(`${logicalId} (${resource.Type}) has no UserData`);
  const where = `UserData of ${logicalId}`;
  if (typeof userData === 'string') return Buffer.from(userData, 'base64').toString('utf8');
  if (!isObject(userData) || !('Fn::Base64' in userData) || Object.keys(userData).length !== 1) {
    throw new Error(`${where} is not Fn::Base64 of a script: ${JSON.stringify(userData).slice(0, 200)}`);
  }
  const script = resolveIntrinsics(userData['Fn::Base64'], template, values, where);
  if (typeof script !== 'string') throw new Error(`${where} resolves to ${JSON.stringify(script)}, not a string`);
  return script;
}

/**
 * Resolves every intrinsic function in a template fragment.
 * @throws UnresolvedIntrinsicError naming every intrinsic the values do not cover
 */
export function resolveIntrinsics(value: unknown, template: CfnTemplate, values: IntrinsicValues = {}, where = 'value'): unknown {
  const r = new Resolver(template, values);
  const out = r.resolve(value, '$');
  if (r.missing.length) throw new UnresolvedIntrinsicError(where, r.missing);
  return out;
}

/** Placeholder returned for what could not be resolved, so that every problem is found in one pass. */
const UNRESOLVED = '\u0000unresolved\u0000';

class Resolver {
  readonly missing: string[] = [];

  constructor(private readonly template: CfnTemplate, private readonly values: IntrinsicValues) {}

  resolve(node: unknown, at: string): unknown {
    if (Array.isArray(node)) return node.map((x, i) => this.resolve(x, `${at}[${i}]`));
    if (!isObject(node)) return node;
    const keys = Object.keys(node);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::') || keys[0] === 'Condition')) {
      return this.intrinsic(keys[0], node[keys[0]], `${at}.${keys[0]}`);
    }
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = this.resolve(node[k], `${at}.${k}`);
    return out;
  }

  private intrinsic(fn: string, arg: unknown, at: string): unknown {
    switch (fn) {
      case 'Ref':
        return this.ref(String(arg), at);
      case 'Fn::GetAtt': {
        const [id, attr] = Array.isArray(arg) ? [String(arg[0]), this.str(arg[1], at)] : splitOnce(String(arg), '.');
        return this.lookup(`Fn::GetAtt:${id}.${attr}`, at);
      }
      case 'Fn::Join': {
        const [delim, list] = this.args(arg, 2, fn, at);
        return this.list(list, at).join(this.str(delim, at));
      }
      case 'Fn::Select': {
        const [index, list] = this.args(arg, 2, fn, at);
        const items = this.list(list, at);
        const i = Number(this.resolve(index, at));
        if (items.includes(UNRESOLVED)) return UNRESOLVED;
        if (!Number.isInteger(i) || i < 0 || i >= items.length) {
          this.missing.push(`Fn::Select index ${i} out of range for ${JSON.stringify(items)} (at ${at})`);
          return UNRESOLVED;
        }
        return items[i];
      }
      case 'Fn::Split': {
        const [delim, source] = this.args(arg, 2, fn, at);
        const s = this.str(source, at);
        return s === UNRESOLVED ? [UNRESOLVED] : s.split(this.str(delim, at));
      }
      case 'Fn::Sub':
        return this.sub(arg, at);
      case 'Fn::Base64':
        return Buffer.from(this.str(arg, at)).toString('base64');
      case 'Fn::ImportValue':
        return this.lookup(`Fn::ImportValue:${this.str(arg, at)}`, at);
      case 'Fn::GetAZs':
        return this.lookup('Fn::GetAZs', at);
      case 'Fn::FindInMap': {
        const [map, k1, k2] = this.args(arg, 3, fn, at).map((x) => this.str(x, at));
        const v = this.template.Mappings?.[map]?.[k1]?.[k2];
        if (v === undefined) {
          this.missing.push(`Fn::FindInMap [${map}, ${k1}, ${k2}]: no such mapping entry (at ${at})`);
          return UNRESOLVED;
        }
        return this.resolve(v, at);
      }
      case 'Fn::If': {
        const [cond, yes, no] = this.args(arg, 3, fn, at);
        const c = this.condition(String(cond), at);
        return this.resolve(c ? yes : no, at);
      }
      case 'Condition':
        return this.condition(String(arg), at);
      case 'Fn::Equals': {
        const [a, b] = this.args(arg, 2, fn, at).map((x) => JSON.stringify(this.resolve(x, at)));
        return a === b;
      }
      case 'Fn::Not':
        return !this.bool(this.args(arg, 1, fn, at)[0], at);
      case 'Fn::And':
        return (arg as unknown[]).map((x) => this.bool(x, at)).every(Boolean);
      case 'Fn::Or':
        return (arg as unknown[]).map((x) => this.bool(x, at)).some(Boolean);
      default:
        this.missing.push(`${fn} is not supported (at ${at})`);
        return UNRESOLVED;
    }
  }

  private ref(name: string, at: string): unknown {
    if (name === 'AWS::NoValue') return undefined;
    for (const key of [`Ref:${name}`, name]) {
      if (key in this.values && (key !== name || name.startsWith('AWS::'))) return this.values[key];
    }
    const param = this.template.Parameters?.[name];
    // A plain parameter's default is its value; an SSM parameter's default is only the parameter's name.
    if (param && param.Default !== undefined && !String(param.Type ?? '').startsWith('AWS::')) {
      return String(param.Type) === 'CommaDelimitedList' ? String(param.Default).split(',') : String(param.Default);
    }
    this.missing.push(`Ref:${name}${param ? ` (a template parameter of type ${param.Type})` : ''} (at ${at})`);
    return UNRESOLVED;
  }

  private lookup(key: string, at: string): IntrinsicValue {
    if (key in this.values) return this.values[key];
    this.missing.push(`${key} (at ${at})`);
    return UNRESOLVED;
  }

  private condition(name: string, at: string): boolean {
    const key = `Condition:${name}`;
    if (key in this.values) {
      const v = this.values[key];
      return v === true || v === 'true';
    }
    const def = this.template.Conditions?.[name];
    if (def === undefined) {
      this.missing.push(`${key} (no such condition; at ${at})`);
      return false;
    }
    return this.bool(def, `${at}<${name}>`);
  }

  private bool(node: unknown, at: string): boolean {
    const v = this.resolve(node, at);
    return v === true || v === 'true';
  }

  private sub(arg: unknown, at: string): string {
    const [text, vars] = Array.isArray(arg) ? [this.str(arg[0], at), (arg[1] ?? {}) as Record<string, unknown>] : [String(arg), {}];
    return text.replace(/\$\{([^}]*)\}/g, (_m, name: string) => {
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (name in vars) return this.str(vars[name], at);
      if (name.includes('.') && !name.startsWith('AWS::')) {
        const [id, attr] = splitOnce(name, '.');
        return this.scalar(this.lookup(`Fn::GetAtt:${id}.${attr}`, at), at);
      }
      return this.scalar(this.ref(name, at), at);
    });
  }

  private args(arg: unknown, n: number, fn: string, at: string): unknown[] {
    if (!Array.isArray(arg) || arg.length !== n) {
      this.missing.push(`${fn} expects ${n} arguments, got ${JSON.stringify(arg)} (at ${at})`);
      return new Array(n).fill(UNRESOLVED);
    }
    return arg;
  }

  private list(node: unknown, at: string): string[] {
    const v = Array.isArray(node) ? node.map((x, i) => this.resolve(x, `${at}[${i}]`)) : this.resolve(node, at);
    if (!Array.isArray(v)) {
      if (v !== UNRESOLVED) this.missing.push(`expected a list, got ${JSON.stringify(v)} (at ${at})`);
      return [UNRESOLVED];
    }
    return v.filter((x) => x !== undefined).map((x) => this.scalar(x, at));
  }

  private str(node: unknown, at: string): string {
    return this.scalar(this.resolve(node, at), at);
  }

  private scalar(v: unknown, at: string): string {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    this.missing.push(`expected a string, got ${JSON.stringify(v)} (at ${at})`);
    return UNRESOLVED;
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)];
}

/**
 * Where the loader of a user data the library rendered (its EFSC_CODE_SHA256) looks for its code before it fetches
 * it, and that code (rendered in this process): what an earlier fetch leaves on the instance. Undefined for other
 * user data.
 */
export function keptCode(userData: string): { path: string; content: string } | undefined {
  const sha = codeSha256(userData);
  return sha ? { path: keptCodePath(sha), content: renderedCode(userData) } : undefined;
}

/** Cloud-init vendor data (cloud-config) that writes `keptCode(userData)` before the user data runs; undefined without it. */
export function keptCodeVendorData(userData: string): string | undefined {
  const kept = keptCode(userData);
  if (!kept) return undefined;
  return ['#cloud-config', 'write_files:', `  - path: ${kept.path}`, '    encoding: b64', "    permissions: '0600'",
    `    content: ${Buffer.from(kept.content).toString('base64')}`, ''].join('\n');
}
