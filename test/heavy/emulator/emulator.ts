/**
 * The AWS API emulator of the scripts' AWS boundary (server.py: moto behind real TLS, a recorder of CloudFormation
 * signals, the lab's metadata service) in a network namespace of its own, and a runner that executes a rendered user
 * data inside that namespace with the REAL aws CLI and curl. Nothing in the scripts is redirected: in the run's own
 * mount namespace /etc/hosts (bind-mounted) resolves the AWS host names to the emulator, the CA bundle the CLI trusts
 * (bind-mounted over the venv's certifi bundle) holds the public roots plus a CA made for this run, and the CLI takes
 * its credentials from the metadata service at 169.254.169.254, as on EC2: a session of a role in the emulator's IAM
 * (`instanceRole`, with the policies the synthesized template grants), against which every call is authorized
 * (server.py, authz.py). No AWS_* variable is set.
 * Needs root (or unprivileged user namespaces), openssl, and the venv of test/heavy/gates/setup.sh (moto, awscli).
 */
import { spawn, spawnSync, ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { LIFECYCLE_HOOKS } from '../../../lib/cache-fleet/elastic';
import { renderedCode } from '../../../lib/instance/user-data';
import { REFUSED } from '../../util/run-script';
import { parameters } from '../../util/user-data';
import { CfnTemplate, IntrinsicValues, PSEUDO_VALUES, resolveIntrinsics } from '../lab/harness/user-data';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const VENV = path.join(ROOT, '.venv');
/** The AWS host names the scripts reach (region us-east-1), resolved to the emulator. */
export const AWS_HOSTS = [
  'ec2.us-east-1.amazonaws.com', 'cloudformation.us-east-1.amazonaws.com', 'monitoring.us-east-1.amazonaws.com', 'autoscaling.us-east-1.amazonaws.com',
  'sts.us-east-1.amazonaws.com', 'sts.amazonaws.com', 's3.amazonaws.com', 's3.us-east-1.amazonaws.com',
];

/** An address of the emulator's namespace whose packets are dropped without an answer (RFC 5737's TEST-NET-1). */
const DROPPED_ADDRESS = '192.0.2.1';
/** How long one run of a script may take before it is killed as hung (see `run`). */
const RUN_LIMIT_MS = 300_000;

/** The deployment values of the emulator's AWS (moto's default account), for a template's intrinsics. */
export const EMULATOR_VALUES: IntrinsicValues = PSEUDO_VALUES;

/** One API call as the emulator recorded it. */
export interface ApiCall {
  readonly t: number;
  /** The SigV4 service (ec2, cloudformation, monitoring, s3, ...). */
  readonly service: string;
  /** The API action (AttachNetworkInterface, SignalResource, ...). */
  readonly action: string;
  /** Its parameters as sent (query protocol: flat keys such as InstanceId.1). */
  readonly params: Record<string, string>;
  /** The first word of the User-Agent: aws-cli/1.x for the scripts, Boto3/... for the test's own set-up calls. */
  readonly client: string;
  /** The Host header: the name the client resolved (an S3 bucket's virtual host, for example). */
  readonly host: string;
  /** The HTTP status the emulator answered. */
  readonly status: number;
  /** The address the call came from (a lab VM's). */
  readonly source: string;
  /** For a SignalResource while a probe is set (`probeSignals`): what the probe answered at that moment. */
  readonly probe?: any;
}

/** The keys of a role session, as the metadata service serves an instance profile's. */
export interface RoleSession {
  readonly AccessKeyId: string;
  readonly SecretAccessKey: string;
  readonly Token: string;
}

/** An IAM policy document. */
export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: Array<Record<string, any>>;
}

/** What one run of a user data did. */
export interface EmulatedRun {
  readonly status: number | null;
  readonly stderr: string;
  /** Stubbed commands it invoked (logger, sleep and the refused ones), `name args` per line. */
  readonly stubbed: string[];
  /** How long it took, in seconds. */
  readonly seconds: number;
}

