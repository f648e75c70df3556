import * as zlib from 'zlib';
import { Fn, Token, Tokenization } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { USER_DATA_LIMIT_BYTES } from '../private/constants';
import { constructError, propError } from '../private/errors';
import { readAsset } from '../private/assets';

/**
 * How many bytes one unresolved token (a file system id, a DNS name, an address, a CIDR) is taken to need when the
 * rendered user data is measured at synth time. EFS DNS names, the longest values rendered, stay under this.
 */
export const TOKEN_SIZE_ESTIMATE = 96;

/**
 * Longest values of the pseudo parameters user data holds, in every partition, with room to spare: a region name
 * (such as ap-southeast-5, 14 bytes) and a URL suffix (amazonaws.com.cn, 16 bytes) are short, and counting them as
 * TOKEN_SIZE_ESTIMATE would refuse user data that fits.
 */
const PSEUDO_SIZE_ESTIMATES: Record<string, number> = { 'AWS::Region': 20, 'AWS::URLSuffix': 20, 'AWS::Partition': 12, 'AWS::AccountId': 12 };

/** A rendered script and its measured size. */
export interface RenderedScript {
  /** The user data: header, parameters, library and script. May hold tokens. */
  readonly text: string;
  /** Size in bytes with every token counted as TOKEN_SIZE_ESTIMATE bytes (a pseudo parameter as its longest value). */
  readonly estimatedBytes: number;
}

/** Options of `renderScript`. */
export interface RenderScriptOptions {
  /** Script under assets/, for example `client/bootstrap.sh`. */
  readonly script: string;
  /** `EFSC_*` parameters; values may hold tokens. */
  readonly parameters: Record<string, string>;
  /** Libraries under assets/ inlined before the script. @default ['lib/common.sh'] */
  readonly libraries?: string[];
  /** What the user data is, for the size error. */
  readonly description: string;
  /** The construct whose user data it is: the size error ends with its path. @default - no path */
  readonly scope?: IConstruct;
  /**
   * Blocks of the scripts that this user data never runs, dropped from it (`# efs-cache: <name> begin` to
   * `# efs-cache: <name> end`), for room under EC2's 16 KB. @default []
   */
  readonly drop?: string[];
}

/**
 * Renders a script from assets/ into user data: `#!/bin/bash`, `set -euo pipefail`, `set -a`, one `EFSC_X=...`
 * assignment per parameter (see `parameterLine`), `set +a`, then the libraries and the script, compacted
 * (`compactScript`), gzipped and base64-encoded into one line that the instance decodes and evaluates
 * (`BODY_VARIABLE`). Packed, the code takes about half its compacted size (gzip, then base64's 4/3); node count does
 * not press against EC2's 16 KB limit, features do (the gates' matrix holds the largest node, within a few hundred
 * bytes of it). The parameters stay plain text ahead of the code, since a token cannot be compressed at synth. Evaluated in the user data's
 * own file, the code sees that file as its source, so an installed copy of it (install_self) is complete too.
 * Throws when the result would exceed EC2's 16 KB user-data limit.
 */
