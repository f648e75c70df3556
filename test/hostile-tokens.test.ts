/**
 * Props given as tokens (a CfnParameter, an SSM value, an import) are known only at deploy time and skip synth-time
 * validation, so their resolved values reach root user data unchecked. Whatever they resolve to must stay data:
 * these tests resolve the synthesized user data of each tier with hostile parameter values, as CloudFormation would
 * (test/heavy/lab/harness resolveUserData, Fn::Base64 included), run it on this host in a sandbox
 * (test/util/run-script.ts), and show that nothing a value holds runs, and that the script's own check refuses the
 * value with a FATAL line naming the parameter.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CfnParameter, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountHelper,
  MountSource,
  NfsVersion,
  SeedSource,
} from '../lib';
import { CfnTemplate, PSEUDO_VALUES, resolveUserData, userDataResources } from './heavy/lab/harness/user-data';
import { newApp } from './util';
import { runScript, signals } from './util/run-script';

/** What a cache node's group tags its instance with (the node's identity). */
const NODE_TAGS = { 'cdk-efs-cache:signal-resource': 'FleetNode1GroupASG0123ABCD' };

/** Values that would run `touch <canary>` if the user data ever evaluated them as code. */
function hostileValues(canary: string): string[] {
  return [
    `x'; touch ${canary}; echo '`,
    `$(touch ${canary})`,
    `\`touch ${canary}\``,
    `10.0.0.0/8"; touch ${canary}; echo "`,
    `10.0.0.0/8\ntouch ${canary}`,
    `'$(touch ${canary})'\\`,
  ];
}

/** A stack whose tiers take their deploy-time values from template parameters. */
function parameterizedStack() {
  const app = newApp();
  const stack = new Stack(app, 'Hostile');
  const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
  const fsId = new CfnParameter(stack, 'FileSystemId', { type: 'String' });
  const cidr = new CfnParameter(stack, 'ClientCidr', { type: 'String' });
  const bucket = new CfnParameter(stack, 'SourceBucket', { type: 'String' });
  const nfsHost = new CfnParameter(stack, 'NfsHost', { type: 'String' });
  const fileSystem = efs.FileSystem.fromFileSystemAttributes(stack, 'Efs', {
    fileSystemId: fsId.valueAsString,
    securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'EfsSg', 'sg-0123456789abcdef0'),
  });
  const fleet = new CacheFleet(stack, 'Fleet', {
    vpc, origin: CacheOrigin.efs(fileSystem, { mountHelper: MountHelper.NFS }), capacity: Capacity.nodes(1), clientCidrs: [cidr.valueAsString],
  });
  // A fleet over an NFS server whose host is a deploy-time value (CacheOrigin.nfsServer), NFSv3 with mirrors: the
  // host reaches EFSC_ORIGIN_SERVER, which the mount unit and the mirrors' mounts name.
  const nfsFleet = new CacheFleet(stack, 'NfsFleet', {
    vpc, capacity: Capacity.nodes(1), clientCidrs: [cidr.valueAsString], fanOut: FanOut.route53({ zoneName: 'nfs-cache.internal' }), mirrors: [Mirror.path('/efs/app')],
    origin: CacheOrigin.nfsServer({ host: nfsHost.valueAsString, exportPath: '/srv/data', nfsVersion: NfsVersion.NFS_V3, peer: ec2.Peer.ipv4('10.20.0.0/16') }),
  });
  const client = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(fileSystem), mountHelper: MountHelper.NFS });
  new DataSeeder(stack, 'Seeder', {
    vpc, fileSystem, mountHelper: MountHelper.NFS,
    source: SeedSource.s3(s3.Bucket.fromBucketName(stack, 'Src', bucket.valueAsString), 'data/'),
  });
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  return {
    template,
    node: stack.getLogicalId(fleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate),
    nfsNode: stack.getLogicalId(nfsFleet.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate),
    client: stack.getLogicalId(client.launchTemplate.node.defaultChild as ec2.CfnLaunchTemplate),
    seeder: userDataResources(template).find((r) => r.type === 'AWS::EC2::Instance' && r.logicalId.startsWith('Seeder'))!.logicalId,
  };
}

