import { CfnParameter, Duration, Reference, Size, SizeRoundingBehavior, Stack, Token, Tokenization } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/**
 * An invalid prop, bound to the construct that was given it: the message reads `Invalid <prop>: <why> (at <path>)`,
 * so the user sees which prop to change and on which construct, like aws-cdk's own validation errors (whose class is
 * internal to aws-cdk-lib). When the prop's Python name differs (`mirroring.syncWorkers`, `cacheFleet.vpcSubnets`), the
 * suffix names it too: `(at <path>; in Python: mirroring.sync_workers)`. `constructPath` carries the path on its own.
 */
export class PropError extends Error {
  /** The path of the construct whose prop is invalid; undefined before there is one. */
  public readonly constructPath?: string;

  constructor(scope: IConstruct | undefined, prop: string, why: string) {
    const where = [...(scope ? [`at ${scope.node.path}`] : []), ...(pythonPropName(prop) ? [`in Python: ${pythonPropName(prop)}`] : [])];
    super(`Invalid ${prop}: ${why}${where.length ? ` (${where.join('; ')})` : ''}`);
    this.name = 'ValidationError';
    this.constructPath = scope?.node.path;
  }
}

/**
 * An error about one prop of `scope`, worded so the user sees which prop to change: `Invalid <prop>: <why>`, then the
 * construct's path (and the prop's Python name, where it differs).
 */
export function propError(scope: IConstruct | undefined, prop: string, why: string): Error {
  return new PropError(scope, prop, why);
}

/**
 * An error about a construct as a whole rather than one prop (the 16 KB of user data its props add up to): the
 * message ends with ` (at <path>)` like a `PropError`'s, and the error carries `constructPath`.
 */
export function constructError(scope: IConstruct | undefined, message: string): Error {
  const e = new Error(`${message}${scope ? ` (at ${scope.node.path})` : ''}`) as Error & { constructPath?: string };
  e.name = 'ValidationError';
  if (scope) e.constructPath = scope.node.path;
  return e;
}

/**
 * The name jsii gives a prop in Python (snake_case, as codemaker's `toSnakeCase`: `mirroring.syncWorkers` ->
 * `mirroring.sync_workers`, `cacheFleet.vpcSubnets` -> `cache_fleet.vpc_subnets`), or undefined when it is the same.
 */
export function pythonPropName(prop: string): string | undefined {
  const snake = prop.split('.').map((part) => part
    .replace(/(^|[^A-Z])(KiB|MiB|GiB)($|[^a-z])/g, (_m, a: string, abbr: string, b: string) => `${a}${abbr[0]}${abbr.slice(1).toLowerCase()}${b}`)
    .replace(/([\p{Ll}\d])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll}+)/gu, '$1_$2')
    .toLowerCase()).join('.');
  return snake === prop ? undefined : snake;
}

