/**
 * A client's warming (`FsCacheClientOptions.warming`): the parameters it renders, and the script's warming run on
 * this host (test/util/run-script.ts) over a tree of its own, with `mountpoint` answered by a stub: what it reads and
 * logs, its size bound, its time bound, and the paths or mounts it refuses.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Duration, Size } from 'aws-cdk-lib';
import { CacheFleet, CacheOrigin, FsCacheClientLaunchTemplate, Mirror, MountSource } from '../../lib';
import { importedFs, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { expand, launchTemplateUserData, parameters } from '../util/user-data';

/** A client of a fleet that mounts the mirror of /efs/www at /mnt/mirror/www, warming `warming`. */
function mirrorClientUserData(warming?: ConstructorParameters<typeof FsCacheClientLaunchTemplate>[2]['warming']): string {
  const { stack, vpc } = stackWithVpc();
  const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/www')] });
  new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/www'] }), warming });
  const [ud] = Object.entries(launchTemplateUserData(stack)).filter(([id]) => id.startsWith('Clients')).map(([, v]) => v);
  return ud;
}

describe('the rendered parameters', () => {
  test('without warming: no paths, the defaults of the bounds', () => {
    expect(parameters(mirrorClientUserData())).toMatchObject({
      EFSC_WARM_PATHS: '', EFSC_WARM_WORKERS: '16', EFSC_WARM_TIMEOUT_SEC: '300', EFSC_WARM_MAX_MIB: '2048',
    });
  });

  test('with warming: the paths (a mirror\'s and the fsc mount\'s) and the bounds given', () => {
    const ud = mirrorClientUserData({ paths: ['/mnt/mirror/www', '/mnt/efs//uploads'], workers: 4, timeout: Duration.minutes(2), maxSize: Size.mebibytes(512) });
    expect(parameters(ud)).toMatchObject({
      EFSC_WARM_PATHS: '/mnt/mirror/www /mnt/efs/uploads', EFSC_WARM_WORKERS: '4', EFSC_WARM_TIMEOUT_SEC: '120', EFSC_WARM_MAX_MIB: '512',
    });
  });
});

/**
 * The client's user data with its warming pointed at a tree made here: the mount point and the mirrors' mount points
 * moved under `dir`, the last line replaced by the parameter checks and `warm`.
 */
function warmRun(dir: string, warmPaths: string, opts: { maxMib?: number; timeout?: number; stubs?: Record<string, string> } = {}) {
  let code = expand(mirrorClientUserData({ paths: ['/mnt/mirror/www'] }));
  const set = (name: string, value: string) => {
    const re = new RegExp(`^${name}='[^']*'$`, 'm');
    if (!re.test(code)) throw new Error(`no ${name} line`);
    code = code.replace(re, `${name}='${value}'`);
  };
  set('EFSC_MOUNT_POINT', `${dir}/efs`);
  set('EFSC_MIRROR_MOUNT_POINT', `${dir}/mirror`);
  set('EFSC_WARM_PATHS', warmPaths);
  set('EFSC_WARM_MAX_MIB', String(opts.maxMib ?? 2048));
  set('EFSC_WARM_TIMEOUT_SEC', String(opts.timeout ?? 300));
  if (!/^main "\$@"$/m.test(code)) throw new Error('no main "$@" line to replace');
  code = code.replace(/^main "\$@"$/m, 'check_parameters\nwarm\necho "warm returned" >&2');
  // `mountpoint` says yes for the two mount points made here, no for anything else.
  const mountpoint = `for a; do case "$a" in ${dir}/efs|${dir}/mirror/www) exit 0 ;; esac; done; exit 1`;
  return runScript(code, [], { stubs: { mountpoint, ...opts.stubs } });
}

describe('the script\'s warming, run on this host', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'efsc-warm-'));
    fs.mkdirSync(path.join(dir, 'efs'), { recursive: true });
    const www = path.join(dir, 'mirror', 'www');
    for (let i = 0; i < 5; i++) {
      fs.mkdirSync(path.join(www, `d${i}`), { recursive: true });
      // 5 files of 1 MiB, one with a space and one with a newline in its name.
      fs.writeFileSync(path.join(www, `d${i}`, i === 3 ? 'a file' : i === 4 ? 'odd\nname' : `f${i}.php`), Buffer.alloc(1048576, i));
    }
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('reads every file under the path and logs how many, how much and how long', () => {
    const run = warmRun(dir, `${dir}/mirror/www`);
    expect(run.stderr).toMatch(new RegExp(`efs-cache: warmed ${dir}/mirror/www: 5 files, 5 MiB in \\d+s\\n`));
    expect(run.stderr).not.toMatch(/WARN/);
    expect(run.stderr).toContain('warm returned');
    expect(run.status).toBe(0);
  });

  test('stops at the size bound, says how many files it left, and goes on', () => {
    const run = warmRun(dir, `${dir}/mirror/www`, { maxMib: 3 });
    expect(run.stderr).toContain('WARN: warming: 2 files past the bound of 3 MiB left unread');
    expect(run.stderr).toMatch(/warmed .*: 3 files, 3 MiB in/);
    expect(run.status).toBe(0);
  });

  test('at the time bound, warns and goes on: the boot does not fail', () => {
    // The readers outlast the bound (timeout's own exit status when it stops them).
    const run = warmRun(dir, `${dir}/mirror/www`, { stubs: { xargs: 'exit 124' } });
    expect(run.stderr).toContain('WARN: warming stopped at its bound of 300s: 5 files (5 MiB) were to be read, not all were');
    expect(run.stderr).toContain('warm returned');
    expect(run.status).toBe(0);
  });

  test('a path whose mount is not there fails: the empty directory under a failed mount is no warm', () => {
    // The directory is there (the files of the tree), the mount is not.
    const run = warmRun(dir, `${dir}/mirror/www/d1`, { stubs: { mountpoint: 'exit 1' } });
    expect(run.stderr).toContain(`FATAL: cannot warm ${dir}/mirror/www/d1: ${dir}/mirror/www is not mounted`);
    expect(run.stderr).not.toContain('warming ');
    expect(run.status).toBe(1);
  });

  test('a path that does not exist fails', () => {
    const run = warmRun(dir, `${dir}/mirror/www/nothing`);
    expect(run.stderr).toContain(`FATAL: cannot warm ${dir}/mirror/www/nothing: it does not exist`);
    expect(run.status).toBe(1);
  });

  test.each([
    ['outside every mount', '/etc', /FATAL: EFSC_WARM_PATHS: '\/etc' is under neither/],
    ['with a .. segment', 'MIRROR/../../../etc', /FATAL: EFSC_WARM_PATHS: '.*' has a \. or \.\. segment/],
    ['code', '/mnt/efs/$(touch /tmp/efsc-pwned)', /FATAL: EFSC_WARM_PATHS='.*' is invalid/],
  ])('a path %s is refused by the boot check before anything is read', (_name, value, fatal) => {
    const run = warmRun(dir, value.replace('MIRROR', `${dir}/mirror/www`));
    expect(run.stderr).toMatch(fatal);
    expect(run.stderr).not.toContain('warming ');
    expect(run.status).toBe(1);
  });
});
