/**
 * Independent gates: every synthesized template and script is held to tools this project did not write.
 *
 *   (a) synthesize every configuration of ./matrix.ts into its own cloud assembly (a temp dir);
 *   (b) cfn-lint (from .venv/, see setup.sh) on every template: zero errors and zero warnings;
 *   (c) the user data of every AWS::EC2::LaunchTemplate and AWS::EC2::Instance (the DataSeeder), intrinsics replaced by harmless values, through
 *       `shellcheck -S style`: zero findings; and every assets/**\/*.sh through `shellcheck -x -S style`;
 *   (d) every rendered user data leaves at least 8 KB of EC2's 16384 bytes (before base64) for users' own commands,
 *       and the code it loads is in its cloud assembly as the file asset its parameters name, with their sha256;
 *   (e) cdk-nag's AwsSolutions, NIST 800-53 R5 and HIPAA Security packs on every configuration: zero unacknowledged
 *       findings.
 *
 * Run from the repository root (so ts-node finds tsconfig.json): `npx ts-node --transpile-only test/heavy/gates/run.ts`,
 * after `bash test/heavy/gates/setup.sh` (or just `bash test/heavy/gates/run.sh`). Exits non-zero on any failure and prints
 * `gates: N passed, M failed` last. Set GATES_KEEP=1 to keep the temp dir (templates and rendered user data).
 */
