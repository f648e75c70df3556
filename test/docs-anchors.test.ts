/**
 * The README and the docs/ pages link to each other's sections: every `#fragment` of a link to one of them (or of a
 * link within a page) names a heading of the page it points at, as GitHub and Construct Hub make its anchor.
 */
import * as fs from 'fs';
import * as path from 'path';
import { relativeLinks } from './heavy/package/readme-links';

const REPO = path.join(__dirname, '..');
const pages = ['README.md', ...fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The anchors of a markdown file's headings (code blocks left out), numbered as GitHub does when a heading repeats. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = markdown.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
  for (const m of text.matchAll(/^#{1,6} +(.*?) *#*$/gm)) {
    const base = m[1].toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Links with a fragment, as [target page from the repository's root, fragment]. */
function fragments(page: string, markdown: string): Array<[string, string]> {
  const inPage = [...markdown.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '')
    .matchAll(/\]\(#([^)\s]+)\)/g)].map((m): [string, string] => [page, m[1]]);
  const raw = [...markdown.matchAll(/\]\(([^)#\s]+\.md)#([^)\s]+)\)/g)];
  const targets = new Set(relativeLinks(markdown));
  const across = raw.filter((m) => targets.has(m[1]))
    .map((m): [string, string] => [path.posix.normalize(path.posix.join(path.posix.dirname(page), m[1])), m[2]]);
  return [...inPage, ...across];
}

test('the anchors are GitHub\'s', () => {
  expect([...anchors('# Set-up: two commands\n## `CacheFleetOptions` (also the props of `CacheFleet`)\n## NFSv3 or NFSv4.1\n## Limits\n## Limits')])
    .toEqual(['set-up-two-commands', 'cachefleetoptions-also-the-props-of-cachefleet', 'nfsv3-or-nfsv41', 'limits', 'limits-1']);
});

test('the README links to sections of the docs pages (the check finds them)', () => {
  const links = fragments('README.md', fs.readFileSync(path.join(REPO, 'README.md'), 'utf8'));
  expect(links.filter(([target]) => target.startsWith('docs/')).length).toBeGreaterThan(10);
  expect(links).toContainEqual(['README.md', 'limits']);
});

test.each(pages)('every section %s links to is a heading of its page', (page) => {
  const links = fragments(page, fs.readFileSync(path.join(REPO, page), 'utf8'));
  const broken = links.filter(([target, fragment]) => {
    const file = path.join(REPO, target);
    return !fs.existsSync(file) || !anchors(fs.readFileSync(file, 'utf8')).has(fragment);
  }).map(([target, fragment]) => `${target}#${fragment}`);
  expect(broken).toEqual([]);
});
