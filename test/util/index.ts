import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import { AwsSolutionsChecks, NIST80053R5Checks } from 'cdk-nag';

/** The context of cdk.json (feature flags, telemetry off), so tests see what `cdk synth` sees. */
export const CDK_CONTEXT: Record<string, unknown> = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'),
).context;

/** A new App with the project's context and a throwaway output folder. */
export function newApp(): App {
  return new App({ context: CDK_CONTEXT, outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-test-')) });
}

/** A stack with a two-AZ VPC (private subnets with egress), env-agnostic like the sample. */
export function stackWithVpc(app: App = newApp(), id = 'TestStack'): { app: App; stack: Stack; vpc: ec2.Vpc } {
  const stack = new Stack(app, id);
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
  return { app, stack, vpc };
}

/** One finding of a rule pack: `RuleName @ construct/path`. */
export type Finding = string;

/**
 * Runs cdk-nag (AwsSolutions, and NIST 800-53 R5 when asked) over the app through CDK's policy validation and
 * returns every unacknowledged finding. Acknowledged findings are not reported by CDK.
 */
export function nagFindings(app: App, packs: Array<'AwsSolutions' | 'NIST'> = ['AwsSolutions']): Finding[] {
  const plugins = [];
  if (packs.includes('AwsSolutions')) plugins.push(new AwsSolutionsChecks(app));
  if (packs.includes('NIST')) plugins.push(new NIST80053R5Checks(app));
  Validations.of(app).addPlugins(...plugins);
  // CDK prints the validation report while synthesizing; the findings are read from the report file instead.
  const { log, error } = console;
  console.log = console.error = () => undefined;
  try {
    app.synth();
  } catch (e) {
    if (!/validation ?failed/i.test(`${(e as Error).name} ${(e as Error).message}`)) throw e;
  } finally {
    Object.assign(console, { log, error });
  }
  const report = JSON.parse(fs.readFileSync(path.join(app.outdir, 'validation-report.json'), 'utf8'));
  const findings: Finding[] = [];
  for (const plugin of report.pluginReports ?? []) {
    for (const v of plugin.violations ?? []) {
      for (const c of v.violatingConstructs ?? []) findings.push(`${v.ruleName} @ ${c.constructPath}`);
    }
  }
  return findings.sort();
}

/**
 * Replaces asset hashes, and the user data (scripts, asserted by their own tests and run in the lab), so snapshots
 * change only when the template's resources do.
 */
export function stripVolatile(template: unknown): unknown {
  return JSON.parse(
    JSON.stringify(template).replace(/[0-9a-f]{64}(\.zip|\.json)?/g, '[HASH]$1'),
    (key, value) => (key === 'UserData' ? '[user data]' : value),
  );
}

/** An imported file system (fs-0123456789abcdef0) with an imported security group, as users pass existing ones. */
export function importedFs(stack: Stack): efs.IFileSystem {
  return efs.FileSystem.fromFileSystemAttributes(stack, 'Efs', {
    fileSystemId: 'fs-0123456789abcdef0',
    securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'EfsSg', 'sg-0123456789abcdef0'),
  });
}
