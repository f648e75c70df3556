/**
 * The S3 mirrors' sync (assets/lib/mirror-s3.sh, `Mirror.s3`) against the emulator's S3 (see aws-boundary.emu.ts):
 * the cache node's rendered code, loaded by its own loader with the nodes' role, runs the mirrors' check and their
 * sync (mirror_check, mirror_sync) with the REAL aws CLI over TLS, every call authorized against the statements the
 * synthesized template grants the nodes' role. What needs a real kernel is left out: the copies live in a directory of
 * the test's disk (MIRROR_ROOT and MIRROR_STATE moved there, mirror_storage a mkdir) instead of a tmpfs, and nothing
 * is exported or served (the mirrors' nfsd, delegations and a client's view within the bound are the lab's to prove).
 * Every assertion is on what the emulator recorded and what the copy holds.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { CacheFleet, CacheOrigin, Capacity, Mirror } from '../../../lib';
import { importedFs, stackWithVpc } from '../../util';
import { expand } from '../../util/user-data';
import { CfnTemplate, PSEUDO_VALUES, resolveUserData } from '../lab/harness/user-data';
import { ApiCall, byCli, Emulator, EMULATOR_VALUES, RoleSession, rolePolicies, tearDown, withoutStatements } from './emulator';

const BUCKET = 'efsc-site-data';
const HOSTS = [`${BUCKET}.s3.amazonaws.com`, `${BUCKET}.s3.us-east-1.amazonaws.com`];
/** The mirror's objects at the start: the prefix site/ is the source; other/ is outside it. */
const FILES: Record<string, string> = {
  'site/index.html': '<h1>one</h1>\n',
  'site/css/a.css': 'body { color: red }\n',
  'site/img/deep/b.bin': 'x'.repeat(70_000),
  'site/gone.txt': 'removed at the second sync\n',
};

/** A fleet whose one mirror is the prefix site/ of BUCKET: its user data (deploy-time values as in us-east-1), template and role. */
function fleetUserData(): { userData: string; template: CfnTemplate; roleId: string } {
  const { stack, vpc } = stackWithVpc(undefined, 'MirrorS3');
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), clientCidrs: ['10.0.0.0/16'],
    mirrors: [Mirror.s3(s3.Bucket.fromBucketName(stack, 'Site', BUCKET), 'site/')],
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  const [logicalId] = Object.entries(template.Resources ?? {}).find(([, r]) => r.Type === 'AWS::EC2::LaunchTemplate')!;
  return {
    userData: resolveUserData(template, logicalId, PSEUDO_VALUES), template,
    roleId: stack.getLogicalId(fleet.role.node.defaultChild as CfnResource),
  };
}

/** The node's code with the mirrors' check and sync in place of main, their storage a directory of the test's disk. */
function syncOnly(userData: string): string {
  const code = expand(userData);
  const call = '\nmain "$@"\n';
  const at = code.lastIndexOf(call);
  if (at < 0 || code.indexOf(call) !== at) throw new Error('expected exactly one main "$@" line');
  const driver = [
    'MIRROR_ROOT=/var/lib/mirror MIRROR_STATE=/var/lib/mirror-state',
    'flock() { :; }', // one run at a time here
    'mirror_storage() { while read -r r _; do mkdir -p "$MIRROR_ROOT$r"; done < <(mirror_each); }',
    'mirror_check',
    'mirror_sync "$@"',
  ];
  return `${code.slice(0, at)}\n${driver.join('\n')}\n`;
}

/** Every file under `dir`, relative path -> content. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out;
}

/** The files of the prefix site/ as the copy should hold them. */
const expected = (files: Record<string, string>) => Object.fromEntries(Object.entries(files)
  .filter(([k]) => k.startsWith('site/')).map(([k, v]) => [k.slice('site/'.length), v]));

