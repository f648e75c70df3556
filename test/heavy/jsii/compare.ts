/**
 * Compares a sample app's template in another language (test/heavy/jsii/app.py, test/heavy/jsii/go/main.go: synthesized into the
 * folder given as the first argument; the second names the language, Python by default) with the TypeScript sample
 * stack's (bin/sample-stack.ts, synthesized here, of its default size, trial): the same number of resources of every
 * type, the same logical ids, the same instance types (the sizes differ in those only) and the same outputs, each
 * reported as one check. Ends with `compare: N passed, M failed`.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { SampleStack } from '../../../bin/sample-stack';

type Cfn = { Resources?: Record<string, { Type: string; Properties?: any }>; Outputs?: Record<string, unknown> };

const outdir = process.argv[2];
const language = process.argv[3] ?? 'Python';
const other: Cfn = JSON.parse(fs.readFileSync(path.join(outdir, 'EfsCacheSample.template.json'), 'utf8'));
const app = new App();
const typescript = Template.fromStack(new SampleStack(app, 'EfsCacheSample', {
  description: 'cdk-efs-cache sample: EFS with a RAM cache tier and FS-Cache clients',
})).toJSON() as Cfn;

const counts = (t: Cfn) => {
  const c: Record<string, number> = {};
  for (const r of Object.values(t.Resources ?? {})) c[r.Type] = (c[r.Type] ?? 0) + 1;
  return c;
};
let passed = 0;
let failed = 0;
const check = (name: string, ok: boolean, detail: string) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `: ${detail}`}`);
  if (ok) passed++; else failed++;
};

const ts = counts(typescript);
const them = counts(other);
const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
check(`resources: ${total(them)} in ${language}, ${total(ts)} in TypeScript`, total(them) === total(ts) && total(ts) > 0,
  'the totals differ');
for (const type of [...new Set([...Object.keys(ts), ...Object.keys(them)])].sort()) {
  check(`${type}: ${them[type] ?? 0} = ${ts[type] ?? 0}`, them[type] === ts[type], 'the counts differ');
}
const ids = (t: Cfn) => Object.keys(t.Resources ?? {}).sort();
const missing = ids(typescript).filter((id) => !ids(other).includes(id));
const extra = ids(other).filter((id) => !ids(typescript).includes(id));
check('the same logical ids', missing.length === 0 && extra.length === 0, `missing ${missing.join(' ')}; extra ${extra.join(' ')}`);
/** The instance type of every launch template and instance, by logical id. */
const instanceTypes = (t: Cfn) => Object.entries(t.Resources ?? {}).flatMap(([id, r]) => {
  const type = r.Type === 'AWS::EC2::LaunchTemplate' ? r.Properties?.LaunchTemplateData?.InstanceType
    : r.Type === 'AWS::EC2::Instance' ? r.Properties?.InstanceType : undefined;
  return type === undefined ? [] : [`${id}: ${JSON.stringify(type)}`];
}).sort().join(', ');
check('the same instance types', instanceTypes(other) === instanceTypes(typescript),
  `${language} ${instanceTypes(other)}; TypeScript ${instanceTypes(typescript)}`);
check('the same outputs', JSON.stringify(Object.keys(other.Outputs ?? {}).sort()) === JSON.stringify(Object.keys(typescript.Outputs ?? {}).sort()),
  'the outputs differ');
console.log(`compare: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
