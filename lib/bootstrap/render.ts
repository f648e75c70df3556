import { Token, Tokenization } from 'aws-cdk-lib';
import { USER_DATA_LIMIT_BYTES } from '../private/constants';
import { readAsset } from '../private/assets';

/**
 * How many bytes one unresolved token (a file system id, a DNS name, an address, a CIDR) is taken to need when the
 * rendered user data is measured at synth time. EFS DNS names, the longest values rendered, stay under this.
 */
export const TOKEN_SIZE_ESTIMATE = 96;

/** A rendered script and its measured size. */
export interface RenderedScript {
  /** The user data: header, parameters, library and script. May hold tokens. */
  readonly text: string;
  /** Size in bytes with every token counted as TOKEN_SIZE_ESTIMATE bytes. */
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
}

/**
 * Renders a script from assets/ into user data: `#!/bin/bash`, `set -euo pipefail`, one `export` line per
 * parameter (values single-quoted, tokens become `Fn::Join` parts), then the libraries and the script with comment
 * lines and blank lines dropped. Throws when the result would exceed EC2's 16 KB user-data limit.
 */
export function renderScript(options: RenderScriptOptions): RenderedScript {
  const lines: string[] = ['#!/bin/bash', 'set -euo pipefail'];
  for (const name of Object.keys(options.parameters).sort()) {
    if (!/^EFSC_[A-Z0-9_]+$/.test(name)) throw new Error(`cdk-efs-cache: parameter name ${name} is not EFSC_[A-Z0-9_]+`);
    lines.push(`export ${name}=${shellQuote(options.parameters[name])}`);
  }
  for (const lib of options.libraries ?? ['lib/common.sh']) {
    lines.push(...compactScript(readAsset(lib)));
  }
  lines.push(...compactScript(readAsset(options.script)));
  const text = lines.join('\n') + '\n';
  const estimatedBytes = estimateBytes(text);
  if (estimatedBytes > USER_DATA_LIMIT_BYTES) {
    throw new Error(
      `cdk-efs-cache: the user data of ${options.description} would be about ${estimatedBytes} bytes, over EC2's ` +
        `${USER_DATA_LIMIT_BYTES}-byte limit. Shorten long props (paths, mount options) or split the configuration.`,
    );
  }
  return { text, estimatedBytes };
}

/**
 * Single-quotes a value for bash; a literal single quote becomes '"'"'. A token's string form holds no quote, so
 * tokens pass through unchanged (their resolved values are ids, names and addresses, which hold none either).
 */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

/**
 * Drops the shebang, `set -euo pipefail`, comment lines, blank lines and leading indentation, outside heredocs;
 * heredoc bodies are kept byte for byte (they are files the script writes). `# shellcheck` directives stay, so the
 * rendered user data passes shellcheck as its sources do. Lines between `# efs-cache: standalone begin` and
 * `# efs-cache: standalone end` (a script's code for running from a checkout, such as sourcing the library that
 * the user data already inlines) are dropped.
 */
export function compactScript(text: string): string[] {
  const out: string[] = [];
  let terminator: { word: string; tabs: boolean } | undefined;
  let standalone = false;
  text.split('\n').forEach((line, i) => {
    if (terminator) {
      out.push(line);
      if ((terminator.tabs ? line.replace(/^\t+/, '') : line) === terminator.word) terminator = undefined;
      return;
    }
    const trimmed = line.trim();
    if (/^#\s*efs-cache: standalone begin\b/.test(trimmed)) standalone = true;
    if (standalone) {
      if (/^#\s*efs-cache: standalone end\b/.test(trimmed)) standalone = false;
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
  if (standalone) throw new Error('cdk-efs-cache: a standalone block in a script has no end marker');
  return out;
}

function estimateBytes(text: string): number {
  if (!Token.isUnresolved(text)) return Buffer.byteLength(text, 'utf8');
  const placeholder = 'x'.repeat(TOKEN_SIZE_ESTIMATE);
  const flat = Tokenization.reverseString(text)
    .mapTokens({ mapToken: () => placeholder })
    .join({ join: (a: unknown, b: unknown) => `${a}${b}` });
  return Buffer.byteLength(String(flat), 'utf8');
}
