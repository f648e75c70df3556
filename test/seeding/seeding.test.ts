import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Duration, Size, Stack, Tags } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { CacheFleet, CacheOrigin, Capacity, DataSeeder, DataSeederProps, MountHelper, OriginFileSystem, SeedSource } from '../../lib';
import { importedFs, nagFindings, newApp, stackWithVpc } from '../util';
import { codeParameters, flatten, parameters, expand } from '../util/user-data';

/** A small directory to ship as an asset; content decides the asset hash. */
function assetDir(content = 'hello'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-seed-'));
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'sub', 'a.txt'), content);
  return dir;
}

type Source = (stack: Stack) => SeedSource;
const s3Source: Source = (stack) => SeedSource.s3(new s3.Bucket(stack, 'Data', { enforceSSL: true, serverAccessLogsPrefix: 'logs/' }), 'datasets/images');
const importedS3Source: Source = (stack) => SeedSource.s3(s3.Bucket.fromBucketName(stack, 'Imported', 'my-data-bucket'), 'raw/');
const assetSource: Source = () => SeedSource.asset(assetDir());
const instanceSource: Source = () => SeedSource.instanceDirectory('/srv/data');

function seeder(source: Source = instanceSource, props: Partial<DataSeederProps> = {}, app: App = newApp()) {
  const { stack, vpc } = stackWithVpc(app);
  const s = new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: source(stack), ...props });
  const t = Template.fromStack(stack);
  const [instanceId, instance] = Object.entries(t.findResources('AWS::EC2::Instance'))[0];
  const userData = flatten(instance.Properties.UserData, (k) => `<${k}>`);
  return { app, stack, seeder: s, t, instanceId, instance, userData, params: parameters(userData) };
}

describe('DataSeeder user data', () => {
  test('defaults: every parameter, EFS mounted with TLS and IAM, 50 workers of 100 files', () => {
    const { params, instanceId } = seeder();
    expect(params).toEqual({
      ...codeParameters(),
      EFSC_SOURCE_KIND: 'local',
      EFSC_SOURCE_URI: '/srv/data',
      EFSC_SOURCE_REGION: '',
      EFSC_EFS_SERVER: 'fs-0123456789abcdef0.efs.<Ref:AWS::Region>.<Ref:AWS::URLSuffix>',
      EFSC_MOUNT_TYPE: 'efs',
      EFSC_MOUNT_OPTIONS: 'tls,iam,nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport',
      EFSC_MOUNT_TIMEOUT_SEC: '300',
      EFSC_TARGET_PATH: '/',
      EFSC_WORKERS: '50',
      EFSC_FILES_PER_PART: '100',
      EFSC_DELETE_EXTRANEOUS: 'false',
      EFSC_PROGRESS_SEC: '30',
      EFSC_VERSION: '',
      EFSC_SIGNAL_STACK: 'TestStack',
      EFSC_SIGNAL_RESOURCE: instanceId,
      EFSC_SIGNAL_REGION: '<Ref:AWS::Region>',
    });
  });

  test.each<[string, Source, Record<string, string | RegExp>]>([
    ['a bucket of the stack', s3Source, { EFSC_SOURCE_KIND: 's3', EFSC_SOURCE_URI: 's3://<Ref:Data666C94C7>/datasets/images/', EFSC_SOURCE_REGION: '<Ref:AWS::Region>' }],
    ['an imported bucket', importedS3Source, { EFSC_SOURCE_KIND: 's3', EFSC_SOURCE_URI: 's3://my-data-bucket/raw/' }],
    ['an asset', assetSource, { EFSC_SOURCE_KIND: 'asset', EFSC_SOURCE_URI: /^s3:\/\/<Fn::Sub:"cdk-hnb659fds-assets-\$\{AWS::AccountId\}-\$\{AWS::Region\}">\/[0-9a-f]{64}\.zip$/ }],
    ['an instance directory', instanceSource, { EFSC_SOURCE_KIND: 'local', EFSC_SOURCE_URI: '/srv/data' }],
  ])('source: %s', (_name, source, expected) => {
    const { params } = seeder(source);
    for (const [k, v] of Object.entries(expected)) {
      if (typeof v === 'string') expect(params[k]).toBe(v);
      else expect(params[k]).toMatch(v);
    }
  });

  test('props reach the script: target, workers, files per part, delete, version, plain NFS, timeouts', () => {
    const { params } = seeder(instanceSource, {
      targetPath: '/datasets/v2',
      workers: 16,
      filesPerPart: 2000,
      deleteExtraneous: true,
      version: 'v2.1',
      mountHelper: MountHelper.NFS,
      mountTimeout: Duration.minutes(1),
      progressInterval: Duration.seconds(5),
    });
    expect(params).toMatchObject({
      EFSC_TARGET_PATH: '/datasets/v2',
      EFSC_WORKERS: '16',
      EFSC_FILES_PER_PART: '2000',
      EFSC_DELETE_EXTRANEOUS: 'true',
      EFSC_VERSION: 'v2.1',
      EFSC_MOUNT_TYPE: 'nfs4',
      EFSC_MOUNT_OPTIONS: 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport',
      EFSC_MOUNT_TIMEOUT_SEC: '60',
      EFSC_PROGRESS_SEC: '5',
    });
  });

  test('the script with every library (the signal\'s among them), whole, from a user data under 16 KB (size printed)', () => {
    const { userData, seeder: s } = seeder(s3Source);
    expect(userData.startsWith('#!/bin/bash\nset -euo pipefail\n')).toBe(true);
    expect(expand(userData)).toContain('signal_cloudformation()');
    expect(expand(userData)).toMatch(/^\s+fpsync -v -n "\$EFSC_WORKERS" -f "\$EFSC_FILES_PER_PART"/m);
    expect(expand(userData)).toContain('# ---- cdk-efs-cache assets/seeding/seed.sh ----');
    expect(Buffer.byteLength(userData)).toBeLessThan(16 * 1024);
    expect(s.userDataBytes).toBeLessThan(16 * 1024);
    process.stdout.write(`data seeder user data: ${Buffer.byteLength(userData)} bytes (estimate with tokens: ${s.userDataBytes})\n`);
  });
});

