import * as fs from 'fs';
import * as path from 'path';

/*
 * test/ mirrors lib/: every folder of lib/ has its test folder, and test/README.md's table, which maps each feature to
 * where it is proved, names only files that exist (unit tests under test/, host runs under test/host/, emulator cases
 * under test/heavy/emulator/, lab files under test/heavy/lab/).
 */

const TEST = __dirname;
const LIB = path.join(TEST, '..', 'lib');

/** Every folder under lib/, nested ones included, relative to lib/. */
function libFolders(dir = ''): string[] {
  return fs.readdirSync(path.join(LIB, dir), { withFileTypes: true }).filter((e) => e.isDirectory())
    .flatMap((e) => [path.join(dir, e.name), ...libFolders(path.join(dir, e.name))]);
}

describe('test/ mirrors lib/', () => {
  test.each(libFolders())('lib/%s has its test folder under test/', (folder) => {
    expect(fs.statSync(path.join(TEST, folder), { throwIfNoEntry: false })?.isDirectory()).toBe(true);
  });
});

describe('test/README.md names only files that exist', () => {
  const rows = fs.readFileSync(path.join(TEST, 'README.md'), 'utf8').split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| feature') && !l.startsWith('|---'))
    .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  const bases = [TEST, path.join(TEST, 'host'), path.join(TEST, 'heavy', 'emulator'), path.join(TEST, 'heavy', 'lab')];
  // A unit test named without a folder and said to be "per folder" must exist in at least one folder of test/.
  const anywhere = (name: string) => fs.readdirSync(TEST, { withFileTypes: true })
    .some((e) => e.isDirectory() && fs.existsSync(path.join(TEST, e.name, name)));
  const named = rows.flatMap(([feature, ...cells]) => cells.flatMap((cell, column) =>
    [...cell.matchAll(/(?:^|[\s,(])((?:[\w-]+\/)*[\w.-]+\.(?:ts|sh))(?=$|[\s,)])/g)]
      .map((m) => ({ feature, column, file: m[1], perFolder: cell.includes(`${m[1]} per folder`) }))
      // A host run's cases by number: `al2023/cases/20-22` names each case file from 20- to 22-.
      .concat([...cell.matchAll(/((?:[\w-]+\/)+cases)\/(\d+)(?:-(\d+))?/g)].flatMap((m) => {
        const first = Number(m[2]);
        const numbers = Array.from({ length: Number(m[3] ?? m[2]) - first + 1 }, (_, i) => String(first + i).padStart(2, '0'));
        return numbers.map((n) => {
          const file = fs.readdirSync(path.join(bases[column], m[1])).find((f) => f.startsWith(`${n}-`)) ?? `${n}-(none)`;
          return { feature, column, file: `${m[1]}/${file}`, perFolder: false };
        });
      }))));

  test('the table has a row per feature and names at least one file in each column', () => {
    expect(rows.length).toBeGreaterThan(15);
    expect(new Set(named.map((n) => n.column))).toEqual(new Set([0, 1, 2, 3]));
  });

  test.each(named.map((n) => [n.file, n.feature, n]))('%s (%s)', (_file, _feature, n: any) => {
    const where = path.join(bases[n.column], n.file);
    expect(fs.existsSync(where) || (n.perFolder && anywhere(n.file))).toBe(true);
  });
});
