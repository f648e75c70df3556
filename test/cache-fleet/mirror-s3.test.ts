import { Fn, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { CacheFleet, CacheFleetProps, CacheOrigin, FsCacheClientLaunchTemplate, Mirror, MountSource } from '../../lib';
import { mirrorFsid } from '../../lib/cache-fleet/mirror-paths';
import { renderedCode } from '../../lib/instance/user-data';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { launchTemplateUserData, parameters } from '../util/user-data';

const BUCKET = 'efsc-site-data';
const site = (stack: Stack, prefix = 'site/', name?: string) =>
  Mirror.s3(s3.Bucket.fromBucketName(stack, `Site${stack.node.children.length}`, BUCKET), prefix, { name });

function fleet(props: (stack: Stack) => Partial<CacheFleetProps>) {
  const { app, stack, vpc } = stackWithVpc();
  const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), ...props(stack) });
  const userData = Object.values(launchTemplateUserData(stack, (k) => (k.includes('CidrBlock') ? '10.0.0.0/16' : 'lab')))[0];
  return { app, stack, vpc, fleet: f, t: Template.fromStack(stack), userData, params: parameters(userData) };
}

/**
 * What the nodes' role may do in S3 and KMS, one grant a line: `<action> <resource> <condition>`, each resource of a
 * statement apart (IAM merges statements that differ only in their resources), ARNs flattened, the bootstrap code's
 * own object (`<sha256>.sh` in the assets bucket) left out.
 */
function s3Grants(t: Template): string[] {
  const text = (v: any): string => (typeof v === 'string' ? v : v?.['Fn::Join'] ? v['Fn::Join'][1].map(text).join('')
    : v?.Ref ? `{${v.Ref}}` : v?.['Fn::GetAtt'] ? `{${v['Fn::GetAtt'].join('.')}}` : JSON.stringify(v));
  return [...Object.values(t.findResources('AWS::IAM::Policy')), ...Object.values(t.findResources('AWS::IAM::ManagedPolicy'))]
    .flatMap((p: any) => p.Properties.PolicyDocument.Statement)
    .flatMap((st: any) => ([] as any[]).concat(st.Action).filter((a: string) => /^(s3|kms):/.test(a))
      .flatMap((a: string) => ([] as any[]).concat(st.Resource).map((r) => `${st.Effect} ${a} ${text(r)}${st.Condition ? ` ${JSON.stringify(st.Condition)}` : ''}`)))
    .filter((g: string) => !/\.sh$/.test(g))
    .sort();
}

