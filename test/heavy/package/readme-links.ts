// The relative links of the package's markdown files must point at files the package ships: npm and Construct Hub
// show README.md without the repository around it, and the docs/ pages it links to are read from the package too.
// Usage: ts-node readme-links.ts FILE_LIST MARKDOWN... (FILE_LIST: one path a line, relative to the package root;
// each MARKDOWN a path relative to the package root, whose links are relative to its own folder)
import * as fs from 'fs';
import * as path from 'path';

/**
 * The targets of the relative links in `markdown`: inline links and images (`[text](target)`, `![alt](target)`,
 * the text may span lines), reference definitions (`[label]: target`) and HTML `src`/`href` attributes; without
 * their `#fragment` or `?query`. Links to a URL (`scheme:`), to a fragment only (`#section`) or from the root
 * (`/path`) are not relative, and code (fenced blocks, inline spans) holds no links.
 */
export function relativeLinks(markdown: string): string[] {
  const text = markdown
    .replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '')
    .replace(/`[^`\n]*`/g, '');
  const targets: string[] = [];
  const patterns = [
    /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g,
    /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm,
    /\b(?:src|href)\s*=\s*["']([^"']+)["']/gi,
  ];
  for (const re of patterns) {
    for (const m of text.matchAll(re)) targets.push(m[1]);
  }
  return targets
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#') && !t.startsWith('/'))
    .map((t) => decodeURI(t.replace(/[#?].*$/, '')));
}

/**
 * The relative links of `markdown` (a file in the folder `folder` of the package, its root by default) whose target
 * is neither one of `files` nor a folder that holds one of them.
 */
export function missingTargets(markdown: string, files: string[], folder = '.'): string[] {
  const shipped = new Set(files.map((f) => path.posix.normalize(f)));
  return relativeLinks(markdown).filter((target) => {
    const t = path.posix.normalize(path.posix.join(folder, target)).replace(/\/$/, '');
    if (t.startsWith('..')) return true;
    return !shipped.has(t) && ![...shipped].some((f) => f.startsWith(`${t}/`));
  });
}

if (require.main === module) {
  const [fileList, ...pages] = process.argv.slice(2);
  if (!fileList || pages.length === 0) throw new Error('usage: readme-links.ts FILE_LIST MARKDOWN...');
  const files = fs.readFileSync(fileList, 'utf8').split('\n').filter((l) => l.length > 0);
  let failed = false;
  for (const page of pages) {
    const markdown = fs.readFileSync(page, 'utf8');
    const links = relativeLinks(markdown);
    const missing = missingTargets(markdown, files, path.posix.dirname(page));
    if (missing.length > 0) {
      console.error(`FAIL: ${page} links to files the package does not ship: ${missing.join(', ')}`);
      failed = true;
      continue;
    }
    console.log(`${page}: ${links.length} relative links, each to a file the package ships (${[...new Set(links)].join(', ')})`);
  }
  if (failed) process.exit(1);
}
