import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { Aws, FileSystem, Fn, Stack, Stage, Token, Tokenization } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { Construct, IConstruct } from 'constructs';
import { assetPath, readAsset } from '../private/assets';
import { constructError, propError } from '../private/errors';

/** EC2's limit on raw (pre-base64) user data. */
const USER_DATA_LIMIT_BYTES = 16 * 1024;

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

/** A rendered script: its user data, measured, and the code the user data loads. */
export interface RenderedScript {
  /** The user data: header, parameters and the loader of the code. May hold tokens. */
  readonly text: string;
  /** Size in bytes with every token counted as TOKEN_SIZE_ESTIMATE bytes (a pseudo parameter as its longest value). */
  readonly estimatedBytes: number;
  /** The code the user data loads and evaluates: the libraries and the script, compacted. */
  readonly code: string;
  /** The code's sha256 (lowercase hex), which the user data holds and the loader checks. */
  readonly sha256: string;
  /** The S3 file asset that holds the code. */
  readonly asset: s3assets.Asset;
  /** Lets `grantee` (the instances' role) read the code's object, and nothing else of the assets bucket. */
  grantRead(grantee: iam.IGrantable): iam.Grant;
}

/** Options of `renderScript`. */
export interface RenderScriptOptions {
  /** Script under assets/, for example `client/bootstrap.sh`. */
  readonly script: string;
  /** `EFSC_*` parameters; values may hold tokens. */
  readonly parameters: Record<string, string>;
  /** What the user data is, for the size error. */
  readonly description: string;
  /** The construct whose user data it is: the code's asset is its child `BootstrapCode`; errors end with its path. */
  readonly scope: Construct;
}

/**
 * The libraries under assets/ that every instance's code holds, in this order before its script: each script uses
 * some, and what a configuration does not use stays unused, switched off by its `EFSC_*` parameters. loader.sh is
 * not one: the user data holds it.
 */
export const LIBRARIES = [
  'lib/common.sh', 'lib/aws-signal.sh', 'lib/metrics.sh', 'lib/fscache.sh',
  'lib/mirror.sh', 'lib/mirror-storage.sh', 'lib/mirror-sync.sh', 'lib/mirror-nfsd.sh', 'lib/mirror-metrics.sh', 'lib/mirror-s3.sh',
];

/**
 * The awk programs that the libraries run with `awk -f`: every file of assets/lib/awk/. In the code, each is the
 * here-document of a function `efs_cache_awk_<name>` (- as _) that prints it (lib/checkout.sh defines the same for
 * a run from a checkout).
 */
export function awkPrograms(): string[] {
  return fs.readdirSync(assetPath('lib', 'awk')).filter((f) => f.endsWith('.awk')).sort().map((f) => `lib/awk/${f}`);
}

/** A file of the code as the code holds it: a script or library whole, an awk program in its function. */
function codeText(file: string): string {
  const text = readAsset(file);
  if (!file.endsWith('.awk')) return text;
  if (/^EFS_CACHE_AWK$/m.test(text)) throw new Error(`cdk-efs-cache: assets/${file} has a line EFS_CACHE_AWK, which ends its here-document`);
  return `efs_cache_awk_${path.basename(file, '.awk').replace(/-/g, '_')}() {\n  cat <<'EFS_CACHE_AWK'\n${text.replace(/\n*$/, '\n')}EFS_CACHE_AWK\n}\n`;
}

/**
 * An instance's code: every library (LIBRARIES), the awk programs (awkPrograms) and the script, each file whole (its
 * comments and line numbers kept, so that the copy an instance keeps reads as the source does), after a line that
 * names it.
 */
export function instanceCode(script: string): string {
  return [...LIBRARIES, ...awkPrograms(), script].map((file) => `# ---- cdk-efs-cache assets/${file} ----\n${codeText(file)}`)
    .join('\n').replace(/\n*$/, '\n');
}

