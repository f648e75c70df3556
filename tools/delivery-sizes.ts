/**
 * The user data bytes of the largest node of the gates' matrix (NFSv3, the disk cache, two mirrors, warming) under
 * each way of delivering its code, measured on what this checkout renders:
 *   - asset: what the library renders (parameters, the code's bucket, key and sha256, the loader);
 *   - inline gzip+base64: the code compacted, gzipped and base64-encoded into the user data (the delivery before);
 *   - whole user data gzipped: the header and the code gzipped together, no base64 (cloud-init accepts gzip user
 *     data), which needs every deploy-time value out of the user data (read from tags at boot instead);
 *   - plain: the compacted code as text.
 * Deploy-time values count as the gates count them (the bucket, region and URL suffix of us-east-1 in account
 * 123456789012). Run: `npx ts-node -P tsconfig.json tools/delivery-sizes.ts`.
 */
import * as zlib from 'zlib';
import { App, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { CacheFleet, CacheOrigin, Capacity, Mirror, NfsVersion } from '../lib';
import { renderedCode } from '../lib/instance/user-data';
import { resolveUserData, PSEUDO_VALUES, CfnTemplate } from '../test/heavy/lab/harness/user-data';
import { Template } from 'aws-cdk-lib/assertions';
import * as efs from 'aws-cdk-lib/aws-efs';

const app = new App();
const stack = new Stack(app, 'Sizes');
const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2 });
const fileSystem = efs.FileSystem.fromFileSystemAttributes(stack, 'Fs', {
  fileSystemId: 'fs-0123456789abcdef0', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FsSg', 'sg-0123456789abcdef0'),
});
const fleet = new CacheFleet(stack, 'Fleet', {
  vpc, origin: CacheOrigin.efs(fileSystem), capacity: Capacity.nodes(2), instanceType: new ec2.InstanceType('c7gd.16xlarge'), clientNfsVersion: NfsVersion.NFS_V3,
  mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www')], warming: { paths: ['/efs/models'] },
});
const template = Template.fromStack(stack).toJSON() as CfnTemplate;
const id = stack.getLogicalId(fleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate);
const userData = resolveUserData(template, id, { ...PSEUDO_VALUES, [`Fn::GetAtt:${stack.getLogicalId(vpc.node.defaultChild as ec2.CfnVPC)}.CidrBlock`]: '10.0.0.0/16' });
const code = renderedCode(userData);
const header = userData.slice(0, userData.indexOf('set +a\n') + 'set +a\n'.length)
  .split('\n').filter((l) => !l.startsWith('EFSC_CODE_')).join('\n');
const gz = zlib.gzipSync(Buffer.from(code), { level: 9 });
const rows: Array<[string, number]> = [
  ['asset (the library now)', Buffer.byteLength(userData)],
  ['inline gzip+base64 (before)', Buffer.byteLength(header) + Buffer.byteLength(`efs_cache_code="$(base64 -d <<<'${gz.toString('base64')}' | gunzip)"\neval "$efs_cache_code"\n`)],
  ['whole user data gzipped', zlib.gzipSync(Buffer.from(header + code), { level: 9 }).length],
  ['plain compacted code', Buffer.byteLength(header) + Buffer.byteLength(code)],
];
console.log(`largest node (NFSv3, disk cache, 2 mirrors, warming): code ${Buffer.byteLength(code)} bytes compacted, ${gz.length} gzipped`);
for (const [name, bytes] of rows) console.log(`${name.padEnd(30)} ${String(bytes).padStart(6)} bytes, ${String(16384 - bytes).padStart(6)} left of 16384`);