export function renderScript(options: RenderScriptOptions): RenderedScript {
  // set -a: every parameter line is exported without spelling `export` on each (EC2's 16 KB count every byte).
  const lines: string[] = ['#!/bin/bash', 'set -euo pipefail', 'set -a'];
  let estimatedBytes = 0;
  for (const name of Object.keys(options.parameters).sort()) {
    if (!/^EFSC_[A-Z0-9_]+$/.test(name)) throw new Error(`cdk-efs-cache: parameter name ${name} is not EFSC_[A-Z0-9_]+`);
    const line = parameterLine(name, options.parameters[name]);
    lines.push(line.text);
    estimatedBytes += line.estimatedBytes + 1;
  }
  const code: string[] = [];
  for (const lib of options.libraries ?? ['lib/common.sh']) code.push(...compactScript(readAsset(lib), options.drop));
  code.push(...compactScript(readAsset(options.script), options.drop));
  const packed = zlib.gzipSync(Buffer.from(code.join('\n') + '\n', 'utf8'), { level: 9 }).toString('base64');
  const tail = [
    'set +a',
    `# The code of ${options.script} and its libraries (cdk-efs-cache assets/), gzip and base64.`,
    `${BODY_VARIABLE}="$(base64 -d <<<'${packed}' | gunzip)"`,
    `eval "$${BODY_VARIABLE}"`,
  ];
  lines.push(...tail);
  const text = lines.join('\n') + '\n';
  estimatedBytes += Buffer.byteLength(['#!/bin/bash', 'set -euo pipefail', 'set -a', ...tail].join('\n') + '\n', 'utf8');
  if (estimatedBytes > USER_DATA_LIMIT_BYTES) {
    throw constructError(options.scope,
      `cdk-efs-cache: the user data of ${options.description} would be about ${estimatedBytes} bytes, over EC2's ` +
        `${USER_DATA_LIMIT_BYTES}-byte limit. Shorten long props (paths, mount options) or split the configuration.`,
    );
  }
  return { text, estimatedBytes };
}

/**
 * The rendered bootstrap followed by the commands a user added to `extra` (an `ec2.UserData.forLinux({ shebang: '' })`
 * the construct exposes as `userData`). They run only in the first-boot run (no mode argument), after the bootstrap
 * returned: the bootstrap has succeeded by then (it exits on any failure) and a node has signalled CloudFormation,
 * so they never decide the result. The installed copies that boot units run with a mode skip them. Whether the whole
 * fits in EC2's 16 KB is for `validateUserCommands` to say: this runs in a Lazy, where an error would reach the
 * user wrapped in one `Resolution error:` per level of nesting.
 */
export function withUserCommands(rendered: RenderedScript, extra: ec2.UserData, description: string): string {
  return userCommands(rendered, extra, description).text;
}

/**
 * Checks the size of the commands a user adds to `extra` when the app synthesizes (a validation of `scope`), rather
 * than in the Lazy that renders them (`withUserCommands`): an error thrown while CloudFormation values resolve
 * reaches the user wrapped in one `Resolution error:` per level of nesting, and the commands may be added any time
 * before synthesis. cdk reports the validation once, after resolving and before writing the assembly:
 * `Validation failed with the following errors: [<path>] Invalid userData: ... (at <path>; ...)`.
 */
export function validateUserCommands(scope: IConstruct, rendered: RenderedScript, extra: ec2.UserData, description: string): void {
  scope.node.addValidation({
    validate: () => {
      const { problem } = userCommands(rendered, extra, description);
      return problem ? [propError(scope, 'userData', problem).message] : [];
    },
  });
}

function userCommands(rendered: RenderedScript, extra: ec2.UserData, description: string): { text: string; problem?: string } {
  const added = extra.render().replace(/^\n+/, '');
  if (added.trim() === '') return { text: rendered.text };
  const text = `${rendered.text}# Commands added to userData: the first boot only, after the bootstrap succeeded.\n` +
    `if [ -z "\${1:-}" ]; then\n${added}\nfi\n`;
  const bytes = rendered.estimatedBytes + estimateBytes(text.slice(rendered.text.length));
  if (bytes <= USER_DATA_LIMIT_BYTES) return { text };
  return {
    text,
    problem: `the user data of ${description} with the commands added to it would be about ${bytes} bytes, over EC2's ` +
      `${USER_DATA_LIMIT_BYTES}-byte limit (the commands take about ${bytes - rendered.estimatedBytes}): move long ` +
      'commands into a script the instance downloads.',
  };
}

/** The shell variable of rendered user data that holds the decoded code before it is evaluated. */
export const BODY_VARIABLE = 'efs_cache_code';

/** The code a rendered user data evaluates (decoded and decompressed), for tests and tools that read it. */
export function renderedCode(userData: string): string {
  const m = new RegExp(`^${BODY_VARIABLE}="\\$\\(base64 -d <<<'([A-Za-z0-9+/=]+)' \\| gunzip\\)"$`, 'm').exec(userData);
  if (!m) throw new Error('cdk-efs-cache: no packed code in this user data');
  return zlib.gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8');
}

