/**
 * The TypeScript examples of the README and of the docs/ pages, run in all three languages that synthesize here:
 *   ts-node examples.ts run OUT
 *     runs each example in TypeScript, in the fixture jsii-rosetta compiles it in (rosetta/default.ts-fixture, the
 *     library from lib/), and synthesizes its stack into OUT/NAME; NAME is the one the Python run gives it (`0079`
 *     for the README's example at line 79, `docs-mirrors-0011` for a page's). Ends with `readme-ts: N passed, M failed`.
 *   ts-node examples.ts go PAGE OUT_JSON
 *     finds, for each TypeScript example, its Go translation on PAGE (docs/go-examples.md: a ```go block after a
 *     `<!-- go: FILE HASH -->` line, HASH the first 12 hex digits of the example's sha256); writes {NAME: GO_NAME} to
 *     OUT_JSON, GO_NAME as test/heavy/jsii/go_examples.js names the block. Ends with `go-translations: N passed, M failed`:
 *     an example without a translation, or whose code has changed since it was translated, fails and says which.
 *   ts-node examples.ts compare OUT PYTHON_DIR GO_OUT PAIRS_JSON
 *     holds each example's Python template (PYTHON_DIR/NAME.out) and Go template (GO_OUT/GO_NAME) to its TypeScript
 *     one: the same logical ids, each of the same type. Ends with `examples: N passed, M failed`.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const REPO = path.join(__dirname, '..', '..', '..');

export interface Example {
  /** The name the Python run gives it: the README's line, or `docs-PAGE-LINE`. */
  readonly name: string;
  /** The file, relative to the repository. */
  readonly file: string;
  /** The line of its ```ts fence. */
  readonly line: number;
  readonly code: string;
  /** The rosetta fixture it compiles in: `default`, or `imports` for a complete program that makes its own app. */
  readonly fixture: string;
  /** The first 12 hex digits of the code's sha256. */
  readonly hash: string;
}

/** Every ```ts example of the README and of the docs/ pages, in the order the pages and their lines give. */
export function examples(): Example[] {
  const docs = fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  const found: Example[] = [];
  for (const file of ['README.md', ...docs]) {
    const lines = fs.readFileSync(path.join(REPO, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const fence = /^```(?:ts|typescript)(?: fixture=(\w+))?$/.exec(lines[i]);
      if (!fence) continue;
      const start = i + 1;
      const code: string[] = [];
      for (i++; i < lines.length && lines[i] !== '```'; i++) code.push(lines[i]);
      const line = String(start).padStart(4, '0');
      const text = code.join('\n');
      found.push({
        name: file === 'README.md' ? line : `docs-${path.basename(file, '.md')}-${line}`,
        file,
        line: start,
        code: text,
        fixture: fence[1] ?? 'default',
        hash: crypto.createHash('sha256').update(text).digest('hex').slice(0, 12),
      });
    }
  }
  return found;
}

let passed = 0;
let failed = 0;
function check(name: string, ok: boolean, detail: string): void {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `: ${detail}`}`);
  if (ok) passed++; else failed++;
}

/** The fixture's code with the example in place of `/// here`, its imports moved to the top, the library from lib/. */
function program(example: Example): string {
  const fixture = fs.readFileSync(path.join(REPO, 'rosetta', `${example.fixture}.ts-fixture`), 'utf8');
  const lines = example.code.split('\n');
  // An import may span lines: it runs to the line that names its module.
  const imports: string[] = [];
  const body: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^import /.test(lines[i])) { body.push(lines[i]); continue; }
    let statement = lines[i];
    while (!/from '[^']+';?\s*$/.test(statement) && i + 1 < lines.length) statement += `\n${lines[++i]}`;
    imports.push(statement);
  }
  const library = path.join(REPO, 'lib');
  // The fixture imports most names an example does: an example's import adds only the names the fixture lacks (a
  // name imported twice is an error).
  const named = (statement: string) => {
    const m = /^import\s+(?:\*\s+as\s+(\w+)|\{([^}]*)\})\s+from\s+('[^']+')/.exec(statement);
    if (!m) throw new Error(`an import this runner does not read: ${statement}`);
    return { module: m[3], names: m[1] ? [`* as ${m[1]}`] : m[2].split(',').map((n) => n.trim()).filter(Boolean) };
  };
  const fixtureImports = fixture.match(/^import [^;]+;/gm) ?? [];
  const given = new Set(fixtureImports.flatMap((s) => named(s).names.map((n) => n.replace(/^\* as /, ''))));
  const added = imports.map(named).map(({ module, names }) => {
    const fresh = names.filter((n) => !given.has(n.replace(/^\* as /, '')));
    if (fresh.length === 0) return '';
    return fresh[0].startsWith('* as ') ? `import ${fresh[0]} from ${module};` : `import { ${fresh.join(', ')} } from ${module};`;
  }).filter(Boolean);
  const source = `${added.join('\n')}\n${fixture.replace('/// here', body.join('\n'))}`;
  // The file runs outside the repository: each module by its path.
  const resolved = source.replace(/'cdk-efs-cache'/g, JSON.stringify(library))
    .replace(/from '((?:aws-cdk-lib|constructs)[^']*)'/g, (_, m: string) => `from ${JSON.stringify(require.resolve(m))}`);
  // A complete program's app is the one to synthesize; otherwise the fixture's stack is.
  return `${resolved}\nexport { ${example.fixture === 'imports' ? 'app' : 'Fixture'} };\n`;
}

