import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SAMPLE_SIZES, sampleSize, SampleSize, SampleStack } from '../bin/sample-stack';
import { CDK_CONTEXT, nagFindings, newApp, stripVolatile } from './util';

/** The instance types of a synthesized sample: its cache nodes' launch template and its clients'. */
function instanceTypes(template: any): { nodes: string; clients: string } {
  const of = (prefix: string) => {
    const ids = Object.keys(template.Resources).filter((id) => id.startsWith(prefix) &&
      template.Resources[id].Type === 'AWS::EC2::LaunchTemplate');
    expect(ids).toHaveLength(1);
    return template.Resources[ids[0]].Properties.LaunchTemplateData.InstanceType;
  };
  return { nodes: of('SharedDataCacheFleetLaunchTemplate'), clients: of('SharedDataClients') };
}

/** Every annotation (error, warning, info) of a stack, as `level path: message`. */
function annotations(stack: Stack): string[] {
  const a = Annotations.fromStack(stack);
  const any = Match.anyValue();
  return [...a.findError('*', any), ...a.findWarning('*', any), ...a.findInfo('*', any)]
    .map((m) => `${m.level} ${m.id}: ${JSON.stringify(m.entry.data)}`);
}

/**
 * Runs the sample app (bin/sample-app.ts) as `cdk synth` would, with cdk.json's context and `context`: its exit status,
 * stderr and template.
 */
function runSampleApp(context: Record<string, unknown>): { status: number | null; stderr: string; template?: any } {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-sample-app-'));
  try {
    const tsNode = require.resolve('ts-node/dist/bin');
    const run = spawnSync(process.execPath, [tsNode, '--transpile-only', 'bin/sample-app.ts'], {
      cwd: path.join(__dirname, '..'),
      // What the CDK CLI hands the app: cdk.json's context and the -c pairs as CDK_CONTEXT_JSON, the output folder as
      // CDK_OUTDIR.
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify({ ...CDK_CONTEXT, ...context }),
        CDK_OUTDIR: outdir,
        CDK_VALIDATION: 'false',
      },
      encoding: 'utf8',
    });
    const file = path.join(outdir, 'EfsCacheSample.template.json');
    const template = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined;
    return { status: run.status, stderr: run.stderr, template };
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

describe('the sample stack', () => {
  test('matches its snapshot (volatile values stripped)', () => {
    const app = newApp();
    const stack = new SampleStack(app, 'EfsCacheSample');
    expect(stripVolatile(Template.fromStack(stack).toJSON())).toMatchSnapshot();
  });

  test('has no 0.0.0.0/0 ingress and opens only TCP 2049 between peers', () => {
    const app = newApp();
    const stack = new SampleStack(app, 'EfsCacheSample');
    const t = Template.fromStack(stack).toJSON();
    const rules: Array<Record<string, unknown>> = [];
    for (const r of Object.values<any>(t.Resources)) {
      if (r.Type === 'AWS::EC2::SecurityGroupIngress') rules.push(r.Properties);
      if (r.Type === 'AWS::EC2::SecurityGroup') rules.push(...(r.Properties.SecurityGroupIngress ?? []));
    }
    for (const rule of rules) {
      expect(rule.CidrIp).not.toBe('0.0.0.0/0');
      expect(rule.CidrIpv6).not.toBe('::/0');
      expect(rule).toMatchObject({ IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049 });
    }
  });

  test('the cdk-nag helper sees findings, also in an app that was synthesized before', () => {
    const app = newApp();
    const stack = new Stack(app, 'Bare');
    new sns.Topic(stack, 'Topic');
    Template.fromStack(stack);
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual(expect.arrayContaining([
      'AwsSolutions-SNS3 @ Bare/Topic/Resource',
      'NIST.800.53.R5-SNSEncryptedKMS @ Bare/Topic/Resource',
    ]));
  });

  test.each(SAMPLE_SIZES)('cdk-nag AwsSolutions, NIST 800-53 R5 and HIPAA: no unacknowledged finding (%s)', (size) => {
    const app = newApp();
    new SampleStack(app, 'EfsCacheSample', { size });
    expect(nagFindings(app, ['AwsSolutions', 'NIST', 'HIPAA'])).toEqual([]);
  });
});

describe('the sample stack\'s sizes', () => {
  const synth = (size?: SampleSize) => {
    const stack = new SampleStack(newApp(), 'EfsCacheSample', size ? { size } : {});
    return { stack, template: Template.fromStack(stack).toJSON() };
  };

  test('is the trial size by default: c7gn.large nodes, m6id.large clients, two nodes', () => {
    const { stack, template } = synth();
    expect(stack.size).toBe('trial');
    expect(instanceTypes(template)).toEqual({ nodes: 'c7gn.large', clients: 'm6id.large' });
    const nodeGroups = Object.keys(template.Resources).filter((id) => /^SharedDataCacheFleetNode\dGroupASG/.test(id));
    expect(nodeGroups).toHaveLength(2);
    expect(synth('trial').template).toEqual(template);
  });

  test('production is the library\'s defaults: c7gn.16xlarge nodes, m6id.xlarge clients', () => {
    expect(instanceTypes(synth('production').template)).toEqual({ nodes: 'c7gn.16xlarge', clients: 'm6id.xlarge' });
  });

  test('the sizes differ in their instance types only: the same logical ids, no annotation in either', () => {
    const trial = synth('trial');
    const production = synth('production');
    const ids = (t: any) => Object.entries<any>(t.Resources).map(([id, r]) => `${id} ${r.Type}`).sort();
    expect(ids(trial.template)).toEqual(ids(production.template));
    // Instance types, and the nfsd threads the library derives from the nodes' vCPUs (2 per vCPU, at least 8).
    const normalized = (t: any) => JSON.stringify(t)
      .replace(/"(c7gn\.large|c7gn\.16xlarge|m6id\.large|m6id\.xlarge)"/g, '"[TYPE]"')
      .replace(/EFSC_NFSD_THREADS='\d+'/g, 'EFSC_NFSD_THREADS=[N]');
    expect(normalized(trial.template)).toEqual(normalized(production.template));
    expect(JSON.stringify(trial.template)).toContain('EFSC_NFSD_THREADS=\'8\'');
    expect(JSON.stringify(production.template)).toContain('EFSC_NFSD_THREADS=\'128\'');
    expect(annotations(trial.stack)).toEqual([]);
    expect(annotations(production.stack)).toEqual([]);
  });

  test('a size other than trial and production is refused, naming the accepted values', () => {
    expect(sampleSize(undefined)).toBe('trial');
    expect(sampleSize('production')).toBe('production');
    for (const bad of ['huge', 'Production', '', 1, true]) {
      expect(() => sampleSize(bad)).toThrow(/^Invalid size: .* give 'trial' \(the default\) or 'production'\.$/);
    }
    const huge = 'huge' as SampleSize;
    expect(() => new SampleStack(newApp(), 'EfsCacheSample', { size: huge })).toThrow(/Invalid size: "huge"/);
  });

  test('the sample app reads -c size: production, and a bad value fails synth with the message', () => {
    const production = runSampleApp({ size: 'production' });
    expect(instanceTypes(production.template)).toEqual({ nodes: 'c7gn.16xlarge', clients: 'm6id.xlarge' });
    const bad = runSampleApp({ size: 'huge' });
    expect(bad.status).not.toBe(0);
    expect(bad.template).toBeUndefined();
    expect(bad.stderr).toContain('Invalid size: "huge" is not a size of the sample stack (the context value ' +
      '-c size=..., or SampleStackProps.size): give \'trial\' (the default) or \'production\'.');
  }, 120_000);
});