describe('S3 mirrors (Mirror.s3)', () => {
  test('an S3 mirror is exported at /mirror/<name> with its own fsid, beside the path mirrors, and its parameters reach the nodes', () => {
    const { fleet: f, params, userData } = fleet((stack) => ({ mirrors: [Mirror.path('/efs/app'), site(stack), site(stack, 'docs/v1', 'manual')] }));
    expect(f.mirrorExports).toEqual([
      { path: '/efs/app', exportPath: '/mirror/app', fsid: mirrorFsid(f.node.path, '/efs/app') },
      { path: '/mirror/site', exportPath: '/mirror/site', fsid: mirrorFsid(f.node.path, '/mirror/site') },
      { path: '/mirror/manual', exportPath: '/mirror/manual', fsid: mirrorFsid(f.node.path, '/mirror/manual') },
    ]);
    expect(new Set(f.mirrorExports.map((m) => m.fsid)).size).toBe(3);
    expect(params).toMatchObject({
      EFSC_MIRROR_PATHS: '/efs/app',
      EFSC_MIRROR_S3_NAMES: 'site manual',
      EFSC_MIRROR_S3_FSIDS: `${mirrorFsid(f.node.path, '/mirror/site')} ${mirrorFsid(f.node.path, '/mirror/manual')}`,
      EFSC_MIRROR_S3_URIS: `s3://${BUCKET}/site/ s3://${BUCKET}/docs/v1/`,
      EFSC_MIRROR_S3_REGIONS: 'lab lab', // the stack's region, a deploy-time value here
    });
    expect(renderedCode(userData)).toMatch(/^mirror_s3_sync_one\(\) \{$/m);
  });

  test('the same fsid for the same fleet and name, whatever the bucket; a fleet with only an S3 mirror carries lib/mirror.sh and lib/mirror-s3.sh', () => {
    const a = fleet((stack) => ({ mirrors: [site(stack)] }));
    const b = fleet((stack) => ({ mirrors: [Mirror.s3(new s3.Bucket(stack, 'Other'), 'x/', { name: 'site' })] }));
    expect(a.fleet.mirrorExports[0].fsid).toBe(b.fleet.mirrorExports[0].fsid);
    expect(a.params.EFSC_MIRROR_PATHS).toBe('');
    const code = renderedCode(a.userData);
    expect(code).toMatch(/^mirror_sync\(\) \{$/m);
    expect(code).toMatch(/^mirror_s3_sync_one\(\) \{$/m);
  });

  test('a fleet with path mirrors only gets no S3 parameter: its code is an S3 mirror\'s, switched off by their absence', () => {
    const { params, userData } = fleet(() => ({ mirrors: [Mirror.path('/efs/app')] }));
    expect(Object.keys(params).filter((k) => k.startsWith('EFSC_MIRROR_S3'))).toEqual([]);
    // lib/mirror.sh calls the S3 functions only behind EFSC_MIRROR_S3_NAMES.
    expect(renderedCode(userData)).toBe(renderedCode(fleet((stack) => ({ mirrors: [site(stack)] })).userData));
  });

  test('the nodes\' role gets exactly ListBucket under the prefix and GetObject on prefix/*, for each S3 mirror', () => {
    const { t } = fleet((stack) => ({ mirrors: [site(stack), site(stack, '', 'all')] }));
    const arn = `arn:{AWS::Partition}:s3:::${BUCKET}`;
    expect(s3Grants(t)).toEqual([
      `Allow s3:GetObject ${arn}/*`, // the whole bucket: every object
      `Allow s3:GetObject ${arn}/site/*`,
      `Allow s3:ListBucket ${arn}`, // the whole bucket: no prefix condition
      `Allow s3:ListBucket ${arn} {"StringLike":{"s3:prefix":["site/*"]}}`,
    ]);
  });

  test('a bucket encrypted with a KMS key: the role may decrypt with that key', () => {
    const { t } = fleet((stack) => ({
      mirrors: [Mirror.s3(new s3.Bucket(stack, 'Enc', { encryptionKey: new kms.Key(stack, 'Key') }), 'site/')],
    }));
    expect(s3Grants(t).filter((g) => g.includes('kms:'))).toEqual([expect.stringMatching(/^Allow kms:Decrypt \{Key[0-9A-F]+\.Arn\}$/)]);
  });

  test('a fleet without S3 mirrors grants no S3 read beyond its code', () => {
    const { t } = fleet(() => ({ mirrors: [Mirror.path('/efs/app')] }));
    expect(s3Grants(t)).toEqual([]);
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 report no unacknowledged finding for a fleet with S3 mirrors', () => {
    const { app } = fleet((stack) => ({ mirrors: [site(stack), Mirror.s3(new s3.Bucket(stack, 'Own', {
      enforceSSL: true, serverAccessLogsPrefix: 'logs/', versioned: true,
    }), 'app/')] }));
    const mine = nagFindings(app, ['AwsSolutions', 'NIST']).filter((f) => f.includes('/Fleet/'));
    expect(mine).toEqual([]);
  });

  test('clients mount an S3 mirror by its export path, on the mirrors\' port', () => {
    const { stack, vpc } = stackWithVpc();
    const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [site(stack)] });
    new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(f, { mirrorPaths: ['/mirror/site'] }) });
    const all = launchTemplateUserData(stack, (k) => (k.includes('CidrBlock') ? '10.0.0.0/16' : 'lab'));
    const client = Object.values(all).map(parameters).find((p) => p.EFSC_MIRROR_MOUNTS !== undefined)!;
    expect(client.EFSC_MIRROR_MOUNTS).toBe('/mirror/site');
    expect(client.EFSC_MIRROR_MOUNT_OPTIONS).toMatch(/port=2050/);
  });

  test('an imported fleet may list an S3 mirror (its path is its export path)', () => {
    const { stack, vpc } = stackWithVpc();
    const f = CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
      endpoint: 'cache.example.internal', exportPath: '/efs', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef0'),
      mirrorExports: [{ path: '/mirror/site', exportPath: '/mirror/site', fsid: mirrorFsid('Stack/Fleet', '/mirror/site') }],
    });
    new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(f, { mirrorPaths: ['/mirror/site'] }) });
    expect(f.mirrorExports.map((m) => m.exportPath)).toEqual(['/mirror/site']);
  });

  test.each([
    ['a prefix with a .. component', (s: Stack) => ({ mirrors: [site(s, 'site/../other/')] }),
      /^Invalid mirrors: mirrors\[0\]: the S3 prefix 'site\/..\/other\/' may hold only letters, digits and \. _ = \+ - \/ \(no empty, \. or \.\. component\)/],
    ['a prefix with an empty component', (s: Stack) => ({ mirrors: [site(s, 'site//x/')] }), /^Invalid mirrors: mirrors\[0\]: the S3 prefix 'site\/\/x\/'/],
    ['a prefix with a space', (s: Stack) => ({ mirrors: [site(s, 'my site/')] }), /^Invalid mirrors: mirrors\[0\]: the S3 prefix/],
    ['a prefix no S3 key can be under', (s: Stack) => ({ mirrors: [site(s, `${'a'.repeat(1023)}/`, 'site')] }),
      /^Invalid mirrors: mirrors\[0\]: the S3 prefix is 1024 characters with its trailing \/; S3 keys are at most 1,024/],
    ['a prefix no S3 key can be under, without its /', (s: Stack) => ({ mirrors: [site(s, 'a'.repeat(1023), 'site')] }),
      /^Invalid mirrors: mirrors\[0\]: the S3 prefix is 1024 characters/],
    ['a prefix that is a token', (s: Stack) => ({ mirrors: [site(s, Fn.importValue('Prefix'))] }),
      /^Invalid mirrors: must be known at synth \(mirrors\[0\]\.prefix: the nodes' role may read only under it\)/],
    ['the whole bucket without a name', (s: Stack) => ({ mirrors: [site(s, '')] }),
      /^Invalid mirrors: mirrors\[0\]: a mirror of the whole bucket needs a name/],
    ['a name with a .. component', (s: Stack) => ({ mirrors: [site(s, 'site/', '../etc')] }),
      /^Invalid mirrors: mirrors\[0\]: the name '\.\.\/etc' is not a relative path/],
    ['an absolute name', (s: Stack) => ({ mirrors: [site(s, 'site/', '/site')] }), /^Invalid mirrors: mirrors\[0\]: the name '\/site'/],
    ['a name that is a token', (s: Stack) => ({ mirrors: [site(s, 'site/', Fn.importValue('Name'))] }),
      /^Invalid mirrors: must be known at synth \(mirrors\[0\]\.name: each mirror is an export of its own\)/],
    ['a name that is a path mirror\'s export', (s: Stack) => ({ mirrors: [Mirror.path('/efs/site'), site(s)] }),
      /^Invalid mirrors: mirrors\[1\]: its export '\/mirror\/site' is the export of the mirror of '\/efs\/site', '\/mirror\/site'/],
    ['a name around a path mirror\'s export', (s: Stack) => ({ mirrors: [Mirror.path('/efs/site/x'), site(s)] }),
      /^Invalid mirrors: mirrors\[1\]: its export '\/mirror\/site' contains that of the mirror of '\/efs\/site\/x'/],
    ['a name inside a path mirror\'s export', (s: Stack) => ({ mirrors: [Mirror.path('/efs/site'), site(s, 'x/', 'site/x')] }),
      /^Invalid mirrors: mirrors\[1\]: its export '\/mirror\/site\/x' is inside that of the mirror of '\/efs\/site'/],
    ['two S3 mirrors with one name', (s: Stack) => ({ mirrors: [site(s), site(s, 'other/', 'site')] }),
      /^Invalid mirrors: mirrors\[1\]: its export '\/mirror\/site' is the export of mirrors\[0\]/],
    ['a change marker with S3 mirrors only', (s: Stack) => ({ mirrors: [site(s)], mirroring: { changeMarker: '.published' } }),
      /^Invalid mirroring\.changeMarker: needs a path mirror \(Mirror.path\): the marker is a file of the origin's mirrored trees/],
  ])('refuses %s', (_name, props, error) => {
    expect(() => fleet(props)).toThrow(error);
  });

  test('mirror options need mirrors: with S3 mirrors alone they are taken', () => {
    const { params } = fleet((s) => ({ mirrors: [site(s)], mirroring: { syncWorkers: 4 } }));
    expect(params.EFSC_MIRROR_WORKERS).toBe('4');
  });
});