/** A value with its control characters spelled out (`\n`, `\t`, `\x1b`), so that an error shows it on one line. */
function showControls(value: string): string {
  const names: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\x00-\x1f\x7f]/g, (c) => names[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * A value as a message shows it: a string quoted (`'/data'`), a number as is, a `Size` or `Duration` in words. A
 * token (a CfnParameter, an import, an attribute: known only at deploy time) would print as `${Token[TOKEN.12]}` or
 * a number such as -1.888e+289; it reads instead as what it refers to, when `scope` is given to resolve it, and
 * `(a token, known at deploy time)`: `parameter Workers (a token, known at deploy time)`. A string with a token
 * inside shows both parts: `'/efs/${parameter Dir}' (holds a token, known at deploy time)`. `quote` false: a literal
 * string (a name such as an instance type) as is. Other objects (an `ec2.InstanceType`) show as their string.
 */
export function describeValue(value: unknown, scope?: IConstruct, quote = true): string {
  if (value instanceof Size || value instanceof Duration) {
    return value.isUnresolved() ? TOKEN_NOTE : value.toHumanString();
  }
  if (typeof value === 'number') return Token.isUnresolved(value) ? describeToken(value, scope) : String(value);
  if (typeof value !== 'string') return describeValue(String(value), scope, quote);
  if (!Token.isUnresolved(value)) return quote ? `'${showControls(value)}'` : showControls(value);
  const fragments = Tokenization.reverseString(value);
  if (fragments.length === 1 && fragments.tokens.length === 1) return describeToken(value, scope);
  const shown = fragments.mapTokens({ mapToken: (t) => `\${${tokenTarget(t, scope) ?? 'token'}}` })
    .join({ join: (a: unknown, b: unknown) => `${a}${b}` });
  return `'${String(shown)}' (holds a token, known at deploy time)`;
}

/**
 * Throws `Invalid <prop>` when `value` is a token: `must be known at synth`, for props the library must read
 * at synth (a count of resources, a size it converts or compares), which CloudFormation would resolve only later.
 */
export function knownAtSynth(scope: IConstruct, prop: string, value: unknown, why?: string): void {
  const unresolved = value instanceof Size || value instanceof Duration ? value.isUnresolved() : Token.isUnresolved(value);
  if (unresolved) {
    throw propError(scope, prop, `must be known at synth${why ? ` (${why})` : ''}, got ${describeValue(value, scope)}. Give a literal ` +
      'value rather than a parameter, import or attribute.');
  }
}

/**
 * Runs `convert` (a `Duration` or `Size` conversion) and turns aws-cdk-lib's error for a token given in another unit
 * (`Duration must be specified as 'Duration.seconds()' here ...`), which names no prop, into `Invalid <prop>`.
 */
export function inUnitOf<T>(scope: IConstruct, prop: string, convert: () => T): T {
  try {
    return convert();
  } catch (e) {
    const m = /must be specified as '((?:Duration|Size)\.\w+)\(\)' here since its value comes from a token.*\(got ((?:Duration|Size)\.\w+)\)/.exec(String((e as Error).message));
    if (!m) throw e;
    throw propError(scope, prop, `is a token (known at deploy time) given as ${m[2]}(), which cannot be converted at synth: ` +
      `give it as ${m[1]}(...).`);
  }
}

const TOKEN_NOTE = 'a token (known at deploy time)';

function describeToken(value: unknown, scope?: IConstruct): string {
  const target = tokenTarget(value, scope);
  return target ? `${target} (a token, known at deploy time)` : TOKEN_NOTE;
}

/** What a token refers to, in a few words (`parameter Workers`, `Bucket.Arn`, `AZ #2 of the region`), if it can tell. */
function tokenTarget(token: unknown, scope?: IConstruct): string | undefined {
  if (!scope) return undefined;
  try {
    const reversed = Tokenization.reverse(token, { failConcat: false });
    if (reversed instanceof Reference && reversed.target instanceof CfnParameter) {
      return `parameter ${Stack.of(scope).resolve(reversed.target.logicalId)}`;
    }
    return shortIntrinsic(Stack.of(scope).resolve(token));
  } catch {
    return undefined;
  }
}

function shortIntrinsic(v: unknown): string {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (typeof o.Ref === 'string') return `Ref ${o.Ref}`;
    const getAtt = o['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return getAtt.join('.');
    const select = o['Fn::Select'];
    if (Array.isArray(select) && typeof select[0] === 'number' && (select[1] as Record<string, unknown>)?.['Fn::GetAZs'] !== undefined) {
      return `AZ #${select[0] + 1} of the region`;
    }
    const join = o['Fn::Join'];
    if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
      return (join[1] as unknown[]).map((p) => (typeof p === 'string' ? p : `\${${shortIntrinsic(p)}}`)).join(join[0]);
    }
  }
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Throws `Invalid <prop>` unless `size` (when given) is whole GiB from `min` to `max` (an EBS volume size). */
export function wholeGib(scope: IConstruct, prop: string, size: Size | undefined, min: number, max: number): void {
  if (size === undefined) return;
  knownAtSynth(scope, prop, size);
  const gib = size.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (!Number.isInteger(gib) || gib < min || gib > max) throw propError(scope, prop, `must be whole GiB from ${min} to ${max}, got ${gib} GiB.`);
}

/** Throws `Invalid <prop>` unless `d` (when given) is whole seconds from `min` to `max` (named `range` in the message). */
export function wholeSeconds(scope: IConstruct, prop: string, d: Duration | undefined, min: number, max: number, range: string): void {
  if (d === undefined) return;
  knownAtSynth(scope, prop, d);
  const s = d.toSeconds({ integral: false });
  if (!Number.isInteger(s) || s < min || s > max) throw propError(scope, prop, `must be whole seconds from ${range}, got ${d.toHumanString()}.`);
}
