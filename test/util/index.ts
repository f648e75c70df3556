import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Environment, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks } from 'cdk-nag';

/** The context of cdk.json (feature flags, telemetry off), so tests see what `cdk synth` sees. */
export const CDK_CONTEXT: Record<string, unknown> = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'),
).context;

/** A new App with the project's context and a throwaway output folder. */
export function newApp(): App {
  return new App({ context: CDK_CONTEXT, outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-test-')) });
}

/**
 * A stack with a two-AZ VPC (private subnets with egress), env-agnostic like the sample unless `env` is given. The VPC stands for the
 * user's network: its own cdk-nag findings (no flow logs, public subnets with an internet route) are acknowledged on
 * its constructs, so a nag test sees what the construct under test adds. The sample stack and the gates check a
 * complete network instead (bin/sample-stack.ts `sampleNetwork`).
 */
export function stackWithVpc(app: App = newApp(), id = 'TestStack', env?: Environment): { app: App; stack: Stack; vpc: ec2.Vpc } {
  const stack = new Stack(app, id, { env });
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
  const reason = 'The bare VPC of unit tests, standing for the user\'s network; the sample stack checks a complete one.';
  Validations.of(vpc).acknowledge(
    { id: 'AwsSolutions-VPC7', reason },
    ...['NIST.800.53.R5', 'HIPAA.Security'].map((pack) => ({ id: `${pack}-VPCFlowLogsEnabled`, reason })),
  );
  for (const subnet of vpc.publicSubnets) {
    Validations.of(subnet).acknowledge(...['NIST.800.53.R5', 'HIPAA.Security'].flatMap((pack) => [
      { id: `${pack}-VPCNoUnrestrictedRouteToIGW`, reason },
      { id: `${pack}-VPCSubnetAutoAssignPublicIpDisabled`, reason },
    ]));
  }
  return { app, stack, vpc };
}

/** One finding of a rule pack: `RuleName @ construct/path`. */
export type Finding = string;

/**
 * Runs cdk-nag (AwsSolutions, and NIST 800-53 R5 and HIPAA Security when asked) over the app and returns every unacknowledged finding
 * (`Validations.of(construct).acknowledge`, on the resource or any scope above it, hides one).
 *
 * The packs are invoked directly on the construct tree (`validateScope`), after a synthesis has run the app's
 * aspects, rather than through the policy validation of `app.synth()`: an app that was already synthesized (for
 * example by `Template.fromStack`) returns its cached assembly and reports nothing, which would pass for clean.
 */
export function nagFindings(app: App, packs: NagPack[] = ['AwsSolutions']): Finding[] {
  app.synth();
  const plugins = [
    ...(packs.includes('AwsSolutions') ? [new AwsSolutionsChecks()] : []),
    ...(packs.includes('NIST') ? [new NIST80053R5Checks()] : []),
    ...(packs.includes('HIPAA') ? [new HIPAASecurityChecks()] : []),
  ];
  const findings: Finding[] = [];
  for (const plugin of plugins) {
    for (const v of plugin.validateScope(app).violations) {
      for (const r of v.violatingResources) findings.push(`${v.ruleName} @ ${r.constructPath}`);
    }
  }
  return findings.sort();
}

/** The cdk-nag rule packs the tests and gates apply. */
export type NagPack = 'AwsSolutions' | 'NIST' | 'HIPAA';

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