/**
 * Renders a script from assets/ into user data and the code it runs. The code (`instanceCode`: every library and the
 * script, whole) is an S3 file asset, the child `BootstrapCode` of `scope`; the user data is
 * `#!/bin/bash`, `set -euo pipefail`, `set -a`, one `EFSC_X=...` assignment per parameter (see `parameterLine`),
 * among them the code's bucket, key, region and sha256, `set +a`, then the loader (assets/lib/loader.sh, compacted),
 * which fetches the object with the instance role, keeps it in /var/lib/efs-cache/code, and leaves it in
 * `BODY_VARIABLE` only when its sha256 is the rendered one, and `eval "$efs_cache_code"`. The user data's size thus
 * grows with the parameters only (about 1.5 KB of them and about 5.5 KB of loader), never with the code: features
 * and the commands users add do not compete for EC2's 16 KB. Evaluated in the user data's own file, the code sees
 * that file as its source, so an installed copy of it (install_self) is complete too, and runs the kept code
 * without S3. The caller lets the instances' role read the object (`grantRead`).
 * Throws when the result would exceed EC2's 16 KB user-data limit.
 */
export function renderScript(options: RenderScriptOptions): RenderedScript {
  const codeText = instanceCode(options.script);
  const sha256 = crypto.createHash('sha256').update(codeText, 'utf8').digest('hex');
  CODE_BY_SHA256.set(sha256, codeText);
  const asset = newCodeAsset(options.scope, sha256, codeText);
  const parameters: Record<string, string> = {
    ...options.parameters,
    EFSC_CODE_BUCKET: asset.s3BucketName,
    EFSC_CODE_KEY: asset.s3ObjectKey,
    EFSC_CODE_REGION: Aws.REGION,
    EFSC_CODE_SHA256: sha256,
  };
  // set -a: every parameter line is exported without spelling `export` on each.
  const lines: string[] = ['#!/bin/bash', 'set -euo pipefail', 'set -a'];
  let estimatedBytes = 0;
  for (const name of Object.keys(parameters).sort()) {
    if (!/^EFSC_[A-Z0-9_]+$/.test(name)) throw new Error(`cdk-efs-cache: parameter name ${name} is not EFSC_[A-Z0-9_]+`);
    const line = parameterLine(name, parameters[name], options.scope);
    lines.push(line.text);
    estimatedBytes += line.estimatedBytes + 1;
  }
  const tail = [
    'set +a',
    `${LOADER_COMMENT} ${options.script} and every library: from S3, run only if its sha256 is EFSC_CODE_SHA256.`,
    ...compactScript(readAsset('lib/loader.sh')),
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
  const objectArn = `arn:${Aws.PARTITION}:s3:::${asset.s3BucketName}/${asset.s3ObjectKey}`;
  return {
    text, estimatedBytes, code: codeText, sha256, asset,
    grantRead: (grantee) => iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject'], resourceArns: [objectArn] }),
  };
}

/** The comment line that opens the loader in rendered user data. */
const LOADER_COMMENT = '# The code of';

/** Codes rendered in this process, by sha256: what `renderedCode` returns for a user data. */
const CODE_BY_SHA256 = new Map<string, string>();

/**
 * The code's S3 file asset, the child `BootstrapCode` of `scope`. Its key must be one the loader accepts (letters,
 * digits and . _ / -), which the stack's synthesizer decides: a `bucketPrefix` with a space or `+` is refused here,
 * where every instance would refuse it at boot.
 */
function newCodeAsset(scope: Construct, sha256: string, code: string): s3assets.Asset {
  let asset: s3assets.Asset;
  try {
    asset = new s3assets.Asset(scope, 'BootstrapCode', { path: codeFile(scope, sha256, code) });
  } catch (e) {
    if (!/BootstraplessSynthesizer/.test((e as Error).message)) throw e;
    throw constructError(scope, 'cdk-efs-cache: the instances\' code is a file asset, which a stack with the ' +
      'BootstraplessSynthesizer cannot hold: use the DefaultStackSynthesizer (or another that publishes file assets) for this stack');
  }
  const key = asset.s3ObjectKey;
  if (!Token.isUnresolved(key) && !ASSET_KEY_RE.test(key)) {
    throw constructError(scope, `cdk-efs-cache: the stack's synthesizer puts the instances' code at the S3 key '${key}', ` +
      'which the instances refuse to fetch (letters, digits and . _ / - only): give the synthesizer a bucketPrefix of those characters');
  }
  return asset;
}

/** The S3 keys the loader fetches (assets/lib/loader.sh checks EFSC_CODE_KEY against the same format). */
export const ASSET_KEY_RE = /^[A-Za-z0-9._/-]+$/;

/**
 * A file holding `code`, for its asset: inside the cloud assembly's folder (where the asset is staged from it, and
 * nothing is left elsewhere), one folder per code, so the asset's hash and object key depend on the content only.
 */
function codeFile(scope: Construct, sha256: string, code: string): string {
  const outdir = Stage.of(scope)?.assetOutdir;
  const dir = outdir ? path.join(outdir, '.efs-cache-code', sha256) : FileSystem.mkdtemp('efs-cache-code');
  const file = path.join(dir, 'bootstrap.sh');
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === code) return file;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, code);
  return file;
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
export function validateUserCommands(scope: IConstruct, rendered: RenderedScript, extra: ec2.UserData, description: string,
  around: () => UserDataWrapping | undefined = () => undefined): void {
  scope.node.addValidation({
    validate: () => {
      const { problem } = userCommands(rendered, extra, description, around());
      return problem ? [propError(scope, 'userData', problem).message] : [];
    },
  });
}