import { execFileSync, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as yaml from 'yaml';
import { renderedCode } from '../../../lib/instance/user-data';
import { CDK_CONTEXT, nagFindings } from '../../util';
// aws-cdk-lib's built-in template validation off: cfn-lint (b) is this gate's template check (test/util/synth-setup.ts).
import '../../util/synth-setup';
import { flatten, expandAfterLoader, mimeParts, parameters } from '../../util/user-data';
import { MATRIX } from './matrix';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CFN_LINT = path.join(ROOT, '.venv', 'bin', 'cfn-lint');
const USER_DATA_LIMIT = 16384;
/** What every rendered user data must leave of USER_DATA_LIMIT for the commands users add (issue 28's target). */
const USER_ROOM = 8192;
/** The room an EKS node's user data (EksFleetNodes: a MIME document of the NodeConfig, the bootstrap and the gate) leaves. */
const EKS_NODE_USER_ROOM = 4096;
/** The resources whose attributes are an EKS cluster's as EKS writes them (aws-eks' cluster, the L1). */
const EKS_CLUSTER_TYPES = ['AWS::EKS::Cluster', 'Custom::AWSCDK-EKS-Cluster'];

/**
 * cfn-lint rules ignored on the command line, each with the reason. Keep this empty unless a rule fires on something
 * CDK itself emits and that would be wrong to change.
 */
const IGNORED_CFN_LINT_RULES: Record<string, string> = {};

/**
 * Single cfn-lint findings tolerated, narrower than ignoring a rule: the rule id and a pattern of the message.
 * Anything the library itself emits must pass without an entry here.
 */
const TOLERATED_CFN_LINT_FINDINGS: Array<{ rule: string; message: RegExp; why: string }> = [
  {
    // aws-cdk-lib's CustomResourceProvider framework (here the handler of Custom::VpcRestrictDefaultSG, from the
    // @aws-cdk/aws-ec2:restrictDefaultSecurityGroup flag of cdk.json) gives its Lambda function both a GetAtt of
    // its role and an explicit DependsOn on it. Redundant, harmless, and not ours to change.
    rule: 'W3005',
    message: new RegExp(/^'Custom[A-Za-z0-9]*CustomResourceProviderRole[0-9A-F]{8}' dependency already enforced by a 'GetAtt' /.source +
      /at 'Resources\/Custom[A-Za-z0-9]*CustomResourceProviderHandler[0-9A-F]{8}\/Properties\/Role'$/.source),
    why: 'aws-cdk-lib custom resource provider: DependsOn plus GetAtt of its own role',
  },
];

function tolerated(finding: string): boolean {
  const m = /^\d+:\d+:\d+:\d+:([A-Z]\d+):(.*)$/.exec(finding);
  return !!m && TOLERATED_CFN_LINT_FINDINGS.some((t) => t.rule === m[1] && t.message.test(m[2]));
}

const started = Date.now();
let passed = 0;
let failed = 0;
const failures: string[] = [];
let templateCount = 0;
let launchTemplateCount = 0;
let instanceCount = 0;

function check(name: string, ok: boolean, detail = ''): void {
  if (ok) {
    passed++;
    console.log(`  ok   ${name}${detail ? ` (${detail})` : ''}`);
  } else {
    failed++;
    failures.push(name);
    console.log(`  FAIL ${name}${detail ? `\n${detail.replace(/^/gm, '       ')}` : ''}`);
  }
}

/** A harmless, well-formed `Ref` value per resource type (what CloudFormation would return for it). */
const REF_BY_TYPE: Record<string, string> = {
  'AWS::EFS::FileSystem': 'fs-0123456789abcdef0',
  'AWS::EFS::AccessPoint': 'fsap-0123456789abcdef0',
  'AWS::EC2::NetworkInterface': 'eni-0123456789abcdef0',
  'AWS::EC2::SecurityGroup': 'sg-0123456789abcdef0',
  'AWS::EC2::Subnet': 'subnet-0123456789abcdef0',
  'AWS::EC2::VPC': 'vpc-0123456789abcdef0',
  'AWS::Route53::HostedZone': 'Z0123456789ABCDEFGHIJ',
  'AWS::AutoScaling::AutoScalingGroup': 'GateStack-Group-0123ABCD',
  'AWS::IAM::Role': 'GateStack-Role-0123ABCD',
  // The cluster's name, in the ECS_CLUSTER line aws-cdk-lib adds to a container instance's user data.
  'AWS::ECS::Cluster': 'GateStack-Cluster-0123ABCD',
  'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>': 'ami-0123456789abcdef0',
};

/**
 * A harmless, well-formed value for a `Ref` or `Fn::GetAtt` in user data, chosen by the referenced resource's type
 * (or parameter type) and the attribute, so that shellcheck sees a script like the one an instance runs. Throws on a
 * reference it does not know, so a new kind of token gets a deliberate placeholder rather than a silent one.
 */
function placeholderFor(template: { Resources?: Record<string, any>; Parameters?: Record<string, any> }) {
  return (key: string): string => {
    const pseudo: Record<string, string> = {
      'Ref:AWS::Region': 'us-east-1',
      'Ref:AWS::URLSuffix': 'amazonaws.com',
      'Ref:AWS::Partition': 'aws',
      'Ref:AWS::AccountId': '123456789012',
      'Ref:AWS::StackName': 'GateStack',
      'Ref:AWS::StackId': 'arn:aws:cloudformation:us-east-1:123456789012:stack/GateStack/0123abcd',
    };
    if (pseudo[key]) return pseudo[key];
    // A string of pseudo parameters (the file assets bucket's name): them substituted.
    const sub = /^Fn::Sub:(".*")$/.exec(key);
    if (sub) {
      return (JSON.parse(sub[1]) as string).replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
        if (!pseudo[`Ref:${name}`]) throw new Error(`no placeholder for \${${name}} in ${key}`);
        return pseudo[`Ref:${name}`];
      });
    }
    const ref = /^Ref:(.+)$/.exec(key);
    if (ref) {
      const type = template.Resources?.[ref[1]]?.Type ?? template.Parameters?.[ref[1]]?.Type;
      if (type && REF_BY_TYPE[type]) return REF_BY_TYPE[type];
      throw new Error(`no placeholder for ${key} (type ${type})`);
    }
    const att = /^Fn::GetAtt:[^.]+\.(.+)$/.exec(key);
    const attr = att?.[1] ?? '';
    if (/CidrBlock$/.test(attr)) return '10.0.0.0/16';
    if (attr === 'DNSName') return 'internal-gate-0123456789.elb.us-east-1.amazonaws.com';
    if (/PrivateIpAddress$/.test(attr)) return '10.0.1.10';
    if (attr === 'Arn') return 'arn:aws:iam::123456789012:role/gate';
    if (attr === 'FileSystemId') return 'fs-0123456789abcdef0';
    if (attr === 'Id' || attr === 'GroupId') return 'sg-0123456789abcdef0';
    throw new Error(`no placeholder for ${key}`);
  };
}