describe('DataSeeder instance', () => {
  test('one instance: IMDSv2 only, encrypted gp3 root, terminates on shutdown, no SSH key, deploy waits for it', () => {
    const { t, instance } = seeder(instanceSource, { rootVolumeSize: Size.gibibytes(200), signalTimeout: Duration.hours(6) });
    t.resourceCountIs('AWS::EC2::Instance', 1);
    t.resourceCountIs('AWS::AutoScaling::AutoScalingGroup', 0);
    expect(instance.Properties).toMatchObject({
      InstanceType: 'm7g.xlarge',
      InstanceInitiatedShutdownBehavior: 'terminate',
      MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1, HttpEndpoint: 'enabled' },
      Monitoring: true,
      BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { Encrypted: true, VolumeType: 'gp3', VolumeSize: 200, DeleteOnTermination: true } }],
      ImageId: { Ref: expect.stringMatching(/al2023amikernel612arm64/) },
    });
    expect(instance.Properties.KeyName).toBeUndefined();
    expect(instance.CreationPolicy).toEqual({ ResourceSignal: { Count: 1, Timeout: 'PT6H' } });
  });

  test('x86_64 instance types get the x86_64 image', () => {
    const { instance } = seeder(instanceSource, { instanceType: new ec2.InstanceType('c6i.2xlarge') });
    expect(instance.Properties.ImageId.Ref).toMatch(/al2023amikernel612x8664/);
  });

  test('waits for the mount targets of a file system created in the stack', () => {
    const { stack, vpc } = stackWithVpc();
    const origin = new OriginFileSystem(stack, 'Origin', { vpc });
    new DataSeeder(stack, 'Seeder', { vpc, fileSystem: origin.fileSystem, source: SeedSource.instanceDirectory('/srv/data') });
    const [instance] = Object.values(Template.fromStack(stack).findResources('AWS::EC2::Instance'));
    expect(instance.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^OriginEfsMountTargetPrivateSubnet1/), expect.stringMatching(/^OriginEfsMountTargetPrivateSubnet2/)]));
  });

  test('a change of source, version, settings or tags replaces the instance; the same props keep it', () => {
    const id = (source: Source, props: Partial<DataSeederProps> = {}, tag?: string) => {
      const app = newApp();
      if (tag) Tags.of(app).add('team', tag);
      return seeder(source, props, app).instanceId;
    };
    const base = id(instanceSource);
    expect(base).toMatch(/^SeederInstance[0-9A-F]{8}[0-9A-F]{16}$/);
    expect(id(instanceSource)).toBe(base);
    const changed = [
      id(instanceSource, { version: '2' }),
      id(instanceSource, { workers: 8 }),
      id(instanceSource, { targetPath: '/other' }),
      id(() => SeedSource.instanceDirectory('/srv/other')),
      id(instanceSource, {}, 'x'),
    ];
    expect(new Set([base, ...changed]).size).toBe(changed.length + 1);
    const dir = assetDir('one');
    const a1 = id(() => SeedSource.asset(dir));
    expect(id(() => SeedSource.asset(dir))).toBe(a1);
    fs.writeFileSync(path.join(dir, 'sub', 'a.txt'), 'two');
    expect(id(() => SeedSource.asset(dir))).not.toBe(a1);
  });

  test('the signal names the instance by its final logical id', () => {
    const { params, instanceId } = seeder(instanceSource, { version: 'x' });
    expect(params.EFSC_SIGNAL_RESOURCE).toBe(instanceId);
  });
});