/** Options of `Emulator.run`. */
export interface RunOptions {
  /** A host folder mounted as the instance's /var/lib (its disk: the signal marker survives a re-run). @default a fresh tmpfs */
  readonly varLib?: string;
  /** Called every 200 ms while the script runs, with the calls recorded so far (a replacement happens here). */
  readonly whileRunning?: (calls: ApiCall[]) => Promise<void> | void;
  /** More host names that resolve to the emulator (an S3 bucket's virtual host, such as BUCKET.s3.amazonaws.com). */
  readonly extraHosts?: string[];
  /**
   * What the user data's code object holds in S3 when the run starts. @default - the code rendered with the user
   * data (`putCode`)
   */
  readonly codeObject?: string;
  /** The code's object is not in the bucket (deleted before the run, as after a cleanup of the assets bucket). @default false */
  readonly missingCode?: boolean;
  /** The instance has no aws CLI (a minimal image; its package manager is refused as always). @default false */
  readonly noCli?: boolean;
  /** The code's bucket does not resolve (a subnet with no route to S3). @default false */
  readonly noRouteToS3?: boolean;
  /**
   * The code's bucket resolves to an address whose packets are dropped without an answer (an isolated subnet without
   * the S3 gateway endpoint: each connection waits out its timeout). @default false
   */
  readonly dropS3?: boolean;
  /** More commands that record their call and fail, as the refused ones (a minimal image's missing tools). @default none */
  readonly refuse?: string[];
}

