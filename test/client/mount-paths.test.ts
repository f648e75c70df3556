/**
 * Imported fleets and the directories a client mounts on: what `CacheFleet.fromCacheFleetAttributes` lets through
 * as tokens reaches the client whole and works once resolved, and the client's boot check refuses the mount paths
 * that synth cannot see (a `.` or `..` segment anywhere, one mount on or inside another), run here with the real
 * script on this host (test/util/run-script.ts).
 */
import { Fn, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, FsCacheClientLaunchTemplate, Mirror, MountSource } from '../../lib';
import { CfnTemplate, PSEUDO_VALUES, resolveUserData } from '../heavy/lab/harness/user-data';
import { importedFs, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { expand, launchTemplateUserData, parameters } from '../util/user-data';

/** A client user data whose last line runs the parameter checks only, and prints each mirror's mount point. */
function checksOnly(userData: string): string {
  const code = expand(userData);
  if (!/^main "\$@"$/m.test(code)) throw new Error('no main "$@" line to replace');
  return code.replace(/^main "\$@"$/m, 'check_parameters\nfor m in $EFSC_MIRROR_MOUNTS; do echo "mount point: $(mirror_mount_point "$m")" >&2; done\necho "checks passed" >&2');
}

/** Replaces the value of one header line (`EFSC_X='...'`) of a rendered user data. */
function withParameter(userData: string, name: string, value: string): string {
  const re = new RegExp(`^${name}='[^']*'$`, 'm');
  if (!re.test(userData)) throw new Error(`no ${name} line`);
  return userData.replace(re, `${name}='${value}'`);
}

describe('an imported fleet given as tokens', () => {
  /** Another stack's view of a fleet: every attribute an import of the fleet stack's outputs, mirrors included. */
  function importedFromOutputs() {
    const { stack, vpc } = stackWithVpc();
    const p = (name: string) => Fn.importValue(name);
    const mirrorPath = p('MirrorPath');
    const fleet = CacheFleet.fromCacheFleetAttributes(stack, 'Fleet', {
      endpoint: p('Endpoint'),
      exportPath: p('ExportPath'),
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'),
      mirrorExports: [{ path: mirrorPath, exportPath: p('MirrorExportPath'), fsid: p('MirrorFsid') }],
    });
    const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: [mirrorPath] }) });
    const template = Template.fromStack(stack).toJSON() as CfnTemplate;
    const logicalId = stack.getLogicalId(clients.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate);
    const resolve = (values: Record<string, string>) => resolveUserData(template, logicalId, {
      ...PSEUDO_VALUES,
      'Fn::ImportValue:Endpoint': 'cache.efs-cache.internal', 'Fn::ImportValue:ExportPath': '/efs',
      ...Object.fromEntries(Object.entries(values).map(([k, v]) => [`Fn::ImportValue:${k}`, v])),
    });
    return { stack, resolve };
  }

  test('synthesize: the checks leave tokens to the boot checks', () => {
    expect(() => importedFromOutputs()).not.toThrow();
  });

  test('the mirror\'s export path is rendered whole, and the instance mounts it where a known one would be', () => {
    const { stack, resolve } = importedFromOutputs();
    // Whole: the token is one deploy-time value of the header, not a string sliced at synth.
    const placeholder = Object.values(launchTemplateUserData(stack, (k) => `<${k}>`))[0];
    expect(parameters(placeholder)).toMatchObject({ EFSC_MIRROR_MOUNTS: '<Fn::ImportValue:"MirrorExportPath">', EFSC_MIRROR_MOUNT_POINT: '/mnt/mirror' });
    const run = runScript(checksOnly(resolve({ MirrorExportPath: '/mirror/www/vendor' })));
    expect(run.stderr).toContain('mount point: /mnt/mirror/www/vendor\n');
    expect(run.stderr).toContain('checks passed');
    expect(run.status).toBe(0);
  });

  test('resolved to a valid value, the whole user data passes its checks and goes on to install packages', () => {
    const { resolve } = importedFromOutputs();
    const run = runScript(resolve({ MirrorExportPath: '/mirror/www/vendor' }));
    // The sandbox refuses the package manager: the one FATAL line is about that, none about a parameter.
    expect(run.stderr.match(/FATAL: .*/g)).toEqual([expect.stringMatching(/^FATAL: could not install /)]);
    expect(run.calls.some((c) => /^(dpkg-query|rpm|dnf|apt-get) /.test(c))).toBe(true);
  });

  test.each([
    ['a .. segment', '/mirror/app/../../../etc', /FATAL: the mount path '\/mnt\/mirror\/app\/\.\.\/\.\.\/\.\.\/etc' has a \. or \.\. segment/],
    ['a path outside /mirror', '/etc', /FATAL: EFSC_MIRROR_MOUNTS='\/etc' is invalid/],
    ['code', '/mirror/$(touch /tmp/efsc-pwned)', /FATAL: EFSC_MIRROR_MOUNTS='.*' is invalid/],
  ])('resolved to %s, the mirror is refused at boot before anything is mounted', (_name, value, fatal) => {
    const { resolve } = importedFromOutputs();
    const run = runScript(resolve({ MirrorExportPath: value }));
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(fatal);
    expect(run.calls.filter((c) => /^(mount|dnf|apt-get) /.test(c))).toEqual([]);
  });
});

