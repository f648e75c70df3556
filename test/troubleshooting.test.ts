import * as fs from 'fs';
import * as path from 'path';

/**
 * docs/troubleshooting.md lists every FATAL line of the scripts: each `die "..."` and `efs_cache_fail "..."` of
 * assets/ is found there by its longest literal part (the words between its variables).
 */
const REPO = path.join(__dirname, '..');

function scripts(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return scripts(p);
    return e.name.endsWith('.sh') ? [p] : [];
  });
}

/** The longest part of a message without a variable or command substitution, edges trimmed. */
export function literalPart(message: string): string {
  const parts = message.split(/\$\([^)]*\)?|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?]/);
  return parts.map((p) => p.trim().replace(/^[^A-Za-z0-9([]+|[^A-Za-z0-9)\]]+$/g, '')).sort((a, b) => b.length - a.length)[0];
}

const messages = scripts(path.join(REPO, 'assets')).flatMap((file) => [...fs.readFileSync(file, 'utf8')
  .matchAll(/\b(?:die|efs_cache_fail) "((?:[^"\\]|\\.|\$\([^)]*\))*)"/g)].map((m) => ({ file: path.relative(REPO, file), message: m[1] })));

test('the scripts have FATAL lines to list (the extraction finds them)', () => {
  expect(messages.length).toBeGreaterThan(100);
  expect(messages.map((m) => literalPart(m.message))).toContain('is not the code this user data was rendered with');
  expect(literalPart("$1='${!1}' is invalid: expected $3")).toBe('is invalid: expected');
});

test('every FATAL line of assets/ is in docs/troubleshooting.md', () => {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'troubleshooting.md'), 'utf8').replace(/\s+/g, ' ');
  const missing = messages.filter((m) => !doc.includes(literalPart(m.message))).map((m) => `${m.file}: ${m.message}`);
  expect(missing).toEqual([]);
});
