/**
 * The data seeder's AWS side against the emulator (see aws-boundary.emu.ts): its S3 download with the real aws CLI
 * (`aws s3 sync` of a prefix, over TLS, the bucket's virtual host resolving to the emulator) and its one
 * CloudFormation signal. The steps that need a real kernel or tools the host lacks (packages, the lock, the EFS mount,
 * fpsync's copy and its verification, the power-off: the lab's seeding.lab.ts) are defined as no-ops; main runs as
 * rendered otherwise, so the download and the signal happen in its own order.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { renderedCode } from '../../../lib/instance/user-data';
import { expand } from '../../util/user-data';
import { byCli, Emulator, EMULATOR_VALUES, LOADER_CLIENT, RoleSession, rolePolicies, RunOptions, tearDown } from './emulator';
import { SEED_BUCKET as BUCKET, SEED_FILES as FILES, seederUserData } from './seeder-stack';

const MISSING = 'efsc-no-such-bucket';
/** The buckets' virtual hosts, resolved to the emulator (the missing one too: S3 answers it NoSuchBucket). */
const HOSTS = [BUCKET, MISSING].flatMap((b) => [`${b}.s3.amazonaws.com`, `${b}.s3.us-east-1.amazonaws.com`]);

/** The seeder's code with the steps it cannot run on the test host as no-ops (copy sets what the summary reads). */
function withoutKernelSteps(userData: string): string {
  const code = expand(userData);
  const call = '\nmain "$@"\n';
  const at = code.lastIndexOf(call);
  if (at < 0 || code.indexOf(call) !== at) throw new Error('expected exactly one main "$@" line');
  const stubs = ['flock() { :; }', 'install_packages() { :; }', 'mount_efs() { :; }', 'rsync_check_opts() { :; }',
    'copy() { SOURCE_FILES=0 COPIED_FILES=0; }', 'verify() { :; }', 'umount() { :; }', 'shutdown() { :; }'];
  return `${code.slice(0, at)}\n${stubs.join('\n')}${code.slice(at)}`;
}