describe('S3 mirrors against the emulator', () => {
  const { userData, template, roleId } = fleetUserData();
  const node = syncOnly(userData);
  let emu: Emulator;
  /** A session of the nodes' role with exactly the policies the template grants it. */
  let role: RoleSession;
  /** The same without the statement that lets the nodes list the bucket (the listing refused). */
  let noList: RoleSession;
  const disk = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-mirror-s3-'));
  const copy = path.join(disk, 'mirror', 'site');
  let objects: Record<string, string> = { ...FILES };
  let documents: any[];

  beforeAll(async () => {
    emu = await Emulator.start();
    await emu.api('s3', 'create_bucket', { Bucket: BUCKET });
    for (const [Key, Body] of Object.entries(objects)) await emu.api('s3', 'put_object', { Bucket: BUCKET, Key, Body });
    await emu.api('s3', 'put_object', { Bucket: BUCKET, Key: 'other/secret.txt', Body: 'outside the prefix\n' });
    const stackId = await emu.registerStack('MirrorS3', []);
    // The node's own interface and stack (its attach and signal statements): values of any form will do here.
    const enis = Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === 'AWS::EC2::NetworkInterface')
      .map(([id]) => [`Ref:${id}`, 'eni-0123456789abcdef0']);
    ({ documents } = rolePolicies(template, roleId, { ...EMULATOR_VALUES, 'AWS::StackId': stackId, ...Object.fromEntries(enis) }));
    role = await emu.instanceRole('NodeRole', documents);
    noList = await emu.instanceRole('NodeRoleNoList', withoutStatements(documents, (s) => s.Action === 's3:ListBucket'));
  });
  afterAll(() => tearDown(emu, 'mirror-s3-calls.json', [disk]));

  const put = async (key: string, body: string) => {
    await emu.api('s3', 'put_object', { Bucket: BUCKET, Key: key, Body: body });
    objects[key] = body;
  };
  const del = async (key: string) => {
    await emu.api('s3', 'delete_object', { Bucket: BUCKET, Key: key });
    objects = Object.fromEntries(Object.entries(objects).filter(([k]) => k !== key));
  };

  /** One run of the sync on the node's disk; the S3 calls it made (the loader's code fetch left out). */
  const sync = async (args: string[] = [], session = role, script = node, whileRunning?: () => Promise<void>) => {
    const iid = (await emu.api('ec2', 'run_instances', { ImageId: 'ami-12c6146b', MinCount: 1, MaxCount: 1 })).Instances[0].InstanceId;
    await emu.boot(iid, {}, session);
    const before = (await emu.calls()).length;
    const run = await emu.run(script, args, { varLib: disk, extraHosts: HOSTS, whileRunning });
    const calls = byCli((await emu.calls()).slice(before)).filter((c) => c.service === 's3' && c.host.startsWith(`${BUCKET}.`));
    return { run, calls };
  };
  const listings = (calls: ApiCall[]) => calls.filter((c) => c.params['list-type'] === '2');
  const fetches = (calls: ApiCall[]) => calls.filter((c) => c.action.startsWith('GET /') && c.params['list-type'] === undefined);

  test('the first sync lists the prefix and fetches every object under it, byte for byte, with the role\'s statements', async () => {
    const { run, calls } = await sync(['--first']);
    expect(run.stderr).toMatch(/synced 4 objects/);
    expect(run.status).toBe(0);
    expect(tree(copy)).toEqual(expected(objects));
    expect(listings(calls).map((c) => `${c.params.prefix} ${c.status}`)).toEqual(['site/ 200']);
    expect(fetches(calls).map((c) => `${c.action} ${c.status}`).sort()).toEqual(
      Object.keys(FILES).map((k) => `GET /${k} 200`).sort());
    // Nothing outside the prefix was asked for, and nothing is left of the fetches' temporary names.
    expect(calls.some((c) => c.action.includes('other/'))).toBe(false);
    expect(Object.keys(tree(path.join(disk, 'mirror'))).filter((f) => f.includes('.efsc-s3.'))).toEqual([]);
  });

  test('an unchanged prefix costs one listing and no fetch', async () => {
    const { run, calls } = await sync();
    expect(run.status).toBe(0);
    expect(listings(calls)).toHaveLength(1);
    expect(fetches(calls)).toEqual([]);
    expect(tree(copy)).toEqual(expected(objects));
  });

  test('changed, added and removed objects reach the copy at the next sync; only those are fetched', async () => {
    await put('site/index.html', '<h1>two</h1>\n');
    await put('site/css/a.css', 'body { color: blue }\n'); // the same size: the ETag tells
    await put('site/new/c.txt', 'added\n');
    await del('site/gone.txt');
    const { run, calls } = await sync();
    expect(run.stderr).toMatch(/3 fetched, 1 removed/);
    expect(run.status).toBe(0);
    expect(tree(copy)).toEqual(expected(objects));
    expect(fetches(calls).map((c) => c.action).sort()).toEqual(['GET /site/css/a.css', 'GET /site/index.html', 'GET /site/new/c.txt']);
  });

  test('a key with a .. component, a leading / or an empty component is skipped with a WARN line and never written', async () => {
    await put('site/../escape.txt', 'must not leave the mirror\n');
    await put('site/sub/../../up.txt', 'must not leave the mirror\n');
    await put('site//rooted.txt', 'empty component\n');
    await put('site/ok.txt', 'kept\n');
    const { run } = await sync();
    expect(run.stderr).toMatch(/WARN: mirror s3:\/\/efsc-site-data\/site\/: 3 keys skipped/);
    expect(run.status).toBe(0);
    const held = tree(path.join(disk, 'mirror'));
    expect(held['site/ok.txt']).toBe('kept\n');
    expect(Object.keys(held).filter((f) => !f.startsWith('site/'))).toEqual([]);
    expect(fs.existsSync(path.join(disk, 'escape.txt')) || fs.existsSync(path.join(disk, 'up.txt'))).toBe(false);
    expect(Object.keys(held).some((f) => f.includes('rooted') || f.includes('..'))).toBe(false);
    for (const k of ['site/../escape.txt', 'site/sub/../../up.txt', 'site//rooted.txt']) await del(k);
  });

  test('a refused listing (no ListBucket statement: 403) fails the sync, keeps the last copy and removes nothing', async () => {
    const before = tree(copy);
    await del('site/ok.txt');
    await put('site/index.html', '<h1>three</h1>\n');
    const { run, calls } = await sync([], noList);
    expect(run.stderr).toMatch(/WARN: mirror s3:\/\/efsc-site-data\/site\/: listing failed/);
    expect(run.status).not.toBe(0);
    expect(listings(calls).map((c) => c.status)).toEqual([403]);
    expect(fetches(calls)).toEqual([]);
    expect(tree(copy)).toEqual(before);
    expect(fs.readFileSync(path.join(disk, 'mirror-state', 'failures'), 'utf8').trim()).toBe('1');
    // The next sync with the role's own statements catches up.
    const next = await sync();
    expect(next.run.status).toBe(0);
    expect(tree(copy)).toEqual(expected(objects));
  });

  test('IAM enforced: the role may not list another prefix of the bucket (403); the copy is untouched', async () => {
    const other = node.replace(`EFSC_MIRROR_S3_URIS='s3://${BUCKET}/site/'`, `EFSC_MIRROR_S3_URIS='s3://${BUCKET}/other/'`);
    expect(other).not.toBe(node);
    const before = tree(copy);
    const { run, calls } = await sync([], role, other);
    expect(run.status).not.toBe(0);
    expect(listings(calls).map((c) => `${c.params.prefix} ${c.status}`)).toEqual(['other/ 403']);
    expect(fetches(calls)).toEqual([]);
    expect(tree(copy)).toEqual(before);
    expect(fs.existsSync(path.join(disk, 'mirror', 'site', 'secret.txt'))).toBe(false);
  });

  test('a listing the emulator keeps failing (500 on every try) fails the sync and removes nothing', async () => {
    const before = tree(copy);
    await del('site/new/c.txt');
    // Set once the run has started (the test's own set-up lists buckets with GET / too); the listing is S3's
    // GET / of the bucket's host, the code fetch GET /<sha256>.sh, which the fault leaves alone.
    let set = false;
    const failListing = async () => {
      if (set) return;
      set = true;
      await emu.fail('GET /', Array.from({ length: 10 }, () => [500, 'InternalError', 'We encountered an internal error.'] as [number, string, string]));
    };
    const { run, calls } = await sync([], role, node, failListing);
    expect(run.stderr).toMatch(/listing failed/);
    expect(run.status).not.toBe(0);
    expect(listings(calls).every((c) => c.status === 500)).toBe(true);
    expect(tree(copy)).toEqual(before);
  });
});
