import * as fs from 'fs';
import * as path from 'path';
import { MIRROR_ROOT } from '../../lib/cache-fleet/mirror';
import { NFS_MOUNTD_PORT, NFS_PORT } from '../../lib/private/constants';
import { EFS_UTILS_TLS_PORT } from '../../lib/private/mount';

/**
 * Facts that the TypeScript and the instances' bash both use. Each has one owner in lib/ (a constant); where the bash
 * must name it too, it is read here from the scripts and compared, so that the two cannot drift apart silently.
 */
const ASSETS = path.join(__dirname, '..', '..', 'assets');

function scripts(dir: string = ASSETS): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? scripts(p) : e.name.endsWith('.sh') ? [p] : [];
  });
}

/** Code lines (not comments) of every script, as `file:line: text`, that match `re`. */
function codeLines(re: RegExp): string[] {
  return scripts().flatMap((file) => fs.readFileSync(file, 'utf8').split('\n').flatMap((text, i) => (
    !/^\s*#/.test(text) && re.test(text) ? [`${path.relative(ASSETS, file)}:${i + 1}: ${text.trim()}`] : []
  )));
}

/** The first capture of `re` in one asset, which must match. */
function captured(asset: string, re: RegExp): string {
  const m = fs.readFileSync(path.join(ASSETS, asset), 'utf8').match(re);
  if (!m) throw new Error(`${asset} no longer matches ${re}: update this test to where the script names the value`);
  return m[1];
}

describe('facts shared by the TypeScript and the bash', () => {
  test('the scripts are found (a test reading no script would pass whatever they say)', () => {
    expect(scripts().map((f) => path.relative(ASSETS, f))).toEqual(expect.arrayContaining([
      'cache-node/bootstrap.sh', 'client/bootstrap.sh', 'lib/mirror.sh', 'seeding/seed.sh',
    ]));
  });

  test('the nodes\' rpc.mountd listens on NFS_MOUNTD_PORT, the port clients and security groups use', () => {
    expect(Number(captured('cache-node/bootstrap.sh', /^MOUNTD_PORT=(\d+)$/m))).toBe(NFS_MOUNTD_PORT);
    // No script writes the number anywhere else.
    expect(codeLines(new RegExp(`\\b${NFS_MOUNTD_PORT}\\b`))).toEqual([`cache-node/bootstrap.sh:${lineOf('cache-node/bootstrap.sh', /^MOUNTD_PORT=/)}: MOUNTD_PORT=${NFS_MOUNTD_PORT}`]);
  });

  test('every NFS port a script names (port=) is NFS_PORT', () => {
    const ports = codeLines(/[^t]port=\d/).flatMap((l) => [...l.matchAll(/[^t]port=(\d+)/g)].map((m) => Number(m[1])));
    expect(ports.length).toBeGreaterThan(0);
    expect(new Set(ports)).toEqual(new Set([NFS_PORT]));
  });

  test('the mirrors\' root of the node and the client scripts is MIRROR_ROOT', () => {
    expect(captured('lib/mirror.sh', /^MIRROR_ROOT=(\S+)/m)).toBe(MIRROR_ROOT);
    expect(captured('client/bootstrap.sh', /^\s*need EFSC_MIRROR_MOUNTS '\^\( \?(\/[^/]+)\//m)).toBe(MIRROR_ROOT);
    expect(captured('client/bootstrap.sh', /^mirror_mount_point\(\) \{ echo "\$EFSC_MIRROR_MOUNT_POINT\$\{1#([^}]+)\}"; \}$/m)).toBe(MIRROR_ROOT);
    // Outside those three places, no script code writes the root as a literal (mirror.sh uses $MIRROR_ROOT).
    const literal = codeLines(new RegExp(`(^|[^\\w./-])${MIRROR_ROOT}(?![\\w.-])`));
    expect(literal.map((l) => l.replace(/:\d+:.*/, ''))).toEqual(['client/bootstrap.sh', 'client/bootstrap.sh', 'lib/mirror.sh']);
  });

  test('no script names a TLS port of its own: efs-utils\' tlsport comes from EFS_UTILS_TLS_PORT, as documented', () => {
    expect(codeLines(new RegExp(`tlsport|\\b${EFS_UTILS_TLS_PORT}\\b`))).toEqual([]);
    // FsCacheClientProps.tlsPort documents the default (jsii needs a literal there): it must be the constant's value.
    const source = fs.readFileSync(path.join(__dirname, '..', '..', 'lib', 'client', 'fs-cache-client.ts'), 'utf8');
    const doc = source.match(/@default (\S+)\s*\*\/\s*readonly tlsPort\?: number;/);
    expect(doc?.[1]).toBe(String(EFS_UTILS_TLS_PORT));
  });
});

function lineOf(asset: string, re: RegExp): number {
  return fs.readFileSync(path.join(ASSETS, asset), 'utf8').split('\n').findIndex((l) => re.test(l)) + 1;
}