export class Emulator {
  /**
   * Starts an emulator in a new network namespace; resolves when its TLS front and metadata service listen. With
   * `netns` (a lab's, test/heavy/lab/harness/lab.ts) it listens in that namespace instead, on every address (VMs reach it
   * at the lab's gateway) and without a metadata service of its own: the lab's serves its VMs.
   */
  public static async start(options: { netns?: string } = {}): Promise<Emulator> {
    const python = path.join(VENV, 'bin', 'python');
    if (!fs.existsSync(path.join(VENV, 'bin', 'aws')) || !fs.existsSync(python)) {
      throw new Error(`no aws CLI in ${VENV}: run test/heavy/gates/setup.sh (installs requirements-dev.txt: moto, awscli)`);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-emu-'));
    const certs = spawnSync('bash', [path.join(__dirname, 'certs.sh'), dir], { encoding: 'utf8' });
    if (certs.status !== 0) throw new Error(`certs.sh failed: ${certs.stderr}`);
    // DROPPED_ADDRESS is routed into a veth pair whose other end takes nothing: a permanent neighbour entry gives it a
    // MAC no interface has, so every packet is dropped without an answer (no ICMP, no reset), as on a route to nowhere.
    const netns = ['ip link set lo up && ip addr add 169.254.169.254/32 dev lo',
      'ip link add efsc-drop type veth peer name efsc-sink && ip link set efsc-drop up && ip link set efsc-sink up',
      `ip route add ${DROPPED_ADDRESS}/32 dev efsc-drop`,
      `ip neigh add ${DROPPED_ADDRESS} lladdr 02:00:00:00:00:99 dev efsc-drop nud permanent`,
      'exec "$@"'].join(' && ');
    const logFd = fs.openSync(path.join(dir, 'server.log'), 'a');
    const server = path.join(__dirname, 'server.py');
    const child = options.netns
      ? spawn('ip', ['netns', 'exec', options.netns, python, server, dir, '-'], { stdio: ['ignore', 'ignore', logFd] })
      : spawn('unshare', [...userns(), '--net', 'bash', '-c', netns, 'emulator', python, server, dir,
        path.join(ROOT, 'test', 'heavy', 'lab', 'harness', 'imds.py')], { stdio: ['ignore', 'ignore', logFd] });
    fs.closeSync(logFd);
    const emu = new Emulator(dir, child);
    const sock = path.join(dir, 'control.sock');
    for (let i = 0; !fs.existsSync(sock); i++) {
      if (child.exitCode !== null || i > 300) {
        const log = fs.readFileSync(path.join(dir, 'server.log'), 'utf8');
        await emu.stop();
        throw new Error(`the emulator did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    emu.bundle = emu.makeBundle();
    return emu;
  }

  private bundle = '';

  private constructor(public readonly dir: string, private readonly child: ChildProcess) {}

  /** A boto3 call through the TLS front (the test's set-up and its reading of EC2 state). Throws on an API error. */
  public async api(service: string, method: string, params: Record<string, unknown> = {}): Promise<any> {
    const [status, value] = await this.control('POST', '/api', { service, method, params });
    if (status !== 200) throw new Error(`${service}.${method}: ${JSON.stringify(value)}`);
    return value;
  }

  /** Every API call recorded so far, in order. */
  public async calls(): Promise<ApiCall[]> {
    return (await this.control('GET', '/calls'))[1];
  }

  /**
   * The resources of a stack that may be signalled (others are refused, as CloudFormation refuses them). Resolves to
   * the stack's ARN with its id (AWS::StackId), against which SignalResource is authorized.
   */
  public async registerStack(name: string, logicalIds: string[]): Promise<string> {
    return (await this.control('POST', '/stacks', { [name]: logicalIds }))[1][name];
  }

  /**
   * An instance role in the emulator's IAM with exactly these policy documents (one customer managed policy each,
   * attached), and a session of it from STS: the keys the metadata service hands the instance that `boot` names.
   * From then on every call made with them is authorized against those documents (authz.py says how far).
   */
  public async instanceRole(name: string, documents: PolicyDocument[]): Promise<RoleSession> {
    const trust = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }] };
    const role = (await this.api('iam', 'create_role', { RoleName: name, AssumeRolePolicyDocument: JSON.stringify(trust) })).Role;
    for (const [i, document] of documents.entries()) {
      const policy = (await this.api('iam', 'create_policy', { PolicyName: `${name}-${i + 1}`, PolicyDocument: JSON.stringify(document) })).Policy;
      await this.api('iam', 'attach_role_policy', { RoleName: name, PolicyArn: policy.Arn });
    }
    const c = (await this.api('sts', 'assume_role', { RoleArn: role.Arn, RoleSessionName: 'i-emulator' })).Credentials;
    return { AccessKeyId: c.AccessKeyId, SecretAccessKey: c.SecretAccessKey, Token: c.SessionToken };
  }

  /**
   * Puts the code a rendered user data loads (or `body`) in S3 where its parameters say it is (EFSC_CODE_BUCKET, the
   * stack's assets bucket, created when missing; EFSC_CODE_KEY), as `cdk deploy` publishes a file asset. Returns the
   * bucket's virtual host names, which must resolve to the emulator. A user data without a code object returns [].
   */
  public async putCode(userData: string, body?: string): Promise<string[]> {
    const p = parameters(userData);
    if (!p.EFSC_CODE_BUCKET) return [];
    const buckets = ((await this.api('s3', 'list_buckets')).Buckets ?? []).map((b: { Name: string }) => b.Name);
    if (!buckets.includes(p.EFSC_CODE_BUCKET)) await this.api('s3', 'create_bucket', { Bucket: p.EFSC_CODE_BUCKET });
    await this.api('s3', 'put_object', { Bucket: p.EFSC_CODE_BUCKET, Key: p.EFSC_CODE_KEY, Body: body ?? renderedCode(userData) });
    return [`${p.EFSC_CODE_BUCKET}.s3.amazonaws.com`, `${p.EFSC_CODE_BUCKET}.s3.${p.EFSC_CODE_REGION}.amazonaws.com`];
  }

  /**
   * An Auto Scaling group in the emulator, with `tags` on it and an elastic fleet's two lifecycle hooks (their names as
   * lib/cache-fleet/elastic.ts gives them): what the nodes' CompleteLifecycleAction names, and the tags IAM reads. It
   * launches nothing (the test launches the instances); several groups share one launch configuration.
   */
  public async elasticGroup(name: string, tags: Record<string, string>, subnet: string): Promise<void> {
    const configs = (await this.api('autoscaling', 'describe_launch_configurations')).LaunchConfigurations ?? [];
    if (!configs.some((c: { LaunchConfigurationName: string }) => c.LaunchConfigurationName === 'emulator')) {
      await this.api('autoscaling', 'create_launch_configuration', { LaunchConfigurationName: 'emulator', ImageId: 'ami-12c6146b', InstanceType: 'c7gn.medium' });
    }
    await this.api('autoscaling', 'create_auto_scaling_group', {
      AutoScalingGroupName: name, LaunchConfigurationName: 'emulator', MinSize: 0, MaxSize: 4, DesiredCapacity: 0, VPCZoneIdentifier: subnet,
      Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value, PropagateAtLaunch: true })),
    });
    for (const [LifecycleHookName, LifecycleTransition] of [[LIFECYCLE_HOOKS.launch, 'autoscaling:EC2_INSTANCE_LAUNCHING'], [LIFECYCLE_HOOKS.drain, 'autoscaling:EC2_INSTANCE_TERMINATING']]) {
      await this.api('autoscaling', 'put_lifecycle_hook', { AutoScalingGroupName: name, LifecycleHookName, LifecycleTransition });
    }
  }

  /** The CA (PEM) that signed the emulator's certificate: what an instance must trust to reach it over TLS. */
  public get ca(): string {
    return fs.readFileSync(path.join(this.dir, 'ca.pem'), 'utf8');
  }

  /**
   * From now on every SignalResource that IAM allows waits for POST / on this Unix socket ({source, resource,
   * status}) before it is answered; the JSON answered is recorded with the call (`probe`).
   */
  public async probeSignals(socket: string): Promise<void> {
    await this.control('POST', '/probe', { socket });
  }

  /** The next calls of `action` are answered with these errors, in order (a throttled or failing service). */
  public async fail(action: string, errors: Array<[status: number, code: string, message: string]>): Promise<void> {
    await this.control('POST', '/faults', { [action]: errors });
  }

  /** What the metadata service answers from now on: the instance that boots next, and its role's session. */
  public async boot(instanceId: string, tags: Record<string, string>, credentials: RoleSession, targetLifecycleState?: string): Promise<void> {
    await this.control('POST', '/imds', {
      'instance-id': instanceId, tags, credentials, ...(targetLifecycleState ? { 'target-lifecycle-state': targetLifecycleState } : {}),
    });
  }

  /**
   * Runs a user data (bash, args) inside the emulator's network namespace and a private mount namespace: tmpfs over
   * /usr/local, /run and /etc/systemd/system (and /var/lib unless `varLib`), /etc/hosts and the CLI's CA bundle
   * bind-mounted, an empty environment but PATH (stubs first: logger, sleep that returns at once, and the refused
   * commands of test/util/run-script.ts; then the venv's aws and the host's tools), HOME and LANG. The user data's
   * code is in S3 first (`putCode`): its loader fetches it with the role's session, as on EC2.
   */
  public async run(script: string, args: string[] = [], options: RunOptions = {}): Promise<EmulatedRun> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-emurun-'));
    const bin = path.join(dir, 'bin');
    const log = path.join(dir, 'stubbed.log');
    fs.mkdirSync(bin);
    const stub = (name: string, body: string) => fs.writeFileSync(path.join(bin, name),
      `#!/bin/bash\na="$*"\nprintf '%s\\n' "${name} \${a//$'\\n'/\\\\n}" >>'${log}'\n${body}\n`, { mode: 0o755 });
    stub('logger', 'exit 0');
    stub('sleep', 'exit 0');
    for (const name of [...REFUSED, ...options.refuse ?? []]) stub(name, 'exit 97');
    if (!options.noCli) fs.symlinkSync(path.join(VENV, 'bin', 'aws'), path.join(bin, 'aws'));
    const codeHosts = await this.putCode(script, options.codeObject);
    if (options.missingCode) {
      const p = parameters(script);
      await this.api('s3', 'delete_object', { Bucket: p.EFSC_CODE_BUCKET, Key: p.EFSC_CODE_KEY });
    }
    const noS3 = options.noRouteToS3 || options.dropS3;
    const reachable = noS3 ? AWS_HOSTS.filter((h) => !/^s3\./.test(h)) : [...AWS_HOSTS, ...codeHosts];
    const dropped = options.dropS3 ? `${DROPPED_ADDRESS} ${[...AWS_HOSTS.filter((h) => /^s3\./.test(h)), ...codeHosts].join(' ')}\n` : '';
    const hosts = path.join(dir, 'hosts');
    fs.writeFileSync(hosts, `127.0.0.1 localhost\n127.0.0.1 ${[...reachable, ...options.extraHosts ?? []].join(' ')}\n${dropped}`);
    const file = path.join(dir, 'user-data.sh');
    fs.writeFileSync(file, script, { mode: 0o700 });
    const varLib = options.varLib ? `/bin/mount --bind '${options.varLib}' /var/lib` : '/bin/mount -t tmpfs efsc-test /var/lib';
    const wrapper = [
      'set -e',
      'for d in /usr/local /run /etc/systemd/system; do /bin/mount -t tmpfs efsc-test "$d"; done',
      varLib,
      `/bin/mount --bind '${hosts}' /etc/hosts`,
      `/bin/mount --bind '${this.bundle}' '${caBundlePath()}'`,
      // The system's bundle too, which Python's ssl reads (the loader's own signed calls), as an instance trusts AWS's.
      `/bin/mount --bind '${this.bundle}' '${SYSTEM_CA_BUNDLE}'`,
      'exec "$@"',
    ].join('\n');
    const started = Date.now();
    const child = spawn('nsenter', ['--target', String(this.child.pid), ...(process.getuid?.() === 0 ? [] : ['--user']),
      '--net', '--', 'unshare', '--mount', '/bin/bash', '-c', wrapper, 'sandbox', 'bash', file, ...args], {
      cwd: dir,
      // Without a route to S3, each of the loader's 12 tries is one attempt of the CLI, not its own three with backoff
      // (it took about 97 s with the CLI's retries). With dropped packets, each try waits out the loader's 5 s connect
      // timeout: about 60 s (on an instance, with the CLI's three attempts and the loader's sleeps, about 4 minutes).
      env: { PATH: `${bin}:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: dir, LANG: 'C', ...(noS3 ? { AWS_MAX_ATTEMPTS: '1' } : {}) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr += d; });
    const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // A bound on a run that hangs, never a measure of speed: the longest runs take 60-100 s on a machine of two cores
    // and, on one two to three times slower, were killed at a bound of 120 s while still working (ed731c2's clean run).
    const killer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
    let status: number | null | undefined;
    void done.then((s) => { status = s; });
    while (status === undefined) {
      if (options.whileRunning) await options.whileRunning(await this.calls());
      await Promise.race([done, new Promise((r) => setTimeout(r, 200))]);
    }
    clearTimeout(killer);
    const stubbed = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : [];
    fs.rmSync(dir, { recursive: true, force: true });
    return { status, stderr, stubbed, seconds: (Date.now() - started) / 1000 };
  }

  /** Stops the emulator (its metadata service exits with it) and removes its folder, keys included. */
  public async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private makeBundle(): string {
    const file = path.join(this.dir, 'bundle.pem');
    fs.writeFileSync(file, fs.readFileSync(caBundlePath(), 'utf8') + '\n' + fs.readFileSync(path.join(this.dir, 'ca.pem'), 'utf8'));
    return file;
  }

  private control(method: string, urlPath: string, body?: unknown): Promise<[number, any]> {
    const data = body === undefined ? '' : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request({ socketPath: path.join(this.dir, 'control.sock'), path: urlPath, method,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => resolve([res.statusCode ?? 0, JSON.parse(text)]));
      });
      req.on('error', reject);
      req.end(data);
    });
  }
}

let bundlePath: string | undefined;
/** The CA bundle the venv's aws CLI verifies TLS with (botocore's choice: certifi's, when installed). */
/** The system's CA bundle on Debian and Ubuntu hosts, which curl and Python's ssl read. */
const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export function caBundlePath(): string {
  bundlePath ??= spawnSync(path.join(VENV, 'bin', 'python'), ['-c',
    'from botocore.httpsession import get_cert_path; print(get_cert_path(True))'], { encoding: 'utf8' }).stdout.trim();
  if (!bundlePath) throw new Error('cannot find the CA bundle of the venv\'s botocore');
  return bundlePath;
}

function userns(): string[] {
  return process.getuid?.() === 0 ? [] : ['--user', '--map-root-user'];
}

/** Whether a call is a loader's fetch of its code object (S3 GET of `<sha256 of the asset>.sh`). */
export function isCodeFetch(c: ApiCall): boolean {
  return c.service === 's3' && /^GET \/[0-9a-f]{64}\.sh$/.test(c.action);
}

/** The user agent of the loader's own signed calls (assets/lib/loader.sh, curl): its FAILURE signal and ABANDON. */
export const LOADER_CLIENT = 'efs-cache-loader';

/** The calls the scripts made (the aws CLI's, and the loader's own), without the test's own set-up calls. */
export function byCli(calls: ApiCall[]): ApiCall[] {
  return calls.filter((c) => c.client.startsWith('aws-cli/') || c.client === LOADER_CLIENT);
}

/**
 * The policies of a role as a synthesized template grants them: its inline Policies, the AWS::IAM::Policy and
 * AWS::IAM::ManagedPolicy resources that name it (Roles) or that it lists (ManagedPolicyArns), with their intrinsics
 * resolved from `values` (test/heavy/lab/harness/user-data.ts: pseudo parameters, Ref:LogicalId of the interfaces, ...).
 * AWS managed policies (arn:aws:iam::aws:policy/...) are left out and returned by name: their text is AWS's, and
 * leaving an Allow out can only deny more, so what passes without them passes with them.
 */
export function rolePolicies(template: CfnTemplate, roleId: string, values: IntrinsicValues): { documents: PolicyDocument[]; awsManaged: string[] } {
  const resources = template.Resources ?? {};
  const role = resources[roleId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleId} is not an AWS::IAM::Role of the template`);
  const namesRole = (roles: unknown) => Array.isArray(roles) && roles.some((r) => r?.Ref === roleId);
  const listed = new Set<string>();
  const awsManaged: string[] = [];
  for (const arn of (role.Properties?.ManagedPolicyArns ?? []) as any[]) {
    if (typeof arn?.Ref === 'string' && resources[arn.Ref]) listed.add(arn.Ref);
    else awsManaged.push(String(resolveIntrinsics(arn, template, values, `${roleId}.ManagedPolicyArns`)));
  }
  if (awsManaged.some((a) => !a.startsWith('arn:aws:iam::aws:policy/'))) throw new Error(`unexpected policy ARNs: ${awsManaged}`);
  const raw: unknown[] = ((role.Properties?.Policies ?? []) as any[]).map((p) => p.PolicyDocument);
  for (const [id, r] of Object.entries(resources)) {
    if ((r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') && (listed.has(id) || namesRole(r.Properties?.Roles))) {
      raw.push(r.Properties?.PolicyDocument);
    }
  }
  const documents = raw.map((d, i) => resolveIntrinsics(d, template, values, `policy ${i + 1} of ${roleId}`) as PolicyDocument);
  if (documents.length === 0) throw new Error(`${roleId} has no policy of its own in the template`);
  return { documents, awsManaged };
}

/** The documents without the statements that `drop` picks (a negative control); throws unless it picks one. */
export function withoutStatements(documents: PolicyDocument[], drop: (s: Record<string, any>) => boolean): PolicyDocument[] {
  const out = documents.map((d) => ({ ...d, Statement: d.Statement.filter((s) => !drop(s)) }));
  if (out.every((d, i) => d.Statement.length === documents[i].Statement.length)) throw new Error('no statement dropped');
  return out;
}

/**
 * The common end of an emulator test file: keeps what the emulator recorded in .lab-cache/emulator/CALLS_FILE
 * (git-ignored, for reading after the run), stops the emulator and removes the instances' disks.
 */
export async function tearDown(emu: Emulator | undefined, callsFile: string, disks: string[]): Promise<void> {
  if (!emu) return;
  const keep = path.join(ROOT, '.lab-cache', 'emulator');
  fs.mkdirSync(keep, { recursive: true });
  fs.writeFileSync(path.join(keep, callsFile), JSON.stringify(await emu.calls(), null, 1));
  await emu.stop();
  for (const d of disks) fs.rmSync(d, { recursive: true, force: true });
}