function run(out: string): void {
  // Imported here: the other modes do not need the library.
  const { App } = require('aws-cdk-lib') as typeof import('aws-cdk-lib');
  fs.mkdirSync(out, { recursive: true });
  const work = fs.mkdtempSync(path.join(out, '.ts-'));
  for (const example of examples()) {
    const file = path.join(work, `${example.name}.js`);
    try {
      const js = ts.transpileModule(program(example), {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
        reportDiagnostics: true,
      });
      fs.writeFileSync(file, js.outputText);
      const module = require(file) as { Fixture?: new (scope: unknown, id: string) => unknown; app?: InstanceType<typeof App> };
      let app = module.app;
      if (!app) {
        if (!module.Fixture) throw new Error('a complete example (fixture=imports) must make its app as `const app`');
        app = new App();
        new module.Fixture(app, 'Readme');
      }
      // Each stack's template, named by the stack, as the Python and Go runs write theirs.
      fs.mkdirSync(path.join(out, example.name), { recursive: true });
      let count = 0;
      for (const stack of app.synth().stacks) {
        count += Object.keys((stack.template as { Resources?: object }).Resources ?? {}).length;
        fs.writeFileSync(path.join(out, example.name, `${stack.stackName}.template.json`), JSON.stringify(stack.template));
      }
      check(`${example.file} example at line ${example.line} runs in TypeScript: ${count} resources`, count > 0, 'no resource');
    } catch (e) {
      check(`${example.file} example at line ${example.line} runs in TypeScript`, false, `${e}\n${example.code}`);
    }
  }
  fs.rmSync(work, { recursive: true, force: true });
  console.log(`readme-ts: ${passed} passed, ${failed} failed`);
}

function go(page: string, outJson: string): void {
  const lines = fs.readFileSync(path.join(REPO, page), 'utf8').split('\n');
  const translations = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- go: (\S+) ([0-9a-f]{12}) -->$/.exec(lines[i]);
    if (!marker) continue;
    let fence = i + 1;
    while (fence < lines.length && lines[fence] !== '```go') fence++;
    // go_examples.js names a page's block by the page and the fence's line.
    translations.set(`${marker[1]} ${marker[2]}`, `${path.basename(page, '.md')}-${String(fence + 1).padStart(4, '0')}`);
  }
  const pairs: Record<string, string> = {};
  const used = new Set<string>();
  for (const example of examples()) {
    const key = `${example.file} ${example.hash}`;
    const goName = translations.get(key);
    check(`${example.file} example at line ${example.line} has its Go translation on ${page}`, goName !== undefined,
      `no block follows <!-- go: ${key} --> (translate the example, or update the block whose code it was before it changed)`);
    if (goName) { pairs[example.name] = goName; used.add(key); }
  }
  const stale = [...translations.keys()].filter((k) => !used.has(k));
  check(`${page} translates only examples that exist`, stale.length === 0, `no TypeScript example for ${stale.join(', ')}`);
  fs.writeFileSync(outJson, JSON.stringify(pairs, null, 1));
  console.log(`go-translations: ${passed} passed, ${failed} failed`);
}

type Cfn = { Resources?: Record<string, { Type: string }> };
/** `STACK/ID TYPE` for every resource of every template in a folder. */
function resources(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.template.json')).flatMap((f) => {
    const template = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Cfn;
    return Object.entries(template.Resources ?? {}).map(([id, r]) => `${f.replace(/\.template\.json$/, '')}/${id} ${r.Type}`);
  }).sort();
}

function compare(out: string, pythonDir: string, goOut: string, pairsJson: string): void {
  const pairs = JSON.parse(fs.readFileSync(pairsJson, 'utf8')) as Record<string, string>;
  for (const example of examples()) {
    const typescript = resources(path.join(out, example.name));
    const others: Array<[string, string | undefined]> = [
      ['Python', path.join(pythonDir, `${example.name}.out`)],
      ['Go', pairs[example.name] && path.join(goOut, pairs[example.name])],
    ];
    for (const [language, file] of others) {
      const name = `${example.file} example at line ${example.line}: ${language} synthesizes TypeScript's ${typescript.length} resources`;
      if (!file || !fs.existsSync(file)) { check(name, false, `no ${language} template (${file ?? 'no translation'})`); continue; }
      const theirs = resources(file);
      const missing = typescript.filter((r) => !theirs.includes(r));
      const extra = theirs.filter((r) => !typescript.includes(r));
      check(name, missing.length === 0 && extra.length === 0, `missing ${missing.join(', ')}; extra ${extra.join(', ')}`);
    }
  }
  console.log(`examples: ${passed} passed, ${failed} failed`);
}

if (require.main === module) {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'run') run(args[0]);
  else if (mode === 'go') go(args[0], args[1]);
  else if (mode === 'compare') compare(args[0], args[1], args[2], args[3]);
  else throw new Error(`usage: examples.ts run|go|compare ... (not ${mode})`);
  process.exit(failed === 0 ? 0 : 1);
}
