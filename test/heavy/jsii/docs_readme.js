/**
 * jsii-rosetta compiles the examples of an assembly's README only: this puts the docs/ pages in its place, one after
 * the other, so that their TypeScript examples are compiled as the README's are (same fixtures, same flags).
 *   node docs_readme.js set ASSEMBLY LINES_JSON PAGE...   the assembly's README becomes the pages; LINES_JSON records
 *                                                         the line each page starts at
 *   node docs_readme.js python TABLET LINES_JSON DIR       writes rosetta's Python translation of each example of the
 *                                                         pages into DIR, named by page and line
 *                                                         (`docs-getting-started-0012.py`); prints how many
 */
const fs = require('fs');
const path = require('path');

const [mode, ...args] = process.argv.slice(2);

/** The page and its own line for a line of the joined README. */
function locate(starts, line) {
  const page = starts.filter((s) => s.line <= line).pop();
  return `${path.basename(page.file, '.md')}-${String(line - page.line + 1).padStart(4, '0')}`;
}

if (mode === 'set') {
  const [assemblyFile, linesFile, ...pages] = args;
  const assembly = JSON.parse(fs.readFileSync(assemblyFile, 'utf8'));
  const starts = [];
  const parts = [];
  let line = 1;
  for (const file of pages) {
    const text = fs.readFileSync(file, 'utf8').replace(/\n*$/, '\n');
    starts.push({ file, line });
    parts.push(text);
    line += text.split('\n').length - 1 + 1;
  }
  assembly.readme = { markdown: parts.join('\n') };
  fs.writeFileSync(assemblyFile, JSON.stringify(assembly));
  fs.writeFileSync(linesFile, JSON.stringify(starts));
  console.log(`${pages.length} pages, ${line - 1} lines, as the assembly's README`);
} else if (mode === 'python') {
  const [tablet, linesFile, dir] = args;
  const starts = JSON.parse(fs.readFileSync(linesFile, 'utf8'));
  const snippets = Object.values(JSON.parse(fs.readFileSync(tablet, 'utf8')).snippets)
    .filter((s) => s.location.api.api === 'moduleReadme');
  fs.mkdirSync(dir, { recursive: true });
  for (const s of snippets) {
    fs.writeFileSync(path.join(dir, `docs-${locate(starts, s.location.field.line)}.py`), `${s.translations.python.source}\n`);
  }
  console.log(`docs/: ${snippets.length} TypeScript examples compiled (jsii-rosetta --strict)`);
} else {
  throw new Error(`usage: node docs_readme.js set|name ... (not ${mode})`);
}
