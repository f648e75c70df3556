/**
 * The AWS side of the rendered user data, against an AWS API emulator (test/heavy/emulator/server.py: moto behind real TLS,
 * CloudFormation signals recorded, the lab's metadata service), with the REAL aws CLI and curl of the instance and
 * the scripts unchanged. Every assertion is on what the emulator recorded or holds (calls, their order and
 * parameters, where the interface is attached), never on log lines.
 *
 * What runs on the test host: a full first-boot run up to its first step that needs a real kernel (packages), and,
 * for the path to SUCCESS, the node's real main with only the steps that need a real kernel (packages, tuning, nfsd,
 * units, mounts, serving, metrics set-up: proved in the lab) replaced by no-ops, so the interface attach and the
 * signal run in main's own order.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { renderedCode } from '../../../lib/instance/user-data';
import { expand, parameters } from '../../util/user-data';
import { labUserData } from '../lab/scenarios/stacks';
import { ApiCall, byCli, Emulator, isCodeFetch, EMULATOR_VALUES, LOADER_CLIENT, RoleSession, rolePolicies, tearDown, withoutStatements } from './emulator';

const SIGNAL_TAG = 'cdk-efs-cache:signal-resource';
const ENI_TAG = 'cdk-efs-cache:stable-eni';

/** The steps of the node's main that need a real kernel, replaced by no-ops; the rest of main runs as rendered. */
export const KERNEL_STEPS = ['install_packages', 'tune', 'configure_nfsd', 'install_units', 'mirror_setup', 'serve', 'metrics_setup'];

/** The cache node's user data, unpacked, with KERNEL_STEPS (and systemctl, put_unit) defined as no-ops before main runs. */
function withoutKernelSteps(userData: string): string {
  const code = expand(userData);
  const call = '\nmain "$@"\n';
  const at = code.lastIndexOf(call);
  if (at < 0 || code.indexOf(call) !== at) throw new Error('expected exactly one main "$@" line');
  const stubs = [...KERNEL_STEPS.map((f) => `${f}() { :; }`), 'put_unit() { cat >/dev/null; }', 'systemctl() { :; }'];
  return `${code.slice(0, at)}\n${stubs.join('\n')}${code.slice(at)}`;
}

/** The calls of the scripts since `from`, as `Action status` strings. */
const actions = (calls: ApiCall[]) => calls.map((c) => `${c.action} ${c.status}`);