function run(cmd: string, args: string[]): { status: number; out: string } {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-gates-'));
try {
  // (a) synthesize
  console.log(`== synthesize ${MATRIX.length} configurations`);
  const templates: Array<{ config: string; stack: string; file: string }> = [];
  for (const config of MATRIX) {
    const outdir = path.join(work, config.name, 'cdk.out');
    let detail = '';
    try {
      const app = new App({ context: CDK_CONTEXT, outdir });
      const stack = config.build(app);
      const assembly = app.synth();
      for (const s of assembly.stacks) templates.push({ config: config.name, stack: s.stackName, file: s.templateFullPath });
      detail = `${stack.stackName}, ${Object.keys(JSON.parse(fs.readFileSync(assembly.getStackByName(stack.stackName).templateFullPath, 'utf8')).Resources).length} resources`;
      check(`synth ${config.name}`, true, detail);
      // (e) cdk-nag on the synthesized app (acknowledgements are narrow and explained where they are made)
      for (const pack of ['AwsSolutions', 'NIST', 'HIPAA'] as const) {
        const findings = nagFindings(app, [pack]);
        check(`cdk-nag ${pack} ${config.name}`, findings.length === 0, findings.join('\n'));
      }
    } catch (e) {
      check(`synth ${config.name}`, false, (e as Error).stack ?? String(e));
    }
  }

  // A stack every cdk-nag pack must flag (a bare SNS topic: no KMS key, no TLS-only policy): proves they really ran.
  const canaryApp = new App({ context: CDK_CONTEXT, outdir: path.join(work, 'nag-canary', 'cdk.out') });
  new sns.Topic(new Stack(canaryApp, 'NagCanary'), 'Topic');
  const canaryNag = nagFindings(canaryApp, ['AwsSolutions', 'NIST', 'HIPAA']);
  check('cdk-nag flags a canary stack',
    ['AwsSolutions-', 'NIST.800.53.R5-', 'HIPAA.Security-'].every((pack) => canaryNag.some((f) => f.startsWith(pack))),
    canaryNag.join('\n'));

  // (b) cfn-lint, one process for every template (its start-up dominates)
  templateCount = templates.length;
  console.log(`== cfn-lint ${templates.length} templates`);
  const version = run(CFN_LINT, ['--version']).out.trim();
  console.log(`  ${version}`);
  const ignore = Object.keys(IGNORED_CFN_LINT_RULES);
  // A template cfn-lint must reject (an unknown property), linted in the same run: proves the linter really ran.
  const canary = path.join(work, 'canary.template.json');
  fs.writeFileSync(canary, JSON.stringify({
    Resources: { Canary: { Type: 'AWS::SQS::Queue', Properties: { NotAQueueProperty: true } } },
  }));
  const lint = run(CFN_LINT, [
    '--format', 'parseable',
    ...(ignore.length ? ['--ignore-checks', ...ignore] : []),
    '--', ...templates.map((t) => t.file), canary,
  ]);
  // parseable: file:line:col:endline:endcol:rule:message
  const findings = lint.out.split('\n').filter((l) => l.trim());
  const canaryFindings = findings.filter((l) => l.startsWith(`${canary}:`));
  check('cfn-lint rejects a canary template', canaryFindings.some((l) => /:E3002:/.test(l)), canaryFindings.join('\n'));
  const unattributed = findings.filter((l) => !l.startsWith(`${canary}:`) && !templates.some((t) => l.startsWith(`${t.file}:`)));
  for (const t of templates) {
    const mine = findings.filter((l) => l.startsWith(`${t.file}:`)).map((l) => l.slice(t.file.length + 1));
    const blocking = mine.filter((l) => /^\d+:\d+:\d+:\d+:[EW]\d+:/.test(l) && !tolerated(l));
    const known = mine.filter((l) => tolerated(l));
    const info = mine.filter((l) => !blocking.includes(l) && !known.includes(l));
    check(`cfn-lint ${t.config}`, blocking.length === 0, [
      ...blocking,
      ...info.map((l) => `(info) ${l}`),
      ...(blocking.length === 0 && known.length ? [`${known.length} tolerated aws-cdk-lib finding(s)`] : []),
    ].join('\n'));
  }
  // Exit status is a bit mask of 2 (errors), 4 (warnings), 8 (informational); anything else means cfn-lint failed.
  check('cfn-lint ran cleanly', unattributed.length === 0 && lint.status >= 0 && (lint.status & ~14) === 0,
    unattributed.length ? unattributed.join('\n') : `exit ${lint.status}`);

  // (c, d) user data of every launch template: size, then shellcheck
  console.log('== user data of launch templates and instances');
  const scripts: Array<{ name: string; file: string }> = [];
  let largest: { name: string; bytes: number } | undefined;
  for (const t of templates) {
    const template = JSON.parse(fs.readFileSync(t.file, 'utf8'));
    for (const [id, r] of Object.entries<any>(template.Resources ?? {})) {
      // Launch templates (cache nodes, clients) and plain instances (the DataSeeder) carry user data.
      if (r.Type !== 'AWS::EC2::LaunchTemplate' && r.Type !== 'AWS::EC2::Instance') continue;
      if (r.Type === 'AWS::EC2::LaunchTemplate') launchTemplateCount++;
      else instanceCount++;
      const ud = r.Type === 'AWS::EC2::LaunchTemplate' ? r.Properties?.LaunchTemplateData?.UserData : r.Properties?.UserData;
      const name = `${t.config}/${id}`;
      if (!ud) {
        check(`user data present ${name}`, false, 'launch template without user data');
        continue;
      }
      let text: string;
      try {
        text = flatten(ud, placeholderFor(template));
      } catch (e) {
        check(`user data renders ${name}`, false, String(e));
        continue;
      }
      const bytes = Buffer.byteLength(text, 'utf8');
      if (!largest || bytes > largest.bytes) largest = { name, bytes };
      // An EKS node's document holds its NodeConfig (a cluster's certificate authority, about 2 KB) and the gate too.
      const room = mimeParts(text) ? EKS_NODE_USER_ROOM : USER_ROOM;
      check(`user data size ${name}`, bytes <= USER_DATA_LIMIT - room,
        `${bytes} bytes of ${USER_DATA_LIMIT}: ${USER_DATA_LIMIT - bytes} left for users' commands (at least ${room} needed)`);
      // An EKS node's user data (EksFleetNodes) is a MIME document: its NodeConfig is YAML, its scripts are checked
      // as the scripts they are. The bootstrap's part is checked as every other user data.
      const marked = flatten(ud, (k) => `@@DEPLOY-TIME ${k}@@`);
      const mime = mimeParts(text)?.parts;
      const markedMime = mime ? mimeParts(marked)?.parts : undefined;
      const script = mime ? mime.find((m) => m.file === '10-efs-cache-client.sh')?.body ?? '' : text;
      if (mime) {
        check(`MIME parts ${name}`, mime.map((m) => `${m.type} ${m.file ?? ''}`).join(', ') ===
          'application/node.eks.aws , text/x-shellscript 10-efs-cache-client.sh, text/x-shellscript 20-efs-cache-eks-node-gate.sh',
        mime.map((m) => `${m.type} ${m.file ?? ''}`).join(', '));
        // CloudFormation cannot quote a value in YAML: a deploy-time value in the NodeConfig is the whole of a
        // double-quoted scalar and an attribute of an EKS cluster of this template (its name, endpoint or authority,
        // which EKS writes), never a parameter or an import (EksFleetNodes refuses those at synth).
        const config = markedMime![0].body.split('\n').filter((l) => l.includes('@@DEPLOY-TIME'));
        const eksValue = (l: string) => {
          const m = /^ {4}[A-Za-z]+: "@@DEPLOY-TIME (?:Ref:([^.@]+)|Fn::GetAtt:([^.@]+)\.(?:Endpoint|CertificateAuthorityData))@@"$/.exec(l);
          return m !== null && EKS_CLUSTER_TYPES.includes(template.Resources?.[m[1] ?? m[2]]?.Type);
        };
        const loose = config.filter((l) => !eksValue(l));
        check(`NodeConfig's deploy-time values are EKS's ${name}`, loose.length === 0, loose.join('\n'));
        // The NodeConfig as a YAML parser reads it: the cluster's four fields and nothing else.
        const nodeConfig = yaml.parse(mime[0].body);
        check(`NodeConfig's keys ${name}`, JSON.stringify(Object.keys(nodeConfig?.spec?.cluster ?? {})) ===
          JSON.stringify(['name', 'apiServerEndpoint', 'certificateAuthority', 'cidr']) && Object.keys(nodeConfig.spec).length === 1,
        JSON.stringify(Object.keys(nodeConfig?.spec?.cluster ?? {})));
        // The boundary: in no part, and with a character no deploy-time value of the document can hold (base64 in
        // the scripts; names, https URLs, base64 and CIDRs in the NodeConfig).
        const boundary = mimeParts(marked)!.boundary;
        check(`MIME boundary in no part ${name}`, /[^A-Za-z0-9+/=_.:-]/.test(boundary) && markedMime!.every((m) => !m.body.includes(boundary)), boundary);
        const gate = path.join(work, t.config, `${id}.gate.sh`);
        fs.mkdirSync(path.dirname(gate), { recursive: true });
        fs.writeFileSync(gate, mime[2].body);
        scripts.push({ name: `${name} (gate)`, file: gate });
      }
      // The code the loader fetches: the asset cdk deploy publishes from this assembly, under the key and with the
      // sha256 the user data holds; shellcheck reads it in place of the loader.
      const p = parameters(script);
      const asset = path.join(path.dirname(t.file), `asset.${p.EFSC_CODE_KEY}`);
      const code = fs.existsSync(asset) ? fs.readFileSync(asset, 'utf8') : undefined;
      const digest = code === undefined ? 'missing' : crypto.createHash('sha256').update(code).digest('hex');
      check(`code asset ${name}`, digest === p.EFSC_CODE_SHA256 && code === renderedCode(script),
        `${path.basename(asset)}: sha256 ${digest}, user data expects ${p.EFSC_CODE_SHA256}`);
      // Every deploy-time value (an intrinsic) must sit inside an Fn::Base64 that the instance decodes: one outside
      // it is shell text whatever it resolves to. Marked values outside a base64 segment stay visible as the marker.
      const shellText = markedMime ? markedMime.slice(1).map((m) => m.body).join('\n') : marked;
      const raw = [...new Set(shellText.match(/@@DEPLOY-TIME [^@]*@@/g) ?? [])];
      check(`deploy-time values only as data ${name}`, raw.length === 0, raw.join(', '));
      const file = path.join(work, t.config, `${id}.sh`);
      // shellcheck reads what runs: the header, the loader and the code in place of the loader's eval.
      fs.writeFileSync(file, expandAfterLoader(script));
      scripts.push({ name, file });
    }
  }
  if (largest) console.log(`  largest user data: ${largest.bytes} bytes (${largest.name}), ${USER_DATA_LIMIT - largest.bytes} left for users' commands`);
  console.log(`== shellcheck ${scripts.length} user data scripts`);
  console.log(`  ${run('shellcheck', ['--version']).out.split('\n')[1] ?? ''}`);
  if (scripts.length) {
    // One process for all; gcc format names the file on every line.
    // With a canary shellcheck must flag (an unquoted expansion, SC2086), to prove it really ran.
    const canarySh = path.join(work, 'canary.sh');
    fs.writeFileSync(canarySh, '#!/bin/bash\necho $1\n');
    // SC1091 (a sourced file not followed): the code holds the libraries whole, and each script's `source` of
    // lib/checkout.sh, for a run from a checkout, never runs there (the libraries are defined above it); the assets
    // are checked below with -x, which follows it.
    const sc = run('shellcheck', ['-S', 'style', '-e', 'SC1091', '-f', 'gcc', ...scripts.map((s) => s.file), canarySh]);
    check('shellcheck flags a canary script', sc.out.includes(`${canarySh}:2:6:`) && sc.out.includes('[SC2086]'));
    const seen = new Map<string, string>(); // findings text -> first script that had it
    for (const s of scripts) {
      const mine = sc.out.split('\n').filter((l) => l.startsWith(`${s.file}:`)).map((l) => l.slice(s.file.length + 1));
      const text = mine.join('\n');
      const first = seen.get(text);
      if (!first) seen.set(text, s.name);
      check(`shellcheck ${s.name}`, mine.length === 0, first && text ? `same ${mine.length} findings as ${first}` : text);
    }
    check('shellcheck (user data) exit status', sc.status === 0 || sc.status === 1, sc.status > 1 ? sc.out : '');
  }

  console.log('== shellcheck assets');
  const assets = execFileSync('find', ['assets', '-name', '*.sh', '-type', 'f'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n').filter(Boolean).sort();
  const sa = run('shellcheck', ['-x', '-S', 'style', '-f', 'gcc', ...assets]);
  for (const a of assets) {
    const mine = sa.out.split('\n').filter((l) => l.startsWith(`${a}:`));
    check(`shellcheck ${a}`, mine.length === 0, mine.join('\n'));
  }
  check('shellcheck (assets) exit status', sa.status === 0 || sa.status === 1, sa.status > 1 ? sa.out : '');
  check('assets found', assets.length > 0, `${assets.length} scripts`);
  // The generated list of instance types that encrypt in transit is what the generator makes of the pinned moto's
  // DescribeInstanceTypes data (its wheel from PyPI, with the venv's pip).
  const eit = run(path.join('.venv', 'bin', 'python'), ['tools/encryption-in-transit-types.py', '--check']);
  check('lib/instance/encryption-in-transit.ts is what tools/encryption-in-transit-types.py generates', eit.status === 0, eit.out.trim());
  // The same for the instance types that support ENA Express.
  const ena = run(path.join('.venv', 'bin', 'python'), ['tools/ena-express-types.py', '--check']);
  check('lib/instance/ena-express-types.ts is what tools/ena-express-types.py generates', ena.status === 0, ena.out.trim());
  // The EC2 prices docs/sizing-and-cost.md gives (test/docs-prices.test.ts holds the page to the file) are what the
  // pinned Karpenter provider's generated prices say (its module zip from the Go module proxy).
  const prices = run(path.join('.venv', 'bin', 'python'), ['tools/ec2-prices.py', '--check']);
  check('docs/ec2-prices.json is what tools/ec2-prices.py reads from its source', prices.status === 0, prices.out.trim());
} catch (e) {
  check('gates ran', false, (e as Error).stack ?? String(e));
} finally {
  if (process.env.GATES_KEEP) console.log(`kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
}

console.log(`matrix: ${MATRIX.length} configurations, ${templateCount} templates, ${launchTemplateCount} launch templates, ` +
  `${instanceCount} instances with user data; ` +
  `checks: ${passed + failed}; runtime: ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (failures.length) console.log(`failed: ${failures.join(', ')}`);
console.log(`gates: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