/** What a user data is wrapped in (an EKS node's MIME document and its other parts): its size and what it is. */
export interface UserDataWrapping {
  readonly estimatedBytes: number;
  readonly description: string;
}

function userCommands(rendered: RenderedScript, extra: ec2.UserData, description: string,
  around?: UserDataWrapping): { text: string; problem?: string } {
  const added = extra.render().replace(/^\n+/, '');
  const wrapped = around?.estimatedBytes ?? 0;
  const text = added.trim() === '' ? rendered.text : `${rendered.text}# Commands added to userData: the first boot only, after the bootstrap succeeded.\n` +
    `if [ -z "\${1:-}" ]; then\n${added}\nfi\n`;
  const commands = estimatedUserDataBytes(text.slice(rendered.text.length));
  const bytes = rendered.estimatedBytes + wrapped + commands;
  if (bytes <= USER_DATA_LIMIT_BYTES) return { text };
  return {
    text,
    problem: `the user data of ${description}${added.trim() === '' ? '' : ' with the commands added to it'} would be about ${bytes} bytes, ` +
      `over EC2's ${USER_DATA_LIMIT_BYTES}-byte limit (${[
        ...(commands > 0 ? [`the commands take about ${commands}`] : []),
        ...(around ? [`${around.description} about ${wrapped}`] : []),
      ].join(', ')}): move long commands into a script the instance downloads.`,
  };
}

/** The shell variable of rendered user data that holds the decoded code before it is evaluated. */
export const BODY_VARIABLE = 'efs_cache_code';

/**
 * The code a rendered user data loads (the content of its asset, by the sha256 the user data holds), for tests and
 * tools that read it; the code must have been rendered in this process.
 */
export function renderedCode(userData: string): string {
  const sha256 = codeSha256(userData);
  if (!sha256) throw new Error('cdk-efs-cache: no EFSC_CODE_SHA256 in this user data');
  const code = CODE_BY_SHA256.get(sha256);
  if (code === undefined) throw new Error(`cdk-efs-cache: the code ${sha256} was not rendered in this process`);
  return code;
}

/** The sha256 of the code a rendered user data loads (its EFSC_CODE_SHA256), or undefined for other user data. */
export function codeSha256(userData: string): string | undefined {
  return /^EFSC_CODE_SHA256='([0-9a-f]{64})'$/m.exec(userData)?.[1];
}

/** Where the loader (assets/lib/loader.sh, its `dir`) keeps the code it fetched and looks for it first. */
export const KEPT_CODE_DIR = '/var/lib/efs-cache/code';

/** The file the loader keeps the code of this sha256 in. */
export function keptCodePath(sha256: string): string {
  return `${KEPT_CODE_DIR}/${sha256}.sh`;
}

/** The lines of a rendered user data that load its code (from the loader's opening comment to the eval), for tools. */
export function loaderLines(userData: string): { first: number; last: number } {
  const lines = userData.split('\n');
  const first = lines.findIndex((l) => l.startsWith(`${LOADER_COMMENT} `));
  const last = lines.indexOf(`eval "$${BODY_VARIABLE}"`);
  if (first < 0 || last < first) throw new Error('cdk-efs-cache: no loader in this user data');
  return { first, last };
}

