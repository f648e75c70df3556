/**
 * Writes the README's examples as Go files of the package test/heavy/jsii/go/readme (see fixture.go there), one
 * example_LINE.go per example from example.go.in, the example's code in place of its `/// here` line, without its
 * import lines (the template imports every module an example may use):
 *   node go_examples.js readme PAGE DIR         a page's own Go examples (```go blocks, named by their line, and
 *                                              a page other than README.md by its name too: `languages-0044`)
 *   node go_examples.js rosetta TABLET DIR      jsii-rosetta's Go translations of its TypeScript examples
 * Prints how many it wrote (nothing for a page other than the README without any).
 */
const fs = require('fs');
const path = require('path');

const [from, source, dir] = process.argv.slice(2);
const template = fs.readFileSync(path.join(__dirname, 'go', 'readme', 'example.go.in'), 'utf8');
const at = template.indexOf('/// here\n');

const examples = [];
const prefix = from === 'readme' && path.basename(source) !== 'README.md' ? `${path.basename(source, '.md')}-` : '';
if (from === 'readme') {
  const lines = fs.readFileSync(source, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```go') continue;
    const start = i;
    const code = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) code.push(lines[i]);
    examples.push({ line: start + 1, code: code.join('\n') });
  }
} else if (from === 'rosetta') {
  for (const s of Object.values(JSON.parse(fs.readFileSync(source, 'utf8')).snippets)) {
    examples.push({ line: s.location.field.line, code: s.translations.go.source });
  }
} else {
  throw new Error(`usage: node go_examples.js readme|rosetta SOURCE DIR (not ${from})`);
}

for (const { line, code } of examples) {
  const name = `${prefix}${String(line).padStart(4, '0')}`;
  // A complete example (one that makes its own app) ends with `app.Synth(nil)`, as a Go program must: here it returns
  // its app instead, so that the runner synthesizes it into its folder.
  const body = code.replace(/^import \([^)]*\)\n/m, '').split('\n').filter((l) => !/^import /.test(l)).join('\n')
    .replace(/^(\s*)app\.Synth\(nil\)\s*$/m, '$1return app');
  const head = template.slice(0, at).replaceAll('LINE', name);
  const tail = template.slice(at + '/// here\n'.length);
  fs.writeFileSync(path.join(dir, `example_${name}.go`), `${head}${body}\n${tail}`);
}
// A page without Go examples (most docs pages) says nothing.
if (examples.length > 0 || !prefix) console.log(`${source}: ${examples.length} examples written to ${dir}`);
