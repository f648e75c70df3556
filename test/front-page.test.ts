import * as fs from 'fs';
import * as path from 'path';

/*
 * The README is a front page a user reads from the top: short, an example to copy early, the mode table soon after.
 * And the API has no mode checked against another mode's prop, nor anything deprecated.
 */

const ROOT = path.join(__dirname, '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');

function libSources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? libSources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

describe('the README as a front page', () => {
  test('is at most 320 lines', () => {
    expect(readme.length).toBeLessThanOrEqual(320);
  });

  test('has a TypeScript example to copy before line 80', () => {
    const first = readme.findIndex((l) => /^```ts\b/.test(l)) + 1;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(80);
  });

  test('each complete example uses every name it imports (an app with noUnusedLocals refuses one that does not)', () => {
    const blocks = [...readme.join('\n').matchAll(/^```ts fixture=imports\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const unused = blocks.flatMap((block, i) => {
      const imports = [...block.matchAll(/^import (?:\{([^}]*)\}|\* as (\w+)) from '[^']+';$/gm)];
      const body = block.replace(/^import .*$/gm, '');
      return imports.flatMap((m) => (m[1] ? m[1].split(',').map((n) => n.trim().split(/\s+as\s+/).pop()!) : [m[2]]))
        .filter((name) => name && !new RegExp(`\\b${name}\\b`).test(body))
        .map((name) => `example ${i + 1}: ${name}`);
    });
    expect(unused).toEqual([]);
  });

  test('has the table of modes before line 150', () => {
    const heading = readme.findIndex((l) => /^## Choose a mode/.test(l));
    const table = readme.findIndex((l, i) => i > heading && l.startsWith('| mode |')) + 1;
    expect(heading).toBeGreaterThan(0);
    expect(table).toBeGreaterThan(heading);
    expect(table).toBeLessThan(150);
  });

  test('its table of modes is the one of docs/choosing-a-mode.md, row for row (links relative to each page)', () => {
    const rows = (lines: string[]) => {
      const start = lines.findIndex((l) => l.startsWith('| mode |'));
      const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
      return lines.slice(start, end);
    };
    const page = fs.readFileSync(path.join(ROOT, 'docs', 'choosing-a-mode.md'), 'utf8').split('\n');
    expect(rows(readme).map((l) => l.replace(/\]\(docs\//g, ']('))).toEqual(rows(page));
    expect(rows(readme).length).toBeGreaterThan(10);
  });
});

describe('the API', () => {
  const sources = libSources(path.join(ROOT, 'lib')).map((f) => ({ file: path.relative(ROOT, f), text: fs.readFileSync(f, 'utf8') }));

  test('deprecates nothing', () => {
    expect(sources.filter((s) => s.text.includes('@deprecated')).map((s) => s.file)).toEqual([]);
  });

  test('documents no prop as of one mode only', () => {
    expect(sources.filter((s) => /Route 53 only|NLB only/i.test(s.text)).map((s) => s.file)).toEqual([]);
  });
});
