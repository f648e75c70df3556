// The folder graph of lib/: an edge from folder A to folder B for each module of A that imports one of B (type-only
// imports and re-exports included; the modules at lib/'s top are the folder "root"). Run by test/cycles.sh:
//   node test/folder-layers.js cycles DIR   prints `cycle: a -> b -> a` and each import of the cycle; exit 1 if any
//   node test/folder-layers.js layers DIR   prints each import that does not go down LAYERS; exit 1 if any
// Imports inside one folder are the file check's (madge) to judge.
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

// Bottom to top: a folder may import only folders of a lower line. docs/development.md draws the same diagram.
const LAYERS = [
  ['private'],
  ['nfs', 'instance'],
  ['fscache'],
  ['origin', 'seeding'],
  ['cache-fleet'],
  ['client'],
  ['containers'],
  ['monitoring'],
  ['root'],
];

function modules(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return modules(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The folder of `file` under `root`: its first path segment, or "root" for a module at the top. */
function folderOf(root, file) {
  const parts = path.relative(root, file).split(path.sep);
  return parts.length === 1 ? 'root' : parts[0];
}

/** Every import between two folders: { from, to, file, spec }. */
function edges(root) {
  const out = [];
  for (const file of modules(root)) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    for (const { fileName: spec } of info.importedFiles) {
      if (!spec.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec);
      if (path.relative(root, target).startsWith('..')) continue;
      // A module at the top is "root"; a folder named whole (its index.ts) is that folder.
      const inside = path.relative(root, target).split(path.sep);
      const to = inside.length > 1 || (fs.existsSync(target) && fs.statSync(target).isDirectory()) ? inside[0] : 'root';
      const from = folderOf(root, file);
      if (from !== to) out.push({ from, to, file: path.relative(process.cwd(), file), spec });
    }
  }
  return out;
}

/** The strongly connected components of more than one folder (Tarjan), each as a list of folders. */
function cyclesOf(es) {
  const next = new Map();
  for (const e of es) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    if (!next.has(e.to)) next.set(e.to, new Set());
    next.get(e.from).add(e.to);
  }
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v)) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) {
        low.set(v, Math.min(low.get(v), idx.get(w)));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!idx.has(v)) visit(v);
  return found;
}

function main([mode, root]) {
  const es = edges(root);
  const problems = [];
  if (mode === 'cycles') {
    for (const scc of cyclesOf(es)) {
      problems.push(`cycle: ${[...scc, scc[0]].join(' -> ')}`);
      for (const e of es.filter((x) => scc.includes(x.from) && scc.includes(x.to))) problems.push(`  ${e.from} -> ${e.to}: ${e.file} imports '${e.spec}'`);
    }
  } else if (mode === 'layers') {
    const tier = new Map(LAYERS.flatMap((line, i) => line.map((f) => [f, i])));
    const folders = new Set([...es.flatMap((e) => [e.from, e.to]), ...fs.readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)]);
    for (const f of [...folders].sort()) if (!tier.has(f)) problems.push(`${f}: a folder of ${root}/ in no layer (add it to LAYERS in test/folder-layers.js)`);
    for (const e of es) {
      if (tier.has(e.from) && tier.has(e.to) && tier.get(e.to) >= tier.get(e.from)) {
        problems.push(`${e.file} imports '${e.spec}': ${e.from} may import only folders below it, and ${e.to} is not`);
      }
    }
  } else {
    throw new Error('usage: node test/folder-layers.js cycles|layers DIR');
  }
  for (const p of problems) console.log(p);
  process.exitCode = problems.length ? 1 : 0;
}

main(process.argv.slice(2));