describe('the AWS boundary of the rendered user data, against an emulator', () => {
  const ud = labUserData();
  const tags = ud.nodeTags[0];
  const badParameters = ud.cacheNode.replace(/^EFSC_NFSD_THREADS='16'$/m, "EFSC_NFSD_THREADS='many'");
  const node = withoutKernelSteps(ud.cacheNode);
  let emu: Emulator;
  let subnet: string;
  let eni: string;
  /** The other node's stable interface, which no test above attaches (the ENA Express test's). */
  let otherEni: string;
  /** A session of the nodes' role with exactly the policies the template grants it: every boot runs with it. */
  let role: RoleSession;
  /** The same without the statement that lets the nodes attach their interfaces (the negative control). */
  let noAttach: RoleSession;
  /** The same without the statement that lets the nodes read their code's object (the loader's negative control). */
  let noCode: RoleSession;
  /** A session of the elastic fleet's nodes' role, with exactly the policies the template grants it. */
  let elasticRole: RoleSession;
  const code = parameters(ud.cacheNode);

  /** Launches an instance in moto with the node's tags (what its Auto Scaling group propagates). */
  const launch = async (extra: Record<string, string> = {}): Promise<string> => {
    const r = await emu.api('ec2', 'run_instances', {
      ImageId: 'ami-12c6146b', MinCount: 1, MaxCount: 1, InstanceType: 'r6i.large', SubnetId: subnet,
      TagSpecifications: [{ ResourceType: 'instance', Tags: Object.entries({ ...tags, ...extra }).map(([Key, Value]) => ({ Key, Value })) }],
    });
    return r.Instances[0].InstanceId;
  };
  /** Where the stable interface is attached now, as EC2 describes it. */
  const attachment = async () => (await emu.api('ec2', 'describe_network_interfaces', { NetworkInterfaceIds: [eni] }))
    .NetworkInterfaces[0].Attachment as { InstanceId: string; DeviceIndex: number } | undefined;
  /** Runs a user data as instance `iid` (its metadata and role) and returns the aws CLI's calls of that run. */
  const boot = async (iid: string, script: string, options: Parameters<Emulator['run']>[2] = {}, instanceTags = tags, session = role) => {
    await emu.boot(iid, instanceTags, session);
    const before = (await emu.calls()).length;
    const run = await emu.run(script, [], options);
    const all = byCli((await emu.calls()).slice(before));
    return { run, calls: all.filter((c) => !isCodeFetch(c)), fetches: all.filter(isCodeFetch) };
  };
  const disks: string[] = [];
  /** A host folder that stands for an instance's disk (/var/lib): kept across that instance's runs. */
  const disk = () => {
    disks.push(fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-disk-')));
    return disks[disks.length - 1];
  };

  beforeAll(async () => {
    emu = await Emulator.start();
    const stackId = await emu.registerStack('Lab', [...ud.nodeTags.map((t) => t[SIGNAL_TAG]), ud.elasticNodeTags[SIGNAL_TAG]]);
    subnet = (await emu.api('ec2', 'describe_subnets')).Subnets[0].SubnetId;
    const [first, second] = await Promise.all(['stable address of node 1', 'stable address of node 2'].map(async (Description) =>
      (await emu.api('ec2', 'create_network_interface', { SubnetId: subnet, Description })).NetworkInterface.NetworkInterfaceId as string));
    eni = first;
    otherEni = second;
    // The role's policies as synthesized, their ARNs resolved to this emulator's account, stack and interfaces.
    const { documents, awsManaged } = rolePolicies(ud.template, ud.nodeRoleId, {
      ...EMULATOR_VALUES, 'AWS::StackId': stackId, [`Ref:${ud.nodeInterfaceIds[0]}`]: first, [`Ref:${ud.nodeInterfaceIds[1]}`]: second,
    });
    expect(awsManaged).toEqual(['arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore']); // Session Manager's, left out
    role = await emu.instanceRole('NodeRole', documents);
    noAttach = await emu.instanceRole('NodeRoleNoAttach', withoutStatements(documents, (s) =>
      [s.Action].flat().includes('ec2:AttachNetworkInterface') && [s.Resource].flat().some((r) => String(r).includes(':network-interface/'))));
    // The elastic fleet's group in the emulator's Auto Scaling, with its tags and hooks as synthesized, and a group of
    // another fleet; its nodes' role with exactly the statements the template grants it.
    for (const [name, tagsOfGroup] of [['lab-elastic', ud.elasticGroupTags], ['other-fleet', { 'cdk-efs-cache:fleet': 'c8another0fleet' }]] as const) {
      await emu.elasticGroup(name, tagsOfGroup, subnet);
    }
    elasticRole = await emu.instanceRole('ElasticRole', rolePolicies(ud.template, ud.elasticRoleId, { ...EMULATOR_VALUES, 'AWS::StackId': stackId }).documents);
    noCode = await emu.instanceRole('NodeRoleNoCode', withoutStatements(documents, (s) =>
      [s.Resource].flat().some((r) => String(r) === `arn:aws:s3:::${code.EFSC_CODE_BUCKET}/${code.EFSC_CODE_KEY}`)));
  });

  test('the code: fetched once with the role\'s session (GetObject of its one object, as synthesized), kept, and not fetched again', async () => {
    expect(code.EFSC_CODE_BUCKET).toBe('cdk-hnb659fds-assets-123456789012-us-east-1');
    const iid = await launch();
    const vm = disk();
    const first = await boot(iid, badParameters, { varLib: vm });
    expect(first.fetches.map((c) => `${c.action} ${c.status}`)).toEqual([`GET /${code.EFSC_CODE_KEY} 200`]);
    expect(first.run.stderr).toMatch(/FATAL: EFSC_NFSD_THREADS='many' is invalid/); // the code ran
    expect(fs.readFileSync(path.join(vm, 'efs-cache', 'code', `${code.EFSC_CODE_SHA256}.sh`), 'utf8')).toBe(renderedCode(ud.cacheNode));
    const again = await boot(iid, badParameters, { varLib: vm });
    expect(again.fetches).toEqual([]);
    expect(again.run.stderr).toMatch(/FATAL: EFSC_NFSD_THREADS='many' is invalid/);
  });

  /**
   * The loader's own FAILURE signal when the code cannot run: one SignalResource, signed by the loader (Python's
   * standard library) with the role's session and checked by the emulator (signature and IAM), for the stack, the resource the
   * tags name and the instance; the signal marker written, so the code of a later run would not signal again.
   */
  const expectLoaderFailure = (iid: string, calls: ApiCall[], stderr: string, vm?: string) => {
    expect(`${actions(calls).join(', ')} | ${stderr}`).toMatch(/^SignalResource 200 \| /); // the run's log, should it fail
    expect(calls[0].client).toBe(LOADER_CLIENT);
    expect(calls[0].params).toEqual({ StackName: 'Lab', LogicalResourceId: tags[SIGNAL_TAG], UniqueId: iid, Status: 'FAILURE' });
    expect(stderr).toMatch(new RegExp(`\nefs-cache: signalled FAILURE to Lab/${tags[SIGNAL_TAG]}\n$`));
    if (vm) expect(fs.existsSync(path.join(vm, 'efs-cache', 'signalled'))).toBe(true);
  };

  test('IAM enforced: without the statement on its code object every fetch is refused (403); the code never runs; the loader signals FAILURE', async () => {
    const iid = await launch();
    const vm = disk();
    const { run, calls, fetches } = await boot(iid, badParameters, { varLib: vm }, tags, noCode);
    expect(run.status).toBe(1);
    expect(fetches.map((c) => c.status)).toEqual(Array(12).fill(403)); // the loader's 12 tries
    expect(run.stderr).toMatch(new RegExp(`^efs-cache: FATAL: cannot fetch the bootstrap code s3://${code.EFSC_CODE_BUCKET}/${code.EFSC_CODE_KEY} .*AccessDenied`));
    expect(run.stderr).not.toMatch(/EFSC_NFSD_THREADS/);
    expectLoaderFailure(iid, calls, run.stderr, vm);
    // A re-run of the same instance (its disk kept) fails again, and signals nothing more.
    const again = await boot(iid, badParameters, { varLib: vm }, tags, noCode);
    expect(again.run.status).toBe(1);
    expect(again.calls).toEqual([]);
  });

  test('a tampered object (another body under the same key) is refused: nothing of it runs, nothing is kept; the loader signals FAILURE', async () => {
    const iid = await launch();
    const vm = disk();
    // The rendered code with its parameter check removed: it would signal SUCCESS... if it ran.
    const tampered = renderedCode(ud.cacheNode).replace(/^check_parameters\b.*$/m, 'check_parameters() { return 0; }');
    const { run, calls, fetches } = await boot(iid, badParameters, { varLib: vm, codeObject: tampered });
    expect(fetches.map((c) => c.status)).toEqual([200]);
    expect(run.status).toBe(1);
    expect(run.stderr.split('\n')[0]).toBe(`efs-cache: FATAL: s3://${code.EFSC_CODE_BUCKET}/${code.EFSC_CODE_KEY} is not the code this user data was rendered ` +
      `with (its sha256 is not ${code.EFSC_CODE_SHA256}): refusing to run it`);
    expectLoaderFailure(iid, calls, run.stderr, vm);
    expect(fs.readdirSync(path.join(vm, 'efs-cache', 'code'))).toEqual([]);
  });

  test('a missing object (NoSuchKey at each of the 12 tries): the loader signals FAILURE with the reason in its log', async () => {
    const iid = await launch();
    const { run, calls, fetches } = await boot(iid, badParameters, { missingCode: true });
    expect(run.status).toBe(1);
    expect(fetches.map((c) => c.status)).toEqual(Array(12).fill(404));
    expect(run.stderr).toMatch(/^efs-cache: FATAL: cannot fetch the bootstrap code .*NoSuchKey/);
    expectLoaderFailure(iid, calls, run.stderr);
  });

  // A subnet with no route to S3 whose bucket does not resolve: the elastic node's and the seeder's cases below.
  test('no route to S3, its packets dropped (an isolated subnet without the S3 gateway endpoint): each try gives up its connection after 5 s, the loader signals FAILURE', async () => {
    const iid = await launch();
    const { run, calls, fetches } = await boot(iid, badParameters, { dropS3: true });
    process.stderr.write(`[emulator] dropped packets to S3: the loader gave up and signalled after ${run.seconds.toFixed(1)} s (12 tries, one attempt each, sleeps stubbed)\n`);
    expect(run.status).toBe(1);
    expect(fetches).toEqual([]);
    expect(run.stderr).toMatch(/^efs-cache: FATAL: cannot fetch the bootstrap code .*the subnet a route to S3\): .*Connect timeout on endpoint URL/m);
    expectLoaderFailure(iid, calls, run.stderr);
  });

  test('no aws CLI and no package repository: three tries of the install, then FAILURE signalled without the CLI', async () => {
    const iid = await launch();
    const { run, calls, fetches } = await boot(iid, badParameters, { noCli: true });
    expect(run.status).toBe(1);
    expect(fetches).toEqual([]);
    expect(run.stderr).toMatch(/^efs-cache: FATAL: cannot install awscli(-2)? to fetch the bootstrap code/m);
    // The host has apt-get (refused here, as every package command): three tries, each waiting for apt's lock.
    const installs = run.stubbed.filter((l) => /^(apt-get|dnf) .*install/.test(l));
    expect(installs).toHaveLength(3);
    for (const l of installs) expect(l).toMatch(/-o DPkg::Lock::Timeout=300 .*install --no-install-recommends awscli$|^dnf -qy install awscli-2$/);
    expectLoaderFailure(iid, calls, run.stderr);
  });

  test('no aws CLI, and curl and openssl refused (a minimal image has neither): the loader signs with Python\'s standard library and signals FAILURE', async () => {
    const iid = await launch();
    const { run, calls } = await boot(iid, badParameters, { noCli: true, refuse: ['curl', 'openssl'] });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^efs-cache: FATAL: cannot install awscli(-2)? to fetch the bootstrap code/m);
    expect(run.stubbed.filter((l) => /^(curl|openssl) /.test(l))).toEqual([]);
    expectLoaderFailure(iid, calls, run.stderr);
  });
  afterAll(() => tearDown(emu, 'calls.json', disks));

  test('bad parameters: one SignalResource, FAILURE, for the stack, the resource its tags name and its instance id; none on a re-run', async () => {
    const iid = await launch();
    const vm = disk();
    const { run, calls } = await boot(iid, badParameters, { varLib: vm });
    expect(run.stderr).toMatch(/FATAL: EFSC_NFSD_THREADS='many' is invalid/);
    expect(run.status).toBe(1);
    expect(actions(calls)).toEqual(['SignalResource 200']);
    expect(calls[0].service).toBe('cloudformation');
    expect(calls[0].params).toEqual({ StackName: 'Lab', LogicalResourceId: tags[SIGNAL_TAG], UniqueId: iid, Status: 'FAILURE' });
    expect(fs.existsSync(path.join(vm, 'efs-cache', 'signalled'))).toBe(true);
    // The same instance again (its disk kept): the marker holds the signal back.
    const again = await boot(iid, badParameters, { varLib: vm });
    expect(again.run.status).toBe(1);
    expect(again.calls).toEqual([]);
  });

  test('a full first-boot run stops at the packages (no kernel here) and signals FAILURE once, with the real CLI', async () => {
    const iid = await launch();
    const { run, calls } = await boot(iid, ud.cacheNode);
    expect(run.status).toBe(1);
    expect(run.stubbed.some((l) => l.startsWith('dpkg-query '))).toBe(true);
    expect(actions(calls)).toEqual(['SignalResource 200']);
    expect(calls[0].params).toMatchObject({ LogicalResourceId: tags[SIGNAL_TAG], UniqueId: iid, Status: 'FAILURE' });
  });

  test('a signal CloudFormation refuses (a resource of no stack) leaves no marker: nothing is taken as signalled', async () => {
    const iid = await launch();
    const vm = disk();
    const stray = { ...tags, [SIGNAL_TAG]: 'NotInTheStack' };
    const { run, calls } = await boot(iid, badParameters, { varLib: vm }, stray);
    expect(run.status).toBe(1);
    expect(actions(calls)).toEqual(Array(3).fill('SignalResource 400')); // the script's 3 tries (the CLI retries no 400 but throttling)
    expect(fs.existsSync(path.join(vm, 'efs-cache', 'signalled'))).toBe(false);
  });

  test('IAM enforced: a signal to a stack other than its own is refused (403) at each of the script\'s 3 tries and leaves no marker', async () => {
    // The role may signal stack/Lab/* and its own stack id only. Stack Other has the same resources and would accept
    // the signal: the refusal is the role's scoping, evaluated on the stack's ARN.
    await emu.registerStack('Other', ud.nodeTags.map((t) => t[SIGNAL_TAG]));
    const elsewhere = badParameters.replace(/^EFSC_SIGNAL_STACK='Lab'$/m, "EFSC_SIGNAL_STACK='Other'");
    expect(elsewhere).not.toBe(badParameters);
    const iid = await launch();
    const vm = disk();
    const { run, calls } = await boot(iid, elsewhere, { varLib: vm });
    expect(run.status).toBe(1);
    expect(actions(calls)).toEqual(Array(3).fill('SignalResource 403'));
    expect(calls[0].params).toMatchObject({ StackName: 'Other', UniqueId: iid, Status: 'FAILURE' });
    expect(run.stderr).toMatch(/AccessDenied/);
    expect(fs.existsSync(path.join(vm, 'efs-cache', 'signalled'))).toBe(false);
  });

  test('CloudFormation throttles the signal longer than the CLI retries: the script tries again, one signal gets through', async () => {
    // The CLI retries a throttled call by itself (v1: 5 attempts; v2, which Amazon Linux 2023 ships: 3). A fleet's
    // nodes signal together; throttling that outlasts those attempts must not lose the node's one signal, or
    // CloudFormation waits out the CreationPolicy timeout and reports no reason.
    const iid = await launch();
    const vm = disk();
    await emu.fail('SignalResource', Array.from({ length: 5 }, () => [400, 'Throttling', 'Rate exceeded'] as [number, string, string]));
    const { run, calls } = await boot(iid, badParameters, { varLib: vm });
    expect(run.status).toBe(1);
    expect(actions(calls)).toEqual([...Array(5).fill('SignalResource 400'), 'SignalResource 200']);
    expect(calls[5].params).toEqual({ StackName: 'Lab', LogicalResourceId: tags[SIGNAL_TAG], UniqueId: iid, Status: 'FAILURE' });
    expect(fs.existsSync(path.join(vm, 'efs-cache', 'signalled'))).toBe(true);
  });

  test('IAM enforced: without the statement that allows attaching its interface, every attach is refused (403) and the node signals FAILURE', async () => {
    // The negative control of every run here, which boots with the role's synthesized policies only: the same node,
    // its interface free, and a role without the one statement that names the interfaces (the one that names the
    // fleet's instances is kept: AttachNetworkInterface is authorized on the interface AND the instance).
    const iid = await launch({ [ENI_TAG]: eni });
    const { run, calls } = await boot(iid, node, {}, { ...tags, [ENI_TAG]: eni }, noAttach);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`FATAL: could not attach ${eni}`));
    expect(run.stderr).toContain('UnauthorizedOperation');
    expect(run.stderr).toContain(`is not authorized to perform: ec2:AttachNetworkInterface on resource: arn:aws:ec2:us-east-1:123456789012:network-interface/${eni}`);
    const attaches = calls.filter((c) => c.action === 'AttachNetworkInterface');
    expect(attaches).toHaveLength(20);
    expect(attaches.every((c) => c.status === 403)).toBe(true);
    expect(actions(calls.filter((c) => c.action !== 'AttachNetworkInterface'))).toEqual(['DescribeNetworkInterfaces 200', 'SignalResource 200']);
    expect(calls[calls.length - 1].params).toMatchObject({ UniqueId: iid, Status: 'FAILURE' });
    expect(await attachment()).toBeUndefined();
  });

  let first: string;
  test('the stable interface: attached to the instance that booted, at device 1, before SUCCESS is signalled', async () => {
    first = await launch({ [ENI_TAG]: eni });
    expect(await attachment()).toBeUndefined();
    const vm = disk();
    const { run, calls } = await boot(first, node, { varLib: vm }, { ...tags, [ENI_TAG]: eni });
    expect(run.stderr).toMatch(/cache node ready/);
    expect(run.status).toBe(0);
    expect(actions(calls)).toEqual([
      'DescribeNetworkInterfaces 200', 'AttachNetworkInterface 200', 'DescribeNetworkInterfaces 200', 'SignalResource 200',
    ]);
    expect(calls[1].params).toEqual({ InstanceId: first, NetworkInterfaceId: eni, DeviceIndex: '1' });
    expect(calls[3].params).toEqual({ StackName: 'Lab', LogicalResourceId: tags[SIGNAL_TAG], UniqueId: first, Status: 'SUCCESS' });
    expect(await attachment()).toMatchObject({ InstanceId: first, DeviceIndex: 1 });
    // Nothing reaches CloudWatch from the scripts: the CloudWatch agent publishes (StatsD in, PutMetricData out).
    expect(calls.filter((c) => c.service === 'monitoring')).toEqual([]);
    // The same instance runs it again (its disk kept): the interface is found attached, nothing else is called.
    const again = await boot(first, node, { varLib: vm }, { ...tags, [ENI_TAG]: eni });
    expect(again.run.status).toBe(0);
    expect(actions(again.calls)).toEqual(['DescribeNetworkInterfaces 200']);
  });

  let second: string;
  test('replacement after the old instance terminated: the interface moves to the new instance, which signals SUCCESS', async () => {
    await emu.api('ec2', 'terminate_instances', { InstanceIds: [first] });
    expect(await attachment()).toBeUndefined(); // EC2 detaches a terminated instance's secondary interfaces
    second = await launch({ [ENI_TAG]: eni });
    const { run, calls } = await boot(second, node, {}, { ...tags, [ENI_TAG]: eni });
    expect(run.status).toBe(0);
    expect(actions(calls)).toEqual([
      'DescribeNetworkInterfaces 200', 'AttachNetworkInterface 200', 'DescribeNetworkInterfaces 200', 'SignalResource 200',
    ]);
    expect(calls[1].params.InstanceId).toBe(second);
    expect(calls[3].params).toMatchObject({ UniqueId: second, Status: 'SUCCESS' });
    expect(await attachment()).toMatchObject({ InstanceId: second, DeviceIndex: 1 });
  });

  let third: string;
  test('replacement while the old instance still holds the interface: refused (in use) until it terminates, then attached', async () => {
    third = await launch({ [ENI_TAG]: eni });
    let terminated = false;
    const { run, calls } = await boot(third, node, {
      whileRunning: async (all) => {
        // The old instance finishes terminating after the new one was refused once (its Auto Scaling group's doing).
        if (!terminated && byCli(all).some((c) => c.action === 'AttachNetworkInterface' && c.status === 400)) {
          terminated = true;
          await emu.api('ec2', 'terminate_instances', { InstanceIds: [second] });
        }
      },
    }, { ...tags, [ENI_TAG]: eni });
    expect(run.status).toBe(0);
    const attaches = calls.filter((c) => c.action === 'AttachNetworkInterface');
    expect(attaches.length).toBeGreaterThanOrEqual(2);
    expect(attaches.slice(0, -1).every((c) => c.status === 400)).toBe(true);
    expect(attaches[attaches.length - 1].status).toBe(200);
    expect(attaches.every((c) => c.params.InstanceId === third)).toBe(true);
    expect(calls[calls.length - 1].action).toBe('SignalResource');
    expect(calls[calls.length - 1].params).toMatchObject({ UniqueId: third, Status: 'SUCCESS' });
    expect(calls.filter((c) => c.action === 'SignalResource')).toHaveLength(1);
    expect(await attachment()).toMatchObject({ InstanceId: third, DeviceIndex: 1 });
  });

  test('an interface that never frees up: the node gives up after its retries and signals FAILURE; the interface stays', async () => {
    const fourth = await launch({ [ENI_TAG]: eni });
    const { run, calls } = await boot(fourth, node, {}, { ...tags, [ENI_TAG]: eni });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`FATAL: could not attach ${eni}`));
    const attaches = calls.filter((c) => c.action === 'AttachNetworkInterface');
    expect(attaches).toHaveLength(20);
    expect(attaches.every((c) => c.status === 400)).toBe(true);
    expect(actions(calls.filter((c) => c.action === 'SignalResource'))).toEqual(['SignalResource 200']);
    expect(calls[calls.length - 1].params).toMatchObject({ UniqueId: fourth, Status: 'FAILURE' });
    expect(await attachment()).toMatchObject({ InstanceId: third, DeviceIndex: 1 });
  });

  test('with enaExpress (EFSC_ENA_EXPRESS=true): the stable interface is attached with ENA Express on for TCP, and only then', async () => {
    const withEna = withoutKernelSteps(ud.cacheNode.replace(/^EFSC_NFSD_THREADS='16'$/m, "$&\nEFSC_ENA_EXPRESS='true'"));
    expect(withEna).toMatch(/^EFSC_ENA_EXPRESS='true'$/m);
    const iid = await launch({ [ENI_TAG]: otherEni });
    const { run, calls } = await boot(iid, withEna, {}, { ...tags, [ENI_TAG]: otherEni });
    expect(`${run.status} ${actions(calls).join(', ')} ${run.stderr.slice(-1500)}`).toMatch(/^0 /);
    const attaches = calls.filter((c) => c.action === 'AttachNetworkInterface');
    expect(attaches.map((c) => c.params)).toEqual([{
      InstanceId: iid, NetworkInterfaceId: otherEni, DeviceIndex: '1', 'EnaSrdSpecification.EnaSrdEnabled': 'true',
    }]);
    expect(attaches[0].status).toBe(200);
    // UDP is left as EC2 defaults it (off): NFS runs over TCP.
    expect(Object.keys(attaches[0].params).filter((k) => k.includes('Udp'))).toEqual([]);
  });

  describe('an elastic fleet\'s node (one Auto Scaling group behind the load balancer)', () => {
    const elastic = withoutKernelSteps(ud.elasticNode);
    const inGroup = (group: string) => ({ ...ud.elasticNodeTags, 'aws:autoscaling:groupName': group });
    const hookCall = (c: ApiCall) => c.action === 'CompleteLifecycleAction';

    test('the launch hook: completed with CONTINUE, by the node itself with its role\'s session, once it serves and before its SUCCESS signal', async () => {
      const iid = await launch(ud.elasticNodeTags);
      const { run, calls } = await boot(iid, elastic, {}, inGroup('lab-elastic'), elasticRole);
      expect(`${run.status} ${run.stderr.slice(-1500)}`).toMatch(/^0 /);
      expect(actions(calls)).toEqual(['CompleteLifecycleAction 200', 'SignalResource 200']);
      expect(calls[0].params).toEqual({
        AutoScalingGroupName: 'lab-elastic', LifecycleHookName: 'efs-cache-serving', InstanceId: iid, LifecycleActionResult: 'CONTINUE',
      });
      expect(calls[0].client).toMatch(/^aws-cli\//); // the host's CLI here; the lab runs the VMs' own (v2)
      expect(calls[1].params).toMatchObject({ LogicalResourceId: ud.elasticNodeTags[SIGNAL_TAG], Status: 'SUCCESS' });
    });

    test('IAM enforced: a group not tagged with the node\'s fleet refuses it (403); the node signals FAILURE and completes nothing', async () => {
      const iid = await launch(ud.elasticNodeTags);
      const { run, calls } = await boot(iid, elastic, {}, inGroup('other-fleet'), elasticRole);
      expect(`${run.status} ${actions(calls).join(', ')} ${run.stderr.slice(-1500)}`).toMatch(/^1 /);
      expect(run.stderr).toMatch(/FATAL: could not complete the lifecycle action of efs-cache-serving/);
      const hooks = calls.filter(hookCall);
      expect(hooks.length).toBeGreaterThan(0);
      expect(hooks.map((c) => c.status)).toEqual(Array(hooks.length).fill(403));
      // CONTINUE refused, then the exit's ABANDON refused too; FAILURE signalled between them.
      expect(hooks.map((c) => c.params.LifecycleActionResult)).toEqual(expect.arrayContaining(['CONTINUE', 'ABANDON']));
      expect(calls.filter((c) => c.action === 'SignalResource').map((c) => `${c.params.Status} ${c.status}`)).toEqual(['FAILURE 200']);
    });

    // Each way the code cannot run, as the fixed node's tests above have them (the IAM refusal of the object aside: the
    // elastic role's statements are the fixed role's, and its refusal is proved there).
    test.each([
      ['its object is missing (NoSuchKey at each try)', { missingCode: true }, /FATAL: cannot fetch the bootstrap code .*NoSuchKey/],
      ['there is no route to S3 (the bucket does not resolve)', { noRouteToS3: true }, /FATAL: cannot fetch the bootstrap code .*the subnet a route to S3\): /],
      ['there is no aws CLI and no package repository', { noCli: true }, /FATAL: cannot install awscli(-2)? to fetch the bootstrap code/],
      ['its object is another body under the same key', { codeObject: `${renderedCode(ud.elasticNode)}\n# another body\n` }, /FATAL: .* is not the code this user data was rendered with/],
    ] as const)('the code cannot run because %s: the loader signals FAILURE and abandons the launch hook, both signed by itself', async (_why, options, fatal) => {
      const iid = await launch(ud.elasticNodeTags);
      const { run, calls } = await boot(iid, ud.elasticNode, options, inGroup('lab-elastic'), elasticRole);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(fatal);
      expect(actions(calls)).toEqual(['SignalResource 200', 'CompleteLifecycleAction 200']);
      for (const c of calls) expect(c.client).toBe(LOADER_CLIENT);
      expect(calls[0].params).toEqual({ StackName: 'Lab', LogicalResourceId: ud.elasticNodeTags[SIGNAL_TAG], UniqueId: iid, Status: 'FAILURE' });
      expect(calls[1].params).toEqual({
        AutoScalingGroupName: 'lab-elastic', LifecycleHookName: 'efs-cache-serving', InstanceId: iid, LifecycleActionResult: 'ABANDON',
      });
      expect(run.stderr).toMatch(/\nefs-cache: abandoned the launch hook\n$/);
    });

    test('the terminate hook: nothing while the group keeps the node; completed (CONTINUE) once its target state is Terminated and nothing serves', async () => {
      const iid = await launch(ud.elasticNodeTags);
      await emu.boot(iid, inGroup('lab-elastic'), elasticRole, 'InService');
      const before = (await emu.calls()).length;
      const started = Date.now();
      let terminatedAt = 0;
      const run = await emu.run(elastic, ['--drain-watch'], {
        whileRunning: async (all) => {
          if (!terminatedAt && Date.now() - started > 3000) {
            // Nothing completed while the group kept the node in service.
            expect(all.slice(before).filter(hookCall)).toEqual([]);
            terminatedAt = Date.now() / 1000;
            await emu.boot(iid, inGroup('lab-elastic'), elasticRole, 'Terminated');
          }
        },
      });
      expect(`${run.status} ${run.stderr.slice(-1500)}`).toMatch(/^0 /);
      const calls = byCli((await emu.calls()).slice(before)).filter((c) => !isCodeFetch(c));
      expect(actions(calls)).toEqual(['CompleteLifecycleAction 200']);
      expect(calls[0].params).toEqual({
        AutoScalingGroupName: 'lab-elastic', LifecycleHookName: 'efs-cache-drained', InstanceId: iid, LifecycleActionResult: 'CONTINUE',
      });
      expect(terminatedAt).toBeGreaterThan(0);
      expect(calls[0].t).toBeGreaterThan(terminatedAt);
    });
  });
});
