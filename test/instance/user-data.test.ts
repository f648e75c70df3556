import { spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BootstraplessSynthesizer, DefaultStackSynthesizer, Fn, Stack, Stage, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountSource,
  NfsVersion,
  SeedSource,
} from '../../lib';
import {
  awkPrograms, compactScript, holdsDeployTimeValue, LIBRARIES, renderedCode, renderScript, shellQuote, TOKEN_SIZE_ESTIMATE, withUserCommands,
} from '../../lib/instance/user-data';
import { readAsset } from '../../lib/private/assets';
import { importedFs, newApp, stackWithVpc } from '../util';
import { runScript } from '../util/run-script';
import { flatten } from '../util/user-data';

describe('renderScript', () => {
  test('header, sorted quoted parameters, the loader; every library and the script, whole, in the code asset', () => {
    const r = renderScript({ script: 'client/bootstrap.sh', description: 'test', scope: new Stack(), parameters: { EFSC_B: "it's", EFSC_A: 'x y' } });
    const lines = r.text.split('\n');
    expect(lines.slice(0, 5)).toEqual(['#!/bin/bash', 'set -euo pipefail', 'set -a', "EFSC_A='x y'", `EFSC_B='it'"'"'s'`]);
    expect(r.text.match(/^#!/gm)).toHaveLength(1);
    const code = renderedCode(r.text);
    expect(code).toBe(r.code);
    expect(code).toContain('check_parameters() {');
    // Each file whole, comments included, after a line naming it: the libraries in their order, the awk programs
    // (each in its function: below), then the script.
    const files = [...LIBRARIES, ...awkPrograms(), 'client/bootstrap.sh'];
    expect([...code.matchAll(/^# ---- cdk-efs-cache assets\/(\S+) ----$/gm)].map((m) => m[1])).toEqual(files);
    for (const file of files.filter((f) => f.endsWith('.sh'))) {
      expect(code).toContain(`# ---- cdk-efs-cache assets/${file} ----\n${readAsset(file).replace(/\n*$/, '')}`);
    }
    expect(code).not.toMatch(/efs-cache: [a-z-]+ (begin|end)$/m);
    // The user data holds none of the code: its parameters, the code's sha256 and the loader.
    expect(r.text).not.toContain('check_parameters');
    expect(r.text).toContain(`EFSC_CODE_SHA256='${crypto.createHash('sha256').update(code).digest('hex')}'`);
    expect(r.text).toMatch(/\neval "\$efs_cache_code"\n$/);
    // The asset's file is the code, byte for byte; its key is the content's hash.
    expect(fs.readFileSync(path.join(Stage.of(r.asset)!.assetOutdir, r.asset.assetPath), 'utf8')).toBe(code);
    expect(r.asset.s3ObjectKey).toBe(`${r.asset.assetHash}.sh`);
  });
  test('a number token rendered with String() is a deploy-time value: it travels as base64 data, never quoted', () => {
    const scope = new Stack();
    const n = String(Token.asNumber(Fn.importValue('Threads')));
    // What Token.isUnresolved misses in a string, the stack's resolution sees.
    expect(Token.isUnresolved(n)).toBe(false);
    expect(holdsDeployTimeValue(scope, n)).toBe(true);
    expect(holdsDeployTimeValue(scope, `x-${n}`)).toBe(true);
    expect(holdsDeployTimeValue(scope, '-1.5e+289')).toBe(false);
    const r = renderScript({ script: 'client/bootstrap.sh', description: 'test', scope, parameters: { EFSC_N: n, EFSC_L: '8' } });
    expect(r.text).toMatch(/^EFSC_N="\$\(base64 -d <<<'\$\{Token\[/m);
    expect(r.text).toContain("\nEFSC_L='8'\n");
    expect(scope.resolve(r.text)).toEqual({ 'Fn::Join': ['', expect.arrayContaining([{ 'Fn::Base64': { 'Fn::ImportValue': 'Threads' } }])] });
  });

  test('LIBRARIES is every library under assets/lib but the loader (in the user data) and checkout.sh (host runs only)', () => {
    const dir = path.join(__dirname, '..', '..', 'assets', 'lib');
    const all = fs.readdirSync(dir).filter((f) => f.endsWith('.sh') && !['loader.sh', 'checkout.sh'].includes(f)).map((f) => `lib/${f}`);
    expect([...LIBRARIES].sort()).toEqual(all.sort());
    expect(LIBRARIES[0]).toBe('lib/common.sh');
    // checkout.sh lists them for install_self and sources them (a line each, so that shellcheck follows them), both in
    // the same order.
    const checkout = readAsset('lib/checkout.sh');
    expect(checkout).toContain(`for efs_cache_lib in ${LIBRARIES.map((l) => path.basename(l, '.sh')).join(' ')}; do`);
    const sourced = [...checkout.matchAll(/^source "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)\/([\w-]+\.sh)"$/gm)].map((m) => `lib/${m[1]}`);
    expect(sourced).toEqual([...LIBRARIES]);
  });

  test('the code holds every awk program of assets/lib/awk as a function that prints it byte for byte, as a checkout defines it', () => {
    const code = renderScript({ script: 'client/bootstrap.sh', description: 'test', scope: new Stack(), parameters: {} }).code;
    const programs = awkPrograms();
    expect(programs).toEqual(expect.arrayContaining(['lib/awk/records.awk', 'lib/awk/mirror-keep.awk']));
    const fn = (file: string) => `efs_cache_awk_${path.basename(file, '.awk').replace(/-/g, '_')}`;
    // The awk sections of the code, evaluated alone: each function prints its file.
    const sections = code.split(/^(?=# ---- cdk-efs-cache assets\/)/m).filter((s) => /^# ---- cdk-efs-cache assets\/lib\/awk\//.test(s)).join('');
    for (const defined of [sections, 'source assets/lib/checkout.sh']) {
      const run = spawnSync('bash', ['-c', `set -euo pipefail\n${defined}\nfor f in "$@"; do "$f"; printf '\\0'; done`, 'bash', ...programs.map(fn)],
        { cwd: path.join(__dirname, '..', '..'), encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.stdout.split('\0').slice(0, -1)).toEqual(programs.map((f) => readAsset(f)));
    }
    // mirror-sync.sh runs the programs through these functions.
    const sync = readAsset('lib/mirror-sync.sh');
    expect(sync).toContain('awk -f <(efs_cache_awk_records) -f <("efs_cache_awk_mirror_$p")');
    for (const p of [...sync.matchAll(/\bmirror_awk ([a-z]+) /g)].map((m) => m[1])) expect(programs).toContain(`lib/awk/mirror-${p}.awk`);
  });

  test('the code asset is deterministic: two apps synthesize the same template (its key is the content\'s hash)', () => {
    const synth = () => {
      const { stack, vpc } = stackWithVpc();
      new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')] });
      return JSON.stringify(Template.fromStack(stack).toJSON());
    };
    const [a, b] = [synth(), synth()];
    expect(a).toContain('.sh');
    expect(a).toBe(b);
  });

  test('rejects parameter names outside EFSC_', () => {
    expect(() => renderScript({ script: 'client/bootstrap.sh', description: 't', scope: new Stack(), parameters: { PATH: '/' } })).toThrow(/EFSC_/);
  });

  test('counts each token generously and refuses user data over 16 KB, naming what it was', () => {
    const token = Token.asString({ Ref: 'X' });
    const small = renderScript({ script: 'client/bootstrap.sh', description: 't', scope: new Stack(), parameters: { EFSC_T: token } });
    const plain = renderScript({ script: 'client/bootstrap.sh', description: 't', scope: new Stack(), parameters: { EFSC_T: '' } });
    // A token travels base64-encoded (4 bytes per 3) inside a decoding wrapper: `EFSC_T="$(base64 -d <<<'...')"`.
    const wrapper = `EFSC_T="$(base64 -d <<<'')"`.length - `EFSC_T=''`.length;
    expect(small.estimatedBytes - plain.estimatedBytes).toBe(4 * Math.ceil(TOKEN_SIZE_ESTIMATE / 3) + wrapper);
    expect(() => renderScript({
      script: 'client/bootstrap.sh', description: 'the big one', scope: new Stack(), parameters: { EFSC_BIG: 'x'.repeat(16000) },
    })).toThrow(/user data of the big one would be about \d+ bytes, over EC2's 16384-byte limit/);
  });

  test('the size error ends with the path of the construct it is given', () => {
    const { stack } = stackWithVpc();
    expect(() => renderScript({
      script: 'client/bootstrap.sh', description: 'the big one', scope: stack, parameters: { EFSC_BIG: 'x'.repeat(16000) },
    })).toThrow(/over EC2's 16384-byte limit\. .* \(at TestStack\)$/);
  });

  test('a seeder whose props do not fit names its path', () => {
    const { stack, vpc } = stackWithVpc();
    expect(() => new DataSeeder(stack, 'Seeder', {
      vpc, fileSystem: importedFs(stack), source: SeedSource.instanceDirectory('/srv/data'), targetPath: `/${'a'.repeat(16000)}`,
    })).toThrow(/^cdk-efs-cache: the user data of the data seeder TestStack\/Seeder would be about \d+ bytes, over EC2's 16384-byte limit\. .* \(at TestStack\/Seeder\)$/);
  });
});

describe('the loader: the code runs only if it is the code rendered with the user data', () => {
  const render = () => {
    const stack = new Stack();
    const rendered = renderScript({ script: 'client/bootstrap.sh', description: 't', scope: stack, parameters: { EFSC_NFS_SERVER: 'bad server' } });
    const extra = ec2.UserData.forLinux({ shebang: '' });
    extra.addCommands('echo ran > "$HOME/user-step"');
    return { rendered, text: flatten(stack.resolve(withUserCommands(rendered, extra, 't')), () => 'deploy-time-value') };
  };
  const fetches = (calls: string[]) => calls.filter((c) => c.startsWith('aws s3api get-object '));

  test('it fetches the object once, with the rendered bucket, key and region and a connect timeout of 5 s, and runs it (here: its checks refuse the value)', () => {
    const { rendered, text } = render();
    const run = runScript(text);
    expect(run.stderr).toMatch(/^efs-cache: FATAL: EFSC_NFS_SERVER='bad server' is invalid/);
    expect(fetches(run.calls)).toEqual([expect.stringMatching(new RegExp(
      `^aws s3api get-object --region deploy-time-value --bucket deploy-time-value --key ${rendered.asset.assetHash}\\.sh ` +
      `--cli-connect-timeout 5 /var/lib/efs-cache/code/${rendered.sha256}\\.sh\\.\\w+$`))]);
  });

  test('an object that is not the rendered code is refused: nothing of it runs, the user\'s commands do not, nothing is kept', () => {
    const { rendered, text } = render();
    for (const object of ['', 'echo pwned > "$HOME/pwned"\n', rendered.code.replace('check_parameters() {', 'check_parameters() { echo pwned > "$HOME/pwned";')]) {
      const run = runScript(text, [], { codeObject: object });
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(`efs-cache: FATAL: s3://deploy-time-value/${rendered.asset.assetHash}.sh is not the code this user data was ` +
        `rendered with (its sha256 is not ${rendered.sha256}): refusing to run it\n`);
      expect(fs.existsSync(path.join(run.dir, 'pwned'))).toBe(false);
      expect(fs.existsSync(path.join(run.dir, 'user-step'))).toBe(false);
    }
  });

  test('code an earlier boot kept runs without a fetch; a kept copy that changed is fetched again', () => {
    const { rendered, text } = render();
    const kept = runScript(text, [], { keptCode: rendered.code, codeObject: 'not fetched' });
    expect(fetches(kept.calls)).toEqual([]);
    expect(kept.stderr).toMatch(/^efs-cache: FATAL: EFSC_NFS_SERVER='bad server' is invalid/);
    const changed = runScript(text, [], { keptCode: rendered.code + 'echo pwned > "$HOME/pwned"\n' });
    expect(fetches(changed.calls)).toHaveLength(1);
    expect(changed.stderr).toMatch(/^efs-cache: FATAL: EFSC_NFS_SERVER='bad server' is invalid/);
    expect(fs.existsSync(path.join(changed.dir, 'pwned'))).toBe(false);
  });
});

describe('compactScript', () => {
  test('drops comments (not shellcheck directives), blank lines and indentation; keeps heredoc bodies', () => {
    const script = [
      '#!/bin/bash',
      'set -euo pipefail',
      '# a comment',
      '',
      'f() {',
      '  echo "# not a comment"',
      "  cat >/etc/x <<'EOF'",
      '# kept: a line of the file',
      '    indented',
      'EOF',
      '  cat <<-END',
      '\t# kept too',
      '\tEND',
      '  x=$(cat <<< "here-string")',
      '  # shellcheck disable=SC2086 # kept: a directive',
      '}',
    ].join('\n');
    expect(compactScript(script)).toEqual([
      'f() {',
      'echo "# not a comment"',
      "cat >/etc/x <<'EOF'",
      '# kept: a line of the file',
      '    indented',
      'EOF',
      'cat <<-END',
      '\t# kept too',
      '\tEND',
      'x=$(cat <<< "here-string")',
      '# shellcheck disable=SC2086 # kept: a directive',
      '}',
    ]);
  });

  test('an unterminated heredoc is an error, not a silently broken script', () => {
    expect(() => compactScript('cat <<EOF\nno end')).toThrow(/unterminated heredoc EOF/);
  });
});

test('shellQuote survives quotes', () => {
  expect(shellQuote("a'b")).toBe(`'a'"'"'b'`);
});

describe('commands users add to a template\'s userData', () => {
  test('run after the bootstrap, on the first boot only; without any, the user data is the bootstrap alone', () => {
    const rendered = renderScript({ script: 'client/bootstrap.sh', description: 't', scope: new Stack(), parameters: {} });
    const extra = ec2.UserData.forLinux({ shebang: '' });
    expect(withUserCommands(rendered, extra, 't')).toBe(rendered.text);
    extra.addCommands('echo "my step" > /var/log/my-step', 'systemctl enable --now my.service');
    const text = withUserCommands(rendered, extra, 't');
    expect(text.startsWith(rendered.text)).toBe(true);
    expect(text.slice(rendered.text.length)).toBe([
      '# Commands added to userData: the first boot only, after the bootstrap succeeded.',
      'if [ -z "${1:-}" ]; then',
      'echo "my step" > /var/log/my-step',
      'systemctl enable --now my.service',
      'fi',
      '',
    ].join('\n'));
  });

  test('run only once the evaluated bootstrap returned: a failing bootstrap never reaches them', () => {
    // A stand-in bootstrap whose main fails: the user's command must not run.
    const stack = new Stack();
    const rendered = renderScript({ script: 'client/bootstrap.sh', description: 't', scope: stack, parameters: { EFSC_NFS_SERVER: 'bad server' } });
    const extra = ec2.UserData.forLinux({ shebang: '' });
    extra.addCommands('echo ran > "$HOME/user-step"');
    const run = runScript(flatten(stack.resolve(withUserCommands(rendered, extra, 't')), () => 'deploy-time-value'));
    expect(run.stderr).toMatch(/FATAL: EFSC_NFS_SERVER='bad server' is invalid/);
    expect(fs.existsSync(path.join(run.dir, 'user-step'))).toBe(false);
  });

  test('8 KB of them fit on the largest node (NFSv3, disk cache, two mirrors, warming) and on a client of it, and synthesize', () => {
    const { app, stack, vpc } = stackWithVpc();
    const fleet = new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), instanceType: new ec2.InstanceType('c7gd.16xlarge'), clientNfsVersion: NfsVersion.NFS_V3,
      mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www')], warming: { paths: ['/efs/models'] },
    });
    const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app'] }) });
    // 8,192 bytes of commands: 64 lines of 128 bytes (127 and the newline).
    const commands = Array.from({ length: 64 }, (_, i) => `echo ${String(i).padStart(3, '0')} ${'x'.repeat(118)}`);
    expect(Buffer.byteLength(commands.join('\n') + '\n')).toBe(8192);
    fleet.userData.addCommands(...commands);
    clients.userData.addCommands(...commands);
    expect(() => app.synth()).not.toThrow();
    for (const [construct, bytes] of [[fleet, fleet.userDataBytes], [clients, clients.userDataBytes]] as const) {
      expect({ path: construct.node.path, fits: bytes + 8192 + 200 <= 16384 }).toEqual({ path: construct.node.path, fits: true });
    }
  });

  test('count toward the 16 KB limit: synth reports it once, cleanly, with the path (no Resolution error wrapping)', () => {
    for (const [path, build] of [
      ['TestStack/Fleet', (stack: Stack, vpc: ec2.Vpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) }).userData],
      ['TestStack/Clients', (stack: Stack, vpc: ec2.Vpc) => new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.fileSystem(importedFs(stack)) }).userData],
    ] as const) {
      const { app, stack, vpc } = stackWithVpc();
      // Added after the construct, as users do: the check runs at synth.
      build(stack, vpc).addCommands(`echo '${'x'.repeat(14000)}'`);
      let message = 'nothing thrown';
      try {
        app.synth();
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).not.toMatch(/Resolution error/);
      expect(message.match(/Invalid userData/g)).toHaveLength(1);
      expect(message).toMatch(new RegExp(`\\[${path}\\] Invalid userData: the user data of .* with the commands added to it would be about \\d+ bytes, ` +
        `over EC2's 16384-byte limit \\(the commands take about \\d+\\): move long commands into a script the instance downloads\\. ` +
        `\\(at ${path}; in Python: user_data\\)$`));
    }
  });

  test('within the limit, the same template synthesizes', () => {
    const { app, stack, vpc } = stackWithVpc();
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) }).userData.addCommands(`echo '${'x'.repeat(1000)}'`);
    expect(() => app.synth()).not.toThrow();
  });
});

describe('the code\'s asset', () => {
  const fleetIn = (stack: Stack) => {
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 1, natGateways: 0, restrictDefaultSecurityGroup: false });
    return new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), clientCidrs: ['10.0.0.0/16'] });
  };

  test('a synthesizer whose bucketPrefix the loader would refuse (a space, a +) is refused at synth, naming the key', () => {
    for (const bucketPrefix of ['team a/', 'team+a/']) {
      const stack = new Stack(newApp(), 'S', { synthesizer: new DefaultStackSynthesizer({ bucketPrefix }) });
      expect(() => fleetIn(stack)).toThrow(/puts the instances' code at the S3 key 'team.a\/[0-9a-f]{64}\.sh', which the instances refuse to fetch .*bucketPrefix.* \(at S\/Fleet/);
    }
    const ok = new Stack(newApp(), 'S', { synthesizer: new DefaultStackSynthesizer({ bucketPrefix: 'team-a/' }) });
    expect(() => fleetIn(ok)).not.toThrow();
  });

  test('a BootstraplessSynthesizer stack, which holds no file asset, is refused with what to use instead', () => {
    const stack = new Stack(newApp(), 'S', { synthesizer: new BootstraplessSynthesizer({}) });
    expect(() => fleetIn(stack)).toThrow(/the instances' code is a file asset, which a stack with the BootstraplessSynthesizer cannot hold: use the DefaultStackSynthesizer .*\(at S\/Fleet/);
  });

  test('a synth writes the code inside the cloud assembly, nothing in the system\'s temporary folder', () => {
    const before = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('efs-cache-code')).length;
    const app = newApp();
    const stack = new Stack(app, 'S');
    fleetIn(stack);
    const assembly = app.synth();
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('efs-cache-code')).length).toBe(before);
    expect(fs.readdirSync(path.join(assembly.directory, '.efs-cache-code'))).toHaveLength(1);
  });
});
