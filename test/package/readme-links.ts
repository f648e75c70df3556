// The relative links of a markdown file must point at files the package ships: npm and Construct Hub show
// README.md without the repository around it.
// Usage: ts-node readme-links.ts README.md FILE_LIST (one path a line, relative to the package root)
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
 * The relative links of `markdown` (a file at the package root) whose target is neither one of `files` nor a
 * folder that holds one of them.
 */
export function missingTargets(markdown: string, files: string[]): string[] {
  const shipped = new Set(files.map((f) => path.posix.normalize(f)));
  return relativeLinks(markdown).filter((target) => {
    const t = path.posix.normalize(target).replace(/\/$/, '');
    if (t.startsWith('..')) return true;
    return !shipped.has(t) && ![...shipped].some((f) => f.startsWith(`${t}/`));
  });
}

if (require.main === module) {
  const [readme, fileList] = process.argv.slice(2);
  if (!readme || !fileList) throw new Error('usage: readme-links.ts README.md FILE_LIST');
  const markdown = fs.readFileSync(readme, 'utf8');
  const files = fs.readFileSync(fileList, 'utf8').split('\n').filter((l) => l.length > 0);
  const links = relativeLinks(markdown);
  const missing = missingTargets(markdown, files);
  if (missing.length > 0) {
    console.error(`FAIL: ${readme} links to files the package does not ship: ${missing.join(', ')}`);
    process.exit(1);
  }
  console.log(`${readme}: ${links.length} relative links, each to a file the package ships (${[...new Set(links)].join(', ')})`);
}