describe('user data with hostile token values', () => {
  const s = parameterizedStack();
  const good = { FileSystemId: 'fs-0123456789abcdef0', ClientCidr: '10.0.0.0/16', SourceBucket: 'my-bucket', NfsHost: 'nas.example.internal' };
  const ud = (logicalId: string, params: Record<string, string>) => {
    const values: Record<string, string> = { ...PSEUDO_VALUES as Record<string, string> };
    for (const [k, v] of Object.entries(params)) values[`Ref:${k}`] = v;
    for (const [rid, r] of Object.entries(s.template.Resources ?? {})) {
      if (r.Type === 'AWS::EC2::NetworkInterface') values[`Ref:${rid}`] = 'eni-0123456789abcdef0';
      if (r.Type === 'AWS::S3::Bucket') values[`Ref:${rid}`] = 'unused';
    }
    return resolveUserData(s.template, logicalId, values);
  };

  test('every user data of the stack is covered here', () => {
    expect(userDataResources(s.template).map((r) => r.logicalId).sort()).toEqual([s.client, s.node, s.nfsNode, s.seeder].sort());
  });

  // Which parameter reaches which tier's variable, and the FATAL line its check gives.
  const cases: [string, () => string, keyof typeof good, RegExp][] = [
    ['cache node', () => s.node, 'FileSystemId', /FATAL: EFSC_ORIGIN_SERVER='.*' is invalid: expected a host name or address/s],
    ['cache node', () => s.node, 'ClientCidr', /FATAL: EFSC_EXPORT_CLIENTS='.*' is invalid/s],
    ['cache node over an NFS server', () => s.nfsNode, 'NfsHost', /FATAL: EFSC_ORIGIN_SERVER='.*' is invalid: expected a host name or address/s],
    ['cache node over an NFS server', () => s.nfsNode, 'ClientCidr', /FATAL: EFSC_EXPORT_CLIENTS='.*' is invalid/s],
    ['client', () => s.client, 'FileSystemId', /FATAL: EFSC_NFS_SERVER='.*' is invalid: expected a DNS name or an IP address/s],
    ['seeder', () => s.seeder, 'FileSystemId', /FATAL: EFSC_EFS_SERVER='.*' is invalid: expected a host name or address/s],
    ['seeder', () => s.seeder, 'SourceBucket', /FATAL: EFSC_SOURCE_URI='.*' is invalid/s],
  ];

  test.each(cases)('%s: a hostile %s never runs and is refused by the check', (_tier, logicalId, param, fatal) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-canary-'));
    for (const [i, hostile] of hostileValues(path.join(dir, 'pwned')).entries()) {
      const script = ud(logicalId(), { ...good, [param]: hostile.replace('pwned', `pwned${i}`) });
      const run = runScript(script, [], { tags: NODE_TAGS });
      expect({ hostile, status: run.status, fatal: fatal.test(run.stderr) }).toEqual({ hostile, status: 1, fatal: true });
      // Nothing but the code's fetch, the metadata service, the signal and the journal was called: no package manager,
      // no mount.
      expect(run.calls.filter((c) => !/^(curl|aws cloudformation signal-resource|aws s3api get-object|logger|sleep) /.test(c))).toEqual([]);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('the same user data with good values passes the checks (the hostile runs failed on the value alone)', () => {
    // With good values the node's parameter checks pass and it goes on to install packages, which the sandbox refuses.
    for (const node of [s.node, s.nfsNode]) {
      const run = runScript(ud(node, good), [], { tags: NODE_TAGS });
      expect(run.stderr).not.toMatch(/is invalid/);
      expect(run.calls.some((c) => /^(dpkg-query|rpm) /.test(c))).toBe(true);
      expect(signals(run)).toEqual(['FAILURE']);
    }
  });
});
