import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/*
 * No body of lib/ over MAX_BODY_LINES lines: constructors, methods, accessors, functions and arrow functions, each
 * counted from its opening brace to its closing one. A constructor reads as a table of contents; what it does is in
 * private methods and helper functions, each short enough to read at once.
 */

const MAX_BODY_LINES = 60;
const LIB = path.join(__dirname, '..', 'lib');

interface Body {
  readonly where: string;
  readonly lines: number;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every function-like body of `text`, with its line count and where it starts. */
export function bodies(fileName: string, text: string): Body[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: Body[] = [];
  const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body && ts.isBlock(node.body as ts.Node)) {
      const body = node.body as ts.Block;
      const name = ts.isConstructorDeclaration(node) ? 'constructor' : ((node as ts.FunctionLikeDeclaration).name?.getText(source) ?? 'function');
      found.push({ where: `${fileName}:${line(node.getStart(source)) + 1} ${name}`, lines: line(body.getEnd()) - line(body.getStart(source)) + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('bodies of lib/ are at most 60 lines', () => {
  test('the count finds a body of 61 lines (the canary)', () => {
    const canary = ['export class C {', '  constructor() {', ...Array.from({ length: 59 }, (_, i) => `    console.log(${i});`), '  }', '}'].join('\n');
    const arrow = ['export const f = () => {', ...Array.from({ length: 59 }, (_, i) => `  console.log(${i});`), '};'].join('\n');
    expect(bodies('canary.ts', canary)).toEqual([{ where: 'canary.ts:2 constructor', lines: 61 }]);
    expect(bodies('arrow.ts', arrow)).toEqual([{ where: 'arrow.ts:1 function', lines: 61 }]);
  });

  const all = sourceFiles(LIB).flatMap((f) => bodies(path.relative(path.join(LIB, '..'), f), fs.readFileSync(f, 'utf8')));

  test('the scan reads lib/ (its constructors among them)', () => {
    expect(all.filter((b) => b.where.endsWith(' constructor')).length).toBeGreaterThan(20);
  });

  test(`no body is over ${MAX_BODY_LINES} lines`, () => {
    const longest = [...all].sort((a, b) => b.lines - a.lines)[0];
    process.stdout.write(`longest body of lib/: ${longest.lines} lines, ${longest.where}\n`);
    expect(all.filter((b) => b.lines > MAX_BODY_LINES).map((b) => `${b.where}: ${b.lines} lines`)).toEqual([]);
  });
});
