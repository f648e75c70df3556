import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/*
 * The API's TSDoc is written as aws-cdk's anchors write theirs: the first sentence says what the thing is in 20 words
 * or fewer; longer explanations live in a docs page; no history (issue numbers, what an older release did).
 */

const LIB = path.join(__dirname, '..', 'lib');
const MAX_FIRST_SENTENCE_WORDS = 20;

interface Doc {
  readonly name: string;
  readonly text: string;
}

function exportedNames(): Map<string, string> {
  const index = fs.readFileSync(path.join(LIB, 'index.ts'), 'utf8');
  const names = new Map<string, string>();
  for (const m of index.matchAll(/export \{([^}]*)\} from '([^']+)'/g)) {
    for (const n of m[1].split(',')) names.set(n.trim(), path.join(LIB, `${m[2]}.ts`));
  }
  return names;
}

function isPublicMember(member: ts.Node): boolean {
  const name = (member as { name?: ts.Node }).name;
  if (!name || !ts.isIdentifier(name) || name.text.startsWith('_')) return false;
  const mods = ts.canHaveModifiers(member) ? ts.getModifiers(member) ?? [] : [];
  if (mods.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)) return false;
  return !ts.getJSDocTags(member).some((t) => t.tagName.text === 'internal');
}

function docOf(node: ts.Node): string {
  const comments = (node as { jsDoc?: ts.JSDoc[] }).jsDoc ?? [];
  const last = comments[comments.length - 1];
  return last ? (ts.getTextOfJSDocComment(last.comment) ?? '').replace(/\s+/g, ' ').trim() : '';
}

/** The TSDoc of every exported type and of each of its public members. */
function publicDocs(): Doc[] {
  const docs: Doc[] = [];
  const exported = exportedNames();
  for (const file of new Set(exported.values())) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      const decl = statement as ts.DeclarationStatement;
      const name = decl.name && ts.isIdentifier(decl.name) ? decl.name.text : undefined;
      if (!name || exported.get(name) !== file) continue;
      docs.push({ name, text: docOf(statement) });
      const members: readonly ts.Node[] =
        ts.isInterfaceDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement) ? statement.members : [];
      for (const member of members) {
        if (ts.isConstructorDeclaration(member) || !isPublicMember(member)) continue;
        docs.push({ name: `${name}.${((member as ts.NamedDeclaration).name as ts.Identifier).text}`, text: docOf(member) });
      }
    }
  }
  return docs;
}

/** The sentences of a doc's text (its tags aside): each ends at a '.' outside backquotes that ends the text or a word. */
function sentences(text: string): string[] {
  const found: string[] = [];
  let inCode = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '`') inCode = !inCode;
    if (!inCode && c === '.' && (i === text.length - 1 || text[i + 1] === ' ')) {
      found.push(text.slice(start, i + 1).trim());
      start = i + 1;
    }
  }
  if (text.slice(start).trim()) found.push(text.slice(start).trim());
  return found;
}

const docs = publicDocs();

describe('the API\'s TSDoc', () => {
  test('the scan reads the exported types and their members', () => {
    expect(docs.length).toBeGreaterThan(150);
    expect(docs.map((d) => d.name)).toEqual(expect.arrayContaining(['CacheFleet', 'CacheFleetOptions.exportPath', 'MountSource.cacheFleet']));
  });

  test('every exported type and public member is documented', () => {
    expect(docs.filter((d) => d.text === '').map((d) => d.name)).toEqual([]);
  });

  test(`each first sentence says what the thing is in ${MAX_FIRST_SENTENCE_WORDS} words or fewer`, () => {
    const long = docs
      .map((d) => ({ name: d.name, words: (sentences(d.text)[0] ?? '').split(' ').length }))
      .filter((d) => d.words > MAX_FIRST_SENTENCE_WORDS)
      .map((d) => `${d.name} (${d.words} words)`);
    expect(long).toEqual([]);
  });

  test('then at most one sentence of why: longer explanations are in a docs page behind @see', () => {
    const long = docs.filter((d) => sentences(d.text).length > 2).map((d) => `${d.name} (${sentences(d.text).length} sentences)`);
    expect(long).toEqual([]);
  });

  test('no history: no issue numbers and no comparison with an earlier release', () => {
    const history = /\(issue \d+\)|\bissue \d+\b|\bas before\b|\bas it always was\b|\bin 0\.1\b|\bsince 0\.\d\b/i;
    expect(docs.filter((d) => history.test(d.text)).map((d) => d.name)).toEqual([]);
  });
});