describe('DataSeeder access', () => {
  // One statement per resource: IAM merges the code's object (every instance reads its bootstrap code) into a
  // statement of the same action.
  const statements = (t: Template) => Object.values(t.findResources('AWS::IAM::ManagedPolicy'))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>)
    .flatMap((st) => (Array.isArray(st.Resource) ? st.Resource.map((r: unknown) => ({ ...st, Resource: r })) : [st]));
  /** The statements other than the read of the code's object (whose key is EFSC_CODE_KEY). */
  const besidesCode = (t: Template, params: Record<string, string>) => {
    const all = statements(t);
    const code = all.filter((st) => JSON.stringify(st.Resource).includes(`/${params.EFSC_CODE_KEY}"`));
    expect(code).toHaveLength(1);
    expect(code[0].Action).toBe('s3:GetObject');
    return all.filter((st) => st !== code[0]);
  };

  test('S3 prefix: list the bucket under the prefix and read the objects under it, nothing more', () => {
    const { t, params } = seeder(s3Source);
    const st = besidesCode(t, params);
    expect(st).toEqual(expect.arrayContaining([
      { Action: 's3:ListBucket', Effect: 'Allow', Resource: { 'Fn::GetAtt': ['Data666C94C7', 'Arn'] }, Condition: { StringLike: { 's3:prefix': ['datasets/images/*'] } } },
      { Action: 's3:GetObject', Effect: 'Allow', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Data666C94C7', 'Arn'] }, '/datasets/images/*']] } },
    ]));
    expect(JSON.stringify(st)).not.toMatch(/"s3:\*"|"s3:GetObject\*"|"s3:List\*"|"Action":"\*"|s3:PutObject|s3:Delete/);
  });

  test('a KMS-encrypted bucket: decrypt with its key', () => {
    const { t } = seeder((stack) => SeedSource.s3(new s3.Bucket(stack, 'Data', {
      encryption: s3.BucketEncryption.KMS, encryptionKey: new kms.Key(stack, 'Key', { enableKeyRotation: true }), enforceSSL: true,
    })));
    expect(JSON.stringify(statements(t))).toMatch(/"kms:Decrypt"/);
  });

  test('asset: read exactly its one object', () => {
    const { t, params } = seeder(assetSource);
    const get = besidesCode(t, params).filter((s) => JSON.stringify(s.Action).includes('s3:'));
    expect(get).toHaveLength(1);
    expect(get[0].Action).toBe('s3:GetObject');
    const key = params.EFSC_SOURCE_URI.split('/').pop();
    expect(JSON.stringify(get[0].Resource)).toContain(`/${key}`);
    expect(JSON.stringify(get[0].Resource)).not.toContain('*');
  });

  test('EFS: mount and write as root on that file system; the signal on its own stack; no S3 for a local source but its code', () => {
    const { t, params } = seeder(instanceSource);
    const st = besidesCode(t, params);
    expect(st).toEqual(expect.arrayContaining([
      expect.objectContaining({
        Action: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientRootAccess', 'elasticfilesystem:ClientWrite'],
        Resource: expect.objectContaining({ 'Fn::Join': expect.anything() }),
      }),
      expect.objectContaining({ Action: 'cloudformation:SignalResource' }),
    ]));
    expect(JSON.stringify(st)).toContain(':elasticfilesystem:');
    expect(JSON.stringify(st)).toContain('file-system/fs-0123456789abcdef0');
    expect(JSON.stringify(st)).not.toMatch(/s3:/);
    // Only its own customer managed policy: no AWS managed policy, no inline policy (NIST 800-53 R5 IAMNoInlinePolicy).
    t.resourceCountIs('AWS::IAM::Policy', 0);
    t.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: [{ Ref: Match.stringLikeRegexp('RolePolicy') }] });
  });

  test('network: nothing inbound; HTTPS out, and NFS to the file system only', () => {
    const { t } = seeder(instanceSource);
    t.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('EFS data seeder'),
      SecurityGroupIngress: Match.absent(),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: '0.0.0.0/0', FromPort: 443, ToPort: 443, IpProtocol: 'tcp' })],
    });
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: 'sg-0123456789abcdef0', FromPort: 2049, ToPort: 2049 });
    t.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { DestinationSecurityGroupId: 'sg-0123456789abcdef0', FromPort: 2049, ToPort: 2049 });
  });

  test.each<[string, Source]>([
    ['an S3 bucket of the stack', s3Source],
    ['an imported bucket', importedS3Source],
    ['an asset', assetSource],
    ['an instance directory', instanceSource],
  ])('cdk-nag AwsSolutions and NIST 800-53 R5: no unacknowledged finding (%s)', (_name, source) => {
    // The test's own source bucket (TestStack/Data) stands for the user's: NIST's S3 rules about it are not ours.
    const findings = nagFindings(seeder(source).app, ['AwsSolutions', 'NIST']).filter((f) => !f.startsWith('NIST.800.53.R5-S3') || !f.includes(' @ TestStack/Data/'));
    expect(findings).toEqual([]);
  });

  test('cdk-nag: no finding next to launch templates either (cdk-nag\'s EBS rule throws on plain instances there)', () => {
    const app = newApp();
    const { stack, vpc } = stackWithVpc(app);
    new ec2.LaunchTemplate(stack, 'Other', {
      requireImdsv2: true,
      blockDevices: [{ deviceName: '/dev/xvda', volume: ec2.BlockDeviceVolume.ebs(8, { encrypted: true }) }],
    });
    new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: instanceSource(stack) });
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});

describe('CacheFleet on-demand warming', () => {
  const fleet = (warmPaths?: string[]) => {
    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), ...(warmPaths ? { warming: { paths: warmPaths } } : {}) });
    return { f, t: Template.fromStack(stack) };
  };

  test('with warm paths: an SSM Command document runs the nodes\' warm command', () => {
    const { f, t } = fleet(['/efs/models']);
    t.resourceCountIs('AWS::SSM::Document', 1);
    t.hasResourceProperties('AWS::SSM::Document', {
      DocumentType: 'Command',
      UpdateMethod: 'NewVersion',
      Content: {
        schemaVersion: '2.2',
        mainSteps: [{ action: 'aws:runShellScript', name: 'warm', inputs: { runCommand: ['/usr/local/sbin/efs-cache-warm'], timeoutSeconds: '21600' } }],
      },
    });
    expect(f.warmDocument).toBeDefined();
    // The command it runs is the one the node bootstrap installs (and runs at boot and on the re-warm timer).
    expect(fs.readFileSync(path.join(__dirname, '..', '..', 'assets', 'cache-node', 'bootstrap.sh'), 'utf8')).toContain('/usr/local/sbin/efs-cache-warm');
  });

  test('without warm paths: no document', () => {
    const { f, t } = fleet();
    t.resourceCountIs('AWS::SSM::Document', 0);
    expect(f.warmDocument).toBeUndefined();
  });
});
