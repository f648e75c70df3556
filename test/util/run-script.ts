import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { codeSha256, KEPT_CODE_DIR, keptCodePath, renderedCode } from '../../lib/instance/user-data';

/** What a sandboxed run of a rendered user data did. */
export interface ScriptRun {
  /** Exit status of bash. */
  readonly status: number | null;
  /** Everything it wrote to stderr (the efs-cache: lines). */
  readonly stderr: string;
  /** Every stubbed command it invoked, one `name arg arg ...` line each, in order. */
  readonly calls: string[];
  /** The run's scratch folder (HOME, and where a test may look for files a hostile value tried to create). */
  readonly dir: string;
}

/** Options of `runScript`. */
export interface RunScriptOptions {
  /** Instance tags the stubbed metadata service serves (tags/instance/). @default - none: their listing fails */
  readonly tags?: Record<string, string>;
  /** How many of the first calls to the metadata service time out (curl exit 28), as a loaded service can. @default 0 */
  readonly imdsTimeouts?: number;
  /** What the stubbed S3 object of the user data's code holds. @default - the code rendered with the user data */
  readonly codeObject?: string;
  /**
   * What an earlier boot left in /var/lib/efs-cache/code under the user data's EFSC_CODE_SHA256, where the loader
   * looks before it fetches. @default - nothing
   */
  readonly keptCode?: string;
  /** What /etc/os-release says inside the sandbox (bound over the host's). @default - the host's */
  readonly osRelease?: string;
  /** More stubs, name to bash body, run after the call is recorded (`"$@"` is the call's arguments). @default none */
  readonly stubs?: Record<string, string>;
}

/**
 * Commands that change a machine or reach a network: stubbed with one that records its call and fails, so a script
 * run on the test host can do nothing to it and a test sees what it tried.
 */
export const REFUSED = [
  'apt-get', 'dnf', 'rpm', 'dpkg-query', 'systemctl', 'mount', 'umount', 'mkfs.ext4', 'mdadm', 'modprobe', 'sysctl',
  'nfsconf', 'exportfs', 'shutdown', 'reboot', 'poweroff', 'restorecon', 'semanage', 'wipefs', 'dd', 'flock',
];

/**
 * Runs a rendered user data with bash on the test host, with an empty environment, HOME in a scratch folder, and a
 * PATH whose first folder holds stubs: `curl` answers the instance metadata service (IMDSv2 token, instance id
 * `i-0123456789abcdef0`, region `us-east-1`, the given instance tags; the first `imdsTimeouts` calls time out), and so
 * does `python3` for the loader's requests (its signed calls fail), `aws`
 * records its call and succeeds (`s3api get-object` writes the code rendered with the user data, the object its loader
 * fetches), `logger` and `sleep` do nothing, and every command in REFUSED records its call and fails. Only a script's
 * parameter checks and its AWS calls can be proved this way: the rest needs the lab's real kernel.
 */
export function runScript(script: string, args: string[] = [], options: RunScriptOptions = {}): ScriptRun {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-run-'));
  const bin = path.join(dir, 'bin');
  const calls = path.join(dir, 'calls.log');
  fs.mkdirSync(bin);
  const stub = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/bash\na="$*"\nprintf '%s\\n' "${name} \${a//$'\\n'/\\\\n}" >>'${calls}'\n${body}\n`, { mode: 0o755 });
  const tags = Object.entries(options.tags ?? {});
  stub('curl', [
    `n=$(cat '${dir}/imds-calls' 2>/dev/null || echo 0); echo $((n + 1)) >'${dir}/imds-calls'`,
    `[ "$n" -ge ${options.imdsTimeouts ?? 0} ] || exit 28`,
    'case "$*" in',
    '  *api/token*) echo lab-token ;;',
    '  *meta-data/instance-id*) echo i-0123456789abcdef0 ;;',
    '  *meta-data/placement/region*) echo us-east-1 ;;',
    ...tags.map(([k, v]) => `  *meta-data/tags/instance/${k}) echo '${v}' ;;`),
    ...(tags.length ? [`  *meta-data/tags/instance) printf '%s\\n' ${tags.map(([k]) => `'${k}'`).join(' ')} ;;`] : []),
    '  *) exit 22 ;;',
    'esac',
  ].join('\n'));
  // The loader's fetch of the code: the object holds the code rendered with this user data (the emulator's S3 and the
  // lab prove the real fetch); any other aws call succeeds with no output.
  const sha = codeSha256(script);
  fs.writeFileSync(path.join(dir, 'code-object'), options.codeObject ?? (sha ? renderedCode(script) : ''));
  if (options.keptCode !== undefined) fs.writeFileSync(path.join(dir, 'kept-code'), options.keptCode);
  // The loader's own calls (efs_cache_aws in assets/lib/loader.sh, `python3 - MODE ARG... REGION` with its program on
  // stdin): its metadata requests get curl's answers above; its signed calls fail, since this sandbox serves no role
  // session (the emulator proves them). No run here reaches a real metadata service, whatever host it runs on.
  stub('python3', [
    'cat >/dev/null',
    `[ "$2" != imds ] || exec '${bin}/curl' -fsS "http://169.254.169.254/latest/$3"`,
    'echo "efs-cache: $2 $3: no role session in this sandbox" >&2',
    'exit 1',
  ].join('\n'));
  stub('aws', `if [ "$1 $2" = "s3api get-object" ]; then cp '${dir}/code-object' "\${*: -1}"; fi\nexit 0`);
  stub('logger', 'exit 0');
  stub('sleep', 'exit 0'); // retry loops end at once
  for (const name of REFUSED) stub(name, 'exit 97');
  for (const [name, body] of Object.entries(options.stubs ?? {})) stub(name, body);
  const file = path.join(dir, 'user-data.sh');
  fs.writeFileSync(file, script, { mode: 0o700 });
  // A private mount namespace with empty tmpfs over the folders a script keeps its state in (the signal marker in
  // /var/lib/efs-cache, installed copies under /usr/local, run state under /run): no run sees another's state, and
  // none is left on the host.
  const keep = options.keptCode !== undefined && sha
    ? `mkdir -p ${KEPT_CODE_DIR} && cp '${dir}/kept-code' ${keptCodePath(sha)}; ` : '';
  if (options.osRelease !== undefined) fs.writeFileSync(path.join(dir, 'os-release'), options.osRelease);
  const osRelease = options.osRelease !== undefined ? `/bin/mount --bind '${dir}/os-release' /etc/os-release; ` : '';
  const wrapper = `for d in /var/lib /usr/local /run; do /bin/mount -t tmpfs efsc-test "$d"; done; ${osRelease}${keep}exec "$@"`;
  const unshare = process.getuid?.() === 0 ? ['--mount'] : ['--mount', '--map-root-user'];
  const r = spawnSync('unshare', [...unshare, '/bin/bash', '-c', wrapper, 'sandbox', 'bash', file, ...args], {
    cwd: dir,
    env: { PATH: `${bin}:/usr/sbin:/usr/bin:/sbin:/bin`, HOME: dir, LANG: 'C' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const log = fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8') : '';
  return { status: r.status, stderr: r.stderr, calls: log.split('\n').filter((l) => l !== ''), dir };
}

/** The `aws cloudformation signal-resource` calls of a run, as their `--status` values. */
export function signals(run: ScriptRun): string[] {
  return run.calls
    .filter((c) => c.startsWith('aws cloudformation signal-resource '))
    .map((c) => /--status (\S+)/.exec(c)?.[1] ?? '?');
}