describe('the client\'s boot check of its mount paths', () => {
  const { stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack as Stack)), capacity: Capacity.nodes(1), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www/vendor')],
  });
  const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app'] }) });
  const userData = launchTemplateUserData(stack)[stack.getLogicalId(clients.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate)];
  const check = (values: Record<string, string>) => {
    let ud = userData;
    for (const [k, v] of Object.entries(values)) ud = withParameter(ud, k, v);
    return runScript(checksOnly(ud));
  };

  test('the synthesized values pass', () => {
    const run = check({});
    expect(run.stderr).toContain('mount point: /mnt/mirror/app\n');
    expect(run.status).toBe(0);
  });

  test.each([
    ['mirror mount point /mnt/a/../etc', { EFSC_MIRROR_MOUNT_POINT: '/mnt/a/../etc' }, "'/mnt/a/../etc/app' has a . or .. segment"],
    ['mirror mount point /mnt/..', { EFSC_MIRROR_MOUNT_POINT: '/mnt/..' }, "'/mnt/../app' has a . or .. segment"],
    ['mirror mount point /mnt/a/..', { EFSC_MIRROR_MOUNT_POINT: '/mnt/a/..' }, "'/mnt/a/../app' has a . or .. segment"],
    ['mirror mount point /mnt/./mirror', { EFSC_MIRROR_MOUNT_POINT: '/mnt/./mirror' }, "'/mnt/./mirror/app' has a . or .. segment"],
    ['mirror a/../../b', { EFSC_MIRROR_MOUNTS: '/mirror/a/../../b' }, "'/mnt/mirror/a/../../b' has a . or .. segment"],
    ['mirror ending in ..', { EFSC_MIRROR_MOUNTS: '/mirror/app/..' }, "'/mnt/mirror/app/..' has a . or .. segment"],
    ['the second mirror with ..', { EFSC_MIRROR_MOUNTS: '/mirror/app /mirror/x/../../../etc' }, "'/mnt/mirror/x/../../../etc' has a . or .. segment"],
    ['mount point /mnt/a/../etc', { EFSC_MOUNT_POINT: '/mnt/a/../etc' }, "'/mnt/a/../etc' has a . or .. segment"],
    ['cache directory /var/cache/..', { EFSC_CACHE_DIR: '/var/cache/..' }, "'/var/cache/..' has a . or .. segment"],
    ['a mirror inside the fsc mount', { EFSC_MIRROR_MOUNT_POINT: '/mnt/efs' }, "'/mnt/efs' and '/mnt/efs/app' are the same or one is inside the other"],
    ['a mirror on the fsc mount', { EFSC_MIRROR_MOUNT_POINT: '/mnt', EFSC_MOUNT_POINT: '/mnt/app' }, "'/mnt/app' and '/mnt/app' are the same"],
    ['a mirror inside the cache directory', { EFSC_MIRROR_MOUNT_POINT: '/var/cache/fscache/m' }, "'/var/cache/fscache' and '/var/cache/fscache/m/app' are the same or one"],
    ['the fsc mount inside a mirror', { EFSC_MOUNT_POINT: '/mnt/mirror/app/efs' }, "'/mnt/mirror/app/efs' and '/mnt/mirror/app' are the same or one"],
    ['the fsc mount inside the cache directory', { EFSC_MOUNT_POINT: '/var/cache/fscache/efs' }, "'/var/cache/fscache' and '/var/cache/fscache/efs' are the same or one"],
    ['the cache directory inside the fsc mount', { EFSC_CACHE_DIR: '/mnt/efs/cache' }, "'/mnt/efs/cache' and '/mnt/efs' are the same or one"],
    ['the cache directory = the fsc mount', { EFSC_CACHE_DIR: '/mnt/efs' }, "'/mnt/efs' and '/mnt/efs' are the same"],
    ['two mirrors on one directory (// is /)', { EFSC_MIRROR_MOUNTS: '/mirror/app /mirror//app' }, "'/mnt/mirror/app' and '/mnt/mirror//app' are the same"],
    ['a mirror inside another', { EFSC_MIRROR_MOUNTS: '/mirror/app /mirror/app/lib' }, "'/mnt/mirror/app' and '/mnt/mirror/app/lib' are the same or one"],
  ])('refuses %s', (_name, values, message) => {
    const run = check(values);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`FATAL: the mount path${message.includes(' and ') ? 's' : ''} ${message}`);
    expect(run.stderr).not.toContain('checks passed');
  });

  test.each([
    ['names with dots', { EFSC_MIRROR_MOUNT_POINT: '/mnt/a..b/.m', EFSC_MIRROR_MOUNTS: '/mirror/.app /mirror/v..1' }, ['/mnt/a..b/.m/.app', '/mnt/a..b/.m/v..1']],
    ['mirrors side by side, under the mount point\'s parent', { EFSC_MIRROR_MOUNT_POINT: '/mnt', EFSC_MIRROR_MOUNTS: '/mirror/app /mirror/www/vendor' }, ['/mnt/app', '/mnt/www/vendor']],
    ['prefixes that are not parents', { EFSC_MIRROR_MOUNT_POINT: '/mnt/efs2', EFSC_CACHE_DIR: '/mnt/efs-cache' }, ['/mnt/efs2/app']],
  ])('accepts %s', (_name, values, mountPoints) => {
    const run = check(values);
    expect(run.stderr).toContain('checks passed');
    for (const mp of mountPoints) expect(run.stderr).toContain(`mount point: ${mp}\n`);
    expect(run.status).toBe(0);
  });
});