describe('the data seeder against the emulator', () => {
  const { userData, logicalId, template, roleId } = seederUserData();
  const seeder = withoutKernelSteps(userData);
  let emu: Emulator;
  /** A session of the seeder's role with exactly the policies the template grants it. */
  let role: RoleSession;
  /** The same policies with the missing bucket's name in place of the source bucket's (as its user data is made). */
  let missingRole: RoleSession;
  const disks: string[] = [];

  beforeAll(async () => {
    emu = await Emulator.start();
    const stackId = await emu.registerStack('Seed', [logicalId]);
    await emu.api('s3', 'create_bucket', { Bucket: BUCKET });
    for (const [Key, Body] of Object.entries(FILES)) await emu.api('s3', 'put_object', { Bucket: BUCKET, Key, Body });
    await emu.api('s3', 'put_object', { Bucket: BUCKET, Key: 'other/d.txt', Body: 'outside the source prefix\n' });
    const { documents, awsManaged } = rolePolicies(template, roleId, { ...EMULATOR_VALUES, 'AWS::StackId': stackId });
    expect(awsManaged).toEqual([]); // the seeder has no Session Manager
    role = await emu.instanceRole('SeederRole', documents);
    missingRole = await emu.instanceRole('SeederRoleMissing', JSON.parse(JSON.stringify(documents).split(BUCKET).join(MISSING)));
  });
  afterAll(() => tearDown(emu, 'seeder-calls.json', disks));

  const boot = async (script: string, session = role, options: Pick<RunOptions, 'missingCode' | 'noRouteToS3' | 'noCli' | 'codeObject'> = {}) => {
    const iid = (await emu.api('ec2', 'run_instances', { ImageId: 'ami-12c6146b', MinCount: 1, MaxCount: 1 })).Instances[0].InstanceId;
    await emu.boot(iid, {}, session);
    const vm = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-disk-'));
    disks.push(vm);
    const before = (await emu.calls()).length;
    const run = await emu.run(script, [], { varLib: vm, extraHosts: HOSTS, ...options });
    return { iid, vm, run, calls: byCli((await emu.calls()).slice(before)) };
  };

  test('the source prefix is downloaded with aws s3 sync, byte for byte, before one SUCCESS signal', async () => {
    const { iid, vm, run, calls } = await boot(seeder);
    expect(run.stderr).toMatch(/seeding done/);
    expect(run.status).toBe(0);
    const staged = path.join(vm, 'efs-cache', 'seed', 'source');
    for (const [key, body] of Object.entries(FILES)) {
      expect(fs.readFileSync(path.join(staged, key.slice('raw/'.length)), 'utf8')).toBe(body);
    }
    const reads = calls.filter((c) => c.service === 's3');
    expect(reads.length).toBeGreaterThanOrEqual(1 + Object.keys(FILES).length); // a listing, then each object
    expect(reads.every((c) => c.status === 200)).toBe(true);
    const signals = calls.filter((c) => c.action === 'SignalResource');
    expect(signals.map((c) => c.params)).toEqual([{ StackName: 'Seed', LogicalResourceId: logicalId, UniqueId: iid, Status: 'SUCCESS' }]);
    expect(calls[calls.length - 1]).toBe(signals[0]);
  });

  // The user data as rendered, loader included, each way its code cannot run.
  test.each([
    ['its object is missing (NoSuchKey at each try)', { missingCode: true }, /^efs-cache: FATAL: cannot fetch the bootstrap code .*NoSuchKey/],
    ['there is no route to S3 (the bucket does not resolve)', { noRouteToS3: true }, /FATAL: cannot fetch the bootstrap code .*the subnet a route to S3\): /],
    ['there is no aws CLI and no package repository', { noCli: true }, /FATAL: cannot install awscli(-2)? to fetch the bootstrap code/],
    ['its object is another body under the same key', { codeObject: `${renderedCode(userData)}\n# another body\n` }, /FATAL: .* is not the code this user data was rendered with/],
  ] as const)('the code cannot run because %s: the loader signals FAILURE for the seeder\'s instance, before any of the code runs', async (_why, options, fatal) => {
    const { iid, run, calls } = await boot(userData, role, options);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(fatal);
    expect(run.stderr).not.toMatch(/seeding/);
    const signals = calls.filter((c) => c.action === 'SignalResource');
    expect(signals.map((c) => [c.client, c.status, c.params])).toEqual([
      [LOADER_CLIENT, 200, { StackName: 'Seed', LogicalResourceId: logicalId, UniqueId: iid, Status: 'FAILURE' }],
    ]);
    expect(run.stderr).toMatch(new RegExp(`\nefs-cache: signalled FAILURE to Seed/${logicalId}\n$`));
  });

  test('a source S3 does not have (no such bucket: 404) ends in one FAILURE signal', async () => {
    const missing = seeder.replace(`s3://${BUCKET}/raw/`, `s3://${MISSING}/raw/`);
    expect(missing).not.toBe(seeder);
    // Its role may read that bucket, so the 404 is the answer to a caller allowed to list it: moto authorizes before
    // it looks the bucket up, and would answer the seeder's own role 403 AccessDenied here.
    const { iid, run, calls } = await boot(missing, missingRole);
    expect(run.stderr).toMatch(/FATAL: could not download s3:\/\/efsc-no-such-bucket\/raw\//);
    expect(run.status).toBe(1);
    expect(calls.filter((c) => c.service === 's3').map((c) => `${c.host} ${c.status}`)).toEqual([`${MISSING}.s3.amazonaws.com 404`]);
    const signals = calls.filter((c) => c.action === 'SignalResource');
    expect(signals.map((c) => c.params)).toEqual([{ StackName: 'Seed', LogicalResourceId: logicalId, UniqueId: iid, Status: 'FAILURE' }]);
  });

  test('IAM enforced: a prefix of the bucket outside the one its role may list is refused (403) and ends in one FAILURE signal', async () => {
    // other/ holds an object: the refusal is the s3:prefix condition of the role's ListBucket statement (raw/*).
    const outside = seeder.replace(`s3://${BUCKET}/raw/`, `s3://${BUCKET}/other/`);
    expect(outside).not.toBe(seeder);
    const { iid, run, calls } = await boot(outside);
    expect(run.stderr).toMatch(/FATAL: could not download s3:\/\/efsc-seed-data\/other\//);
    expect(run.status).toBe(1);
    expect(calls.filter((c) => c.service === 's3').map((c) => `${c.params.prefix} ${c.status}`)).toEqual(['other/ 403']);
    const signals = calls.filter((c) => c.action === 'SignalResource');
    expect(signals.map((c) => c.params)).toEqual([{ StackName: 'Seed', LogicalResourceId: logicalId, UniqueId: iid, Status: 'FAILURE' }]);
  });
});
