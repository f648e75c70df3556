import * as fs from 'fs';
import * as path from 'path';
import { DATA_FILE, DOCS_FILE, renderDocs } from './docs';

describe('Amazon Linux 2023 package facts', () => {
  test('docs/al2023.md is what test/host/al2023/packages.json says (npx ts-node test/host/al2023/docs.ts --write)', () => {
    expect(fs.readFileSync(DOCS_FILE, 'utf8')).toEqual(renderDocs());
  });

  test('every package of the data file but the image\'s own is installed by some case of the dnf run', () => {
    const dir = path.join(__dirname, 'cases');
    const cases = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
    const installed = new Set([...cases.matchAll(/'dnf -qy install ([a-z0-9 -]+)'/g)].flatMap((m) => m[1].split(' ')));
    const data = JSON.parse(fs.readFileSync(DATA_FILE, 'utf8')) as { packages: { name: string; preinstalled?: boolean }[] };
    const names = data.packages.filter((p) => !p.preinstalled).map((p) => p.name);
    expect(names.filter((n) => !installed.has(n))).toEqual([]);
    expect([...installed].filter((n) => !names.includes(n))).toEqual([]);
  });
});