/**
 * One parameter's line of the user data header. A value known at synth is single-quoted. A value that holds a
 * deploy-time value (`holdsDeployTimeValue`: a CfnParameter, an SSM value, an import, an id, a number token
 * rendered with `String()`) may resolve to anything, a quote or `$(...)` included: it goes through CloudFormation's
 * `Fn::Base64`, whose output holds only A-Za-z0-9+/=, and the instance decodes it into the variable
 * (`EFSC_X="$(base64 -d <<<'...')"`), so whatever it resolves to stays data. The scripts' own `need` checks then
 * refuse a bad value with a FATAL line, as they do for literal ones. This is the only way a value reaches the header.
 */
export function parameterLine(name: string, value: string, scope: IConstruct): { text: string; estimatedBytes: number } {
  if (!holdsDeployTimeValue(scope, value)) {
    const text = `${name}=${shellQuote(value)}`;
    return { text, estimatedBytes: Buffer.byteLength(text, 'utf8') };
  }
  // A plain assignment (exported by the header's set -a): `export X="$(...)"` would mask a failed decode from set -e.
  const [before, after] = [`${name}="$(base64 -d <<<'`, `')"`];
  return {
    text: `${before}${Fn.base64(value)}${after}`,
    estimatedBytes: before.length + after.length + 4 * Math.ceil(estimatedUserDataBytes(value) / 3),
  };
}

/**
 * Whether `value` holds anything CloudFormation resolves at deploy time: a string token, and also a number token
 * rendered into the string (`String(Token.asNumber(...))`, `Duration.seconds(token).toSeconds()`), which
 * `Token.isUnresolved` does not see in a string but the stack's resolution does. Asked of the stack itself, so no
 * encoding of a token can pass for a literal.
 */
export function holdsDeployTimeValue(scope: IConstruct, value: string): boolean {
  return Token.isUnresolved(value) || Stack.of(scope).resolve(value) !== value;
}

/** Single-quotes a literal value for bash; a single quote becomes '"'"'. Values with tokens: see parameterLine. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

/**
 * Drops the shebang, `set -euo pipefail`, comment lines, blank lines and leading indentation, outside heredocs;
 * heredoc bodies are kept byte for byte (they are files the script writes). `# shellcheck` directives stay, so the
 * rendered user data passes shellcheck as its sources do. For the loader only, which the user data holds within
 * EC2's 16 KB: the instances' code is shipped whole.
 */
export function compactScript(text: string): string[] {
  const out: string[] = [];
  let terminator: { word: string; tabs: boolean } | undefined;
  text.split('\n').forEach((line, i) => {
    if (terminator) {
      out.push(line);
      if ((terminator.tabs ? line.replace(/^\t+/, '') : line) === terminator.word) terminator = undefined;
      return;
    }
    const trimmed = line.trim();
    if (i === 0 && trimmed.startsWith('#!')) return;
    if (trimmed === '' || trimmed === 'set -euo pipefail') return;
    if (trimmed.startsWith('#') && !/^#\s*shellcheck\s/.test(trimmed)) return;
    out.push(trimmed);
    const heredoc = /(?:^|[^<])<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(trimmed);
    if (heredoc) terminator = { word: heredoc[3], tabs: heredoc[1] === '-' };
  });
  if (terminator) throw new Error(`cdk-efs-cache: unterminated heredoc ${terminator.word} in a script`);
  return out;
}

/** How many bytes an unresolved token or a string takes in rendered user data, as `renderScript` counts them. */
export function estimatedUserDataBytes(text: string): number {
  if (!Token.isUnresolved(text)) return Buffer.byteLength(text, 'utf8');
  const flat = Tokenization.reverseString(text)
    .mapTokens({ mapToken: (t) => 'x'.repeat(PSEUDO_SIZE_ESTIMATES[(t as { value?: { Ref?: string } }).value?.Ref ?? ''] ?? TOKEN_SIZE_ESTIMATE) })
    .join({ join: (a: unknown, b: unknown) => `${a}${b}` });
  return Buffer.byteLength(String(flat), 'utf8');
}
