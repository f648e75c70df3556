// The quick start as a user writes it, without alarmTopic, in a fresh app with the packed library and cdk-nag from
// the registry: NIST 800-53 R5 and HIPAA Security must report nothing on what the library built (the dashboard's
// alarms have no action without a topic; the library acknowledges that rule on each alarm, with why). Findings on the
// user's own VPC are the user's and are not counted. test/heavy/package/pack-and-synth.sh runs it in the app with the
// newest aws-cdk-lib (cdk-nag 3 needs a newer constructs than the lowest the package supports).
// Usage: node consumer-nag.js OUTDIR
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CachedFileSystem, Capacity } from 'cdk-efs-cache';
import { HIPAASecurityChecks, NIST80053R5Checks } from 'cdk-nag';

const outdir = process.argv[2];
if (!outdir) throw new Error('usage: node consumer-nag.js OUTDIR');
const app = new App({ outdir });
const stack = new Stack(app, 'QuickStart');
const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
const data = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(2) } });
data.addClientLaunchTemplate('Clients');
app.synth();

const alarms = Object.values<{ Type: string }>(app.synth().getStackByName('QuickStart').template.Resources)
  .filter((r) => r.Type === 'AWS::CloudWatch::Alarm').length;
const library: string[] = [];
let users = 0;
for (const pack of [new NIST80053R5Checks(), new HIPAASecurityChecks()]) {
  for (const v of pack.validateScope(app).violations) {
    for (const r of v.violatingResources) {
      const at = r.constructPath ?? '';
      if (at.startsWith('QuickStart/Vpc/')) users++;
      else library.push(`${v.ruleName} @ ${at}`);
    }
  }
}
if (alarms === 0) library.push('no CloudWatch alarm: the dashboard was not built');
if (library.length > 0) {
  console.error(`consumer nag: FAIL, findings on the library's constructs:\n  ${library.join('\n  ')}`);
  process.exit(1);
}
console.log(`consumer nag: NIST 800-53 R5 and HIPAA report nothing on the library's constructs (${alarms} alarms, no alarmTopic; ` +
  `${users} findings on the user's own VPC, not counted)`);
