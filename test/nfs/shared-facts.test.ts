import * as fs from 'fs';
import * as path from 'path';
import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, FsCacheClientLaunchTemplate, MountSource } from '../../lib';
import { MIRROR_NAMESPACE, MIRROR_ROOT } from '../../lib/cache-fleet/mirror-paths';
import { EFS_UTILS_TLS_PORT } from '../../lib/nfs/mount';
import { NFS_MIRROR_PORT, NFS_MOUNTD_PORT, NFS_PORT } from '../../lib/nfs/ports';
import { importedFs, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters } from '../util/user-data';

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

describe('facts shared by the TypeScript and the bash', () => {
  test('the scripts are found (a test reading no script would pass whatever they say)', () => {
    expect(scripts().map((f) => path.relative(ASSETS, f))).toEqual(expect.arrayContaining([
      'cache-node/bootstrap.sh', 'client/bootstrap.sh', 'lib/mirror.sh', 'seeding/seed.sh',
    ]));
  });

  test('the ports, the mirrors\' namespace and root reach the scripts as parameters, which no script writes itself', () => {
    const node = renderedParameters((stack, vpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) }));
    expect(node.EFSC_MOUNTD_PORT).toBe(String(NFS_MOUNTD_PORT));
    expect(node.EFSC_MIRROR_PORT).toBe(String(NFS_MIRROR_PORT));
    expect(node.EFSC_MIRROR_NAMESPACE).toBe(MIRROR_NAMESPACE);
    expect(node.EFSC_MIRROR_ROOT).toBe(MIRROR_ROOT);
    const client = renderedParameters((stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Clients', {
      vpc, source: MountSource.fileSystem(importedFs(stack)),
    }));
    expect(client.EFSC_MIRROR_ROOT).toBe(MIRROR_ROOT);
    // No script code writes one of them as a literal (a unit named efs-cache-mirror.timer is not the namespace).
    expect(codeLines(new RegExp(`\\b(${NFS_MOUNTD_PORT}|${NFS_MIRROR_PORT})\\b`))).toEqual([]);
    expect(codeLines(new RegExp(`${MIRROR_NAMESPACE}(?![\\w.-])`))).toEqual([]);
    expect(codeLines(new RegExp(`(^|[^\\w./-])${MIRROR_ROOT}(?![\\w.-])`))).toEqual([]);
  });

  test('the scripts name NFS\'s port once (common.sh\'s NFS_PORT, the library\'s NFS_PORT) and use the name', () => {
    const named = `lib/common.sh:${fs.readFileSync(path.join(ASSETS, 'lib', 'common.sh'), 'utf8').split('\n').indexOf(`NFS_PORT=${NFS_PORT}`) + 1}: NFS_PORT=${NFS_PORT}`;
    expect(codeLines(new RegExp(`\\b${NFS_PORT}\\b`))).toEqual([named]);
    expect(codeLines(/[^t]port=\$\{?NFS_PORT\b/).length).toBeGreaterThan(0);
  });

  test('no script names a TLS port of its own: efs-utils\' tlsport comes from EFS_UTILS_TLS_PORT, as documented', () => {
    expect(codeLines(new RegExp(`tlsport|\\b${EFS_UTILS_TLS_PORT}\\b`))).toEqual([]);
    // FsCacheClientProps.tlsPort documents the default (jsii needs a literal there): it must be the constant's value.
    const source = fs.readFileSync(path.join(__dirname, '..', '..', 'lib', 'client', 'options.ts'), 'utf8');
    const doc = source.match(/@default (\S+)\s*\*\/\s*readonly tlsPort\?: number;/);
    expect(doc?.[1]).toBe(String(EFS_UTILS_TLS_PORT));
  });
});

/** The parameters of the one launch template a construct makes in a stack of its own. */
function renderedParameters(build: (stack: Stack, vpc: ec2.Vpc) => unknown): Record<string, string> {
  const { stack, vpc } = stackWithVpc();
  build(stack, vpc);
  const userData = Object.values(launchTemplateUserData(stack));
  expect(userData).toHaveLength(1);
  return parameters(userData[0]);
}
