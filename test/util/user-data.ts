import { spawnSync } from 'child_process';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { loaderLines, renderedCode } from '../../lib/instance/user-data';

/**
 * Turns a CloudFormation value into text: strings as they are, `Fn::Join` joined, `Fn::Base64` encoded (an outermost
 * one, the wrapper of UserData, is unwrapped), and every other intrinsic (`Ref`, `Fn::GetAtt`, ...) replaced by
 * `placeholder(key)`, where key is `Ref:Name` or `Fn::GetAtt:Name.Attr`.
 */
export function flatten(value: unknown, placeholder: (key: string) => string, nested = false): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, any>;
    if ('Fn::Join' in v) {
      const [sep, parts] = v['Fn::Join'];
      return (parts as unknown[]).map((p) => flatten(p, placeholder, true)).join(sep);
    }
    if ('Fn::Base64' in v) {
      const text = flatten(v['Fn::Base64'], placeholder, true);
      return nested ? Buffer.from(text, 'utf8').toString('base64') : text;
    }
    if ('Ref' in v) return placeholder(`Ref:${v.Ref}`);
    if ('Fn::GetAtt' in v) return placeholder(`Fn::GetAtt:${[].concat(v['Fn::GetAtt']).join('.')}`);
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0].startsWith('Fn::')) return placeholder(`${keys[0]}:${JSON.stringify(v[keys[0]])}`);
  }
  throw new Error(`cannot flatten ${JSON.stringify(value)}`);
}

/** The user data of every launch template in the stack, tokens replaced by `<Ref:Name>` style placeholders. */
export function launchTemplateUserData(stack: Stack, placeholder = (k: string) => `<${k}>`): Record<string, string> {
  const out: Record<string, string> = {};
  const templates = Template.fromStack(stack).findResources('AWS::EC2::LaunchTemplate');
  for (const [id, lt] of Object.entries(templates)) {
    const ud = lt.Properties?.LaunchTemplateData?.UserData;
    if (ud) out[id] = flatten(ud, placeholder);
  }
  return out;
}

/**
 * Values of the header lines of a rendered user data (between `set -a` and `set +a`, so exported): `EFSC_X='...'`
 * (known at synth) and `EFSC_X="$(base64 -d <<<'...')"` (deploy-time values, decoded here as the instance decodes them).
 */
export function parameters(userData: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of userData.matchAll(/^(EFSC_[A-Z0-9_]+)='((?:[^']|'"'"')*)'$/gm)) {
    out[m[1]] = m[2].replace(/'"'"'/g, "'");
  }
  for (const m of userData.matchAll(/^(EFSC_[A-Z0-9_]+)="\$\(base64 -d <<<'([A-Za-z0-9+/=]*)'\)"$/gm)) {
    out[m[1]] = Buffer.from(m[2], 'base64').toString('utf8');
  }
  return out;
}

/**
 * A rendered user data with the code it loads in place of the loader (the header, then the code it evaluates): what
 * runs, readable, for assertions and for shellcheck. The loader itself is assets/lib/loader.sh.
 */
export function expand(userData: string): string {
  return withCodeInPlace(userData, loaderLines(userData).first);
}

/**
 * A rendered user data with the code it loads in place of its `eval` line, the loader kept: everything that runs, in
 * the order it runs, for shellcheck.
 */
export function expandAfterLoader(userData: string): string {
  return withCodeInPlace(userData, loaderLines(userData).last);
}

/** The user data with the lines from `from` to its `eval` line replaced by the code it loads. */
function withCodeInPlace(userData: string, from: number): string {
  const lines = userData.split('\n');
  return [...lines.slice(0, from), renderedCode(userData).replace(/\n$/, ''), ...lines.slice(loaderLines(userData).last + 1)].join('\n');
}

/**
 * The parameters every rendered user data holds for its code's object (tokens as `parameters` of a
 * `launchTemplateUserData` with the default placeholders shows them), for `toEqual` on a whole parameter map (jest).
 */
export function codeParameters(): Record<string, unknown> {
  return {
    EFSC_CODE_BUCKET: '<Fn::Sub:"cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}">',
    EFSC_CODE_KEY: expect.stringMatching(/^[0-9a-f]{64}\.sh$/),
    EFSC_CODE_REGION: '<Ref:AWS::Region>',
    EFSC_CODE_SHA256: expect.stringMatching(/^[0-9a-f]{64}$/),
  };
}

/** One part of a MIME multi-part user data. */
export interface MimePart {
  /** The part's header lines, joined by line breaks. */
  readonly headers: string;
  /** Its content type, without parameters (`text/x-shellscript`). */
  readonly type: string;
  /** The file name its Content-Disposition gives, if any. */
  readonly file?: string;
  readonly body: string;
}

/**
 * A MIME multi-part user data split as cloud-init and nodeadm split it: its boundary, its parts in order, and what
 * follows the last boundary (`--` and a line break in a well-formed one). Undefined for a user data that is not one.
 */
export function mimeParts(text: string): { boundary: string; parts: MimePart[]; end: string } | undefined {
  const head = /^MIME-Version: 1\.0\nContent-Type: multipart\/mixed; boundary="([^"]+)"\n\n/.exec(text);
  if (!head) return undefined;
  // The line break before a boundary belongs to the boundary (RFC 2046): each part's body ends where it begins.
  const chunks = text.slice(head[0].length - 1).split(`\n--${head[1]}`);
  const parts = chunks.slice(1, -1).map((c) => {
    const at = c.indexOf('\n\n');
    const headers = c.slice(1, at);
    return {
      headers,
      type: /^Content-Type: ([^;\n]+)/m.exec(headers)?.[1] ?? '',
      file: /filename="([^"]+)"/.exec(headers)?.[1],
      body: c.slice(at + 2),
    };
  });
  return { boundary: head[1], parts, end: chunks[chunks.length - 1] };
}

/** One part of a MIME document as Python's email parser (cloud-init's) finds it: its content type, file name and body. */
export interface ParsedPart {
  readonly type: string;
  readonly file: string | null;
  readonly body: string;
}

/**
 * The leaf parts of a MIME user data as cloud-init finds them: split by Python's email parser (the one cloud-init
 * uses), each body decoded. Throws with Python's error output when it fails or says anything.
 */
export function cloudInitParts(userData: string): ParsedPart[] {
  const script = [
    'import email, json, sys',
    'm = email.message_from_string(sys.stdin.read())',
    'print(json.dumps([{"type": p.get_content_type(), "file": p.get_filename(), "body": p.get_payload(decode=True).decode()}',
    '                  for p in m.walk() if not p.is_multipart()]))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { input: userData, encoding: 'utf8' });
  if (r.status !== 0 || r.stderr !== '') throw new Error(`Python's email parser failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ParsedPart[];
}