/**
 * One parameter's line of the user data header. A value known at synth is single-quoted. A value that holds a token
 * (a CfnParameter, an SSM value, an import, an id) is known only at deploy time and may resolve to anything, a
 * quote or `$(...)` included: it goes through CloudFormation's `Fn::Base64`, whose output holds only
 * A-Za-z0-9+/=, and the instance decodes it into the variable (`EFSC_X="$(base64 -d <<<'...')"`), so whatever it resolves to stays data. The scripts'
 * own `need` checks then refuse a bad value with a FATAL line, as they do for literal ones.
 */
export function parameterLine(name: string, value: string): { text: string; estimatedBytes: number } {
  if (!Token.isUnresolved(value)) {
    const text = `${name}=${shellQuote(value)}`;
    return { text, estimatedBytes: Buffer.byteLength(text, 'utf8') };
  }
  // A plain assignment (exported by the header's set -a): `export X="$(...)"` would mask a failed decode from set -e.
  const [before, after] = [`${name}="$(base64 -d <<<'`, `')"`];
  return {
    text: `${before}${Fn.base64(value)}${after}`,
    estimatedBytes: before.length + after.length + 4 * Math.ceil(estimateBytes(value) / 3),
  };
}

/** Single-quotes a literal value for bash; a single quote becomes '"'"'. Values with tokens: see parameterLine. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

/**
 * Drops the shebang, `set -euo pipefail`, comment lines, blank lines and leading indentation, outside heredocs;
 * heredoc bodies are kept byte for byte (they are files the script writes). `# shellcheck` directives stay, so the
 * rendered user data passes shellcheck as its sources do. Lines between `# efs-cache: standalone begin` and
 * `# efs-cache: standalone end` (a script's code for running from a checkout, such as sourcing the library that
 * the user data already inlines) are dropped, and likewise the blocks named in `drop`.
 */
export function compactScript(text: string, drop: string[] = []): string[] {
  const out: string[] = [];
  let terminator: { word: string; tabs: boolean } | undefined;
  let standalone: string | undefined;
  text.split('\n').forEach((line, i) => {
    if (terminator) {
      out.push(line);
      if ((terminator.tabs ? line.replace(/^\t+/, '') : line) === terminator.word) terminator = undefined;
      return;
    }
    const trimmed = line.trim();
    const begin = /^#\s*efs-cache: ([a-z0-9-]+) begin$/.exec(trimmed);
    if (!standalone && begin && (begin[1] === 'standalone' || drop.includes(begin[1]))) standalone = begin[1];
    if (standalone) {
      if (trimmed.replace(/^#\s*/, '# ') === `# efs-cache: ${standalone} end`) standalone = undefined;
      return;
    }
    if (i === 0 && trimmed.startsWith('#!')) return;
    if (trimmed === '' || trimmed === 'set -euo pipefail') return;
    if (trimmed.startsWith('#') && !/^#\s*shellcheck\s/.test(trimmed)) return;
    out.push(trimmed);
    const heredoc = /(?:^|[^<])<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(trimmed);
    if (heredoc) terminator = { word: heredoc[3], tabs: heredoc[1] === '-' };
  });
  if (terminator) throw new Error(`cdk-efs-cache: unterminated heredoc ${terminator.word} in a script`);
  if (standalone) throw new Error(`cdk-efs-cache: a ${standalone} block in a script has no end marker`);
  return out;
}

function estimateBytes(text: string): number {
  if (!Token.isUnresolved(text)) return Buffer.byteLength(text, 'utf8');
  const flat = Tokenization.reverseString(text)
    .mapTokens({ mapToken: (t) => 'x'.repeat(PSEUDO_SIZE_ESTIMATES[(t as { value?: { Ref?: string } }).value?.Ref ?? ''] ?? TOKEN_SIZE_ESTIMATE) })
    .join({ join: (a: unknown, b: unknown) => `${a}${b}` });
  return Buffer.byteLength(String(flat), 'utf8');
}
