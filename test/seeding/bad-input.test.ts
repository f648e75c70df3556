import { CfnParameter, Duration, Fn, Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { DataSeeder, MountHelper, SeedSource } from '../../lib';
import { importedFs } from '../util';
import { BadInput, aFile, isolatedVpc, mixedVpc, refusesBadInput, seeder, seederInRegion } from '../util/bad-input';

/** What the seeder (DataSeeder, SeedSource) refuses at synth, or warns about, each case naming the prop to change. */
const CASES: BadInput[] = [
  // DataSeeder
  // The props of 0.1 that 0.2 renamed, still given from JavaScript (which has no types): refused, never ignored.
  {
    name: 'seeder: the timeout prop of 0.1 (JavaScript)',
    build: seeder({ timeout: Duration.hours(3) } as object),
    error: /^Invalid timeout: was renamed signalTimeout in 0\.2\./,
  },
  {
    name: 'seeder: the volumeSize prop of 0.1 (JavaScript)',
    build: seeder({ volumeSize: Size.gibibytes(128) } as object),
    error: /^Invalid volumeSize: was renamed rootVolumeSize in 0\.2\./,
  },
  {
    name: 'seeder: the EFS_UTILS value of 0.1 (JavaScript), never rendered as a mount type',
    build: seeder({ mountHelper: 'efs' as MountHelper }),
    error: /^Invalid mountHelper: must be MountHelper\.EFS_UTILS or MountHelper\.NFS, got 'efs'\./,
  },
  {
    name: 'seeder: no source (JavaScript)',
    build: seeder({ source: undefined }),
    error: /^Invalid source: is required: SeedSource\.s3\(bucket, prefix\), SeedSource\.asset\(path\) or SeedSource\.instanceDirectory\(path\)\./,
  },
  {
    name: 'seeder: a source of 0.1\'s kind, with bind (JavaScript)',
    build: seeder({}, () => ({ bind: () => ({ kind: 'local', uri: '/srv/data' }) }) as unknown as SeedSource),
    error: /^Invalid source: must be made by SeedSource\.s3\(bucket, prefix\), SeedSource\.asset\(path\) or SeedSource\.instanceDirectory\(path\)\./,
  },
  {
    name: 'seeder: a subclass of 0.1\'s SeedSource (JavaScript)',
    build: seeder({}, () => new (class extends (SeedSource as unknown as new () => object) {
      bind() { return { kind: 'local', uri: '/srv/data' }; }
    })() as unknown as SeedSource),
    error: /^Invalid source: must be made by SeedSource\.s3\(bucket, prefix\), /,
  },
  {
    name: 'seeder: no workers',
    build: seeder({ workers: 0 }),
    error: /^Invalid workers: must be a whole number from 1 to 512, got 0/,
  },
  {
    name: 'seeder: too many workers',
    build: seeder({ workers: 513 }),
    error: /^Invalid workers/,
  },
  {
    name: 'seeder: a fraction of a worker',
    build: seeder({ workers: 1.5 }),
    error: /^Invalid workers/,
  },
  {
    name: 'seeder: empty parts',
    build: seeder({ filesPerPart: 0 }),
    error: /^Invalid filesPerPart/,
  },
  {
    name: 'seeder: a relative target',
    build: seeder({ targetPath: 'data' }),
    error: /^Invalid targetPath: must be an absolute path/,
  },
  {
    name: 'seeder: a target with ..',
    build: seeder({ targetPath: '/a/../b' }),
    error: /^Invalid targetPath/,
  },
  {
    name: 'seeder: a version with a space',
    build: seeder({ version: 'v 2' }),
    error: /^Invalid version/,
  },
  {
    name: 'seeder: a signal timeout past CloudFormation\'s 12 hours',
    build: seeder({ signalTimeout: Duration.hours(13) }),
    error: /^Invalid signalTimeout: must be whole seconds from 5 minutes to 12 hours/,
  },
  {
    name: 'seeder: a very short signal timeout',
    build: seeder({ signalTimeout: Duration.minutes(1) }),
    error: /^Invalid signalTimeout/,
  },
  {
    name: 'seeder: a short mount timeout',
    build: seeder({ mountTimeout: Duration.seconds(5) }),
    error: /^Invalid mountTimeout/,
  },
  {
    name: 'seeder: a fractional progress interval',
    build: seeder({ progressInterval: Duration.millis(500) }),
    error: /^Invalid progressInterval/,
  },
  {
    name: 'seeder: a small root volume',
    build: seeder({ rootVolumeSize: Size.gibibytes(4) }),
    error: /^Invalid rootVolumeSize: must be whole GiB from 8 to 16384, got 4 GiB/,
  },
  {
    name: 'seeder: a prefix known only at deploy time (the role\'s read is bounded by it; IAM reads * and ? as wildcards)',
    build: seeder({}, (s) => SeedSource.s3(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), Fn.importValue('Prefix'))),
    error: /^Invalid source: must be known at synth \(the S3 prefix: the seeder's role may read only under it\)/,
  },
  {
    name: 'seeder: a prefix with a space',
    build: seeder({}, (s) => SeedSource.s3(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), 'my data/')),
    error: /^Invalid source: the S3 prefix/,
  },
  {
    name: 'seeder: a relative instance directory',
    build: seeder({}, () => SeedSource.instanceDirectory('data')),
    error: /^Invalid source: the instance directory must be an absolute path/,
  },
  {
    name: 'seeder: / as instance directory',
    build: seeder({}, () => SeedSource.instanceDirectory('/')),
    error: /^Invalid source/,
  },
  {
    name: 'seeder: a missing asset',
    build: seeder({}, () => SeedSource.asset('/no/such/dir')),
    error: /^Invalid source: the asset path \/no\/such\/dir does not exist/,
  },
  {
    name: 'seeder: a single file as asset',
    build: seeder({}, () => SeedSource.asset(aFile())),
    error: /^Invalid source: .* is a single file/,
  },
  {
    name: 'seeder: an isolated-only VPC (warning, not CDK\'s "no Private subnet groups")',
    build: (stack) => new DataSeeder(stack, 'Seeder', { vpc: isolatedVpc(stack), fileSystem: importedFs(stack), source: SeedSource.instanceDirectory('/srv/data') }),
    warning: /^vpcSubnets: the instances of .*\/Seeder run in isolated subnets (?!.*S3 \(the seed)(?!.*SSM).*package repositories.*CloudFormation/,
  },
  {
    name: 'seeder: an S3 source from isolated subnets (warning)',
    build: (stack) => new DataSeeder(stack, 'Seeder', {
      vpc: mixedVpc(stack),
      vpcSubnets: { subnetGroupName: 'iso' },
      fileSystem: importedFs(stack),
      source: SeedSource.s3(s3.Bucket.fromBucketName(stack, 'B', 'my-bucket'), 'data/'),
    }),
    warning: /^vpcSubnets: the instances of .*\/Seeder run in isolated subnets .*S3 \(the instances' code, the seed source/,
  },
  {
    name: 'seeder: the default type where it is not offered (warning)',
    region: 'eu-south-1',
    build: seederInRegion({}),
    warning: /^instanceType: the default m7g.xlarge is not offered in eu-south-1 .*for example m8g.xlarge or m7i.xlarge \(x86_64\), offered in eu-south-1/,
  },
  {
    name: 'seeder: the default type in ca-west-1 (warning)',
    region: 'ca-west-1',
    build: seederInRegion({ workers: 8 }),
    warning: /^instanceType: the default m7g.xlarge is not offered in ca-west-1/,
  },
  {
    name: 'seeder: deleting extraneous files at the root (warning)',
    build: seeder({ deleteExtraneous: true }),
    warning: /^deleteExtraneous: with targetPath '\/', every file of the file system/,
  },
  {
    name: 'seeder: an instance type name without a size',
    build: seeder({ instanceType: new ec2.InstanceType('m7g') }),
    error: /^Invalid instanceType: 'm7g' is not an EC2 instance type name/,
  },
  {
    name: 'seeder: a Windows image from a parameter',
    build: seeder({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.fromSsmParameter('/my/windows', { os: ec2.OperatingSystemType.WINDOWS }) }),
    error: /^Invalid machineImage: is a Windows image/,
  },
  {
    name: 'seeder: the first Amazon Linux',
    build: seeder({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/ami-amazon-linux-latest/amzn-ami-hvm-x86_64-gp2') }),
    error: /^Invalid machineImage: is Amazon Linux 2 or older/,
  },
  {
    name: 'seeder: a type as a token, with the default image',
    build: (stack, vpc) => seeder({ instanceType: new ec2.InstanceType(new CfnParameter(stack, 'Type').valueAsString) })(stack, vpc),
    error: /^Invalid instanceType: is parameter Type \(a token, known at deploy time\), and the default machineImage follows/,
  },
  {
    name: 'seeder: a relative instance directory names the seeder',
    build: seeder({}, () => SeedSource.instanceDirectory('srv')),
    error: /^Invalid source: the instance directory must be an absolute path .*got 'srv'\. \(at TestStack\/Seeder\)$/,
  },
  {
    name: 'seeder: a prefix with a .. component',
    build: seeder({}, (s) => SeedSource.s3(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), 'data/../other/')),
    error: /^Invalid source: the S3 prefix 'data\/\.\.\/other\/' .*\(no empty, \. or \.\. component\)/,
  },
  {
    name: 'seeder: a prefix with a . component',
    build: seeder({}, (s) => SeedSource.s3(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), './data/')),
    error: /^Invalid source: the S3 prefix '\.\/data\/'/,
  },
  {
    name: 'seeder: a bad S3 prefix names the seeder',
    build: seeder({}, (s) => SeedSource.s3(s3.Bucket.fromBucketName(s, 'B', 'my-bucket'), 'a//b/')),
    error: /^Invalid source: the S3 prefix 'a\/\/b\/' .* \(at TestStack\/Seeder\)$/,
  },
  {
    name: 'efs-utils: a seeder on a custom image (warning)',
    build: seeder({ machineImage: ec2.MachineImage.genericLinux({ 'us-east-1': 'ami-0123456789abcdef0' }) }),
    warning: /^machineImage: with MountHelper.EFS_UTILS/,
  },
  {
    name: 'images: an x86_64 lookup on the default arm64 seeder type',
    build: seeder({ machineImage: ec2.MachineImage.lookup({ name: 'my-image-*', filters: { architecture: ['x86_64'] } }) }),
    error: /^Invalid machineImage: the image is for x86_64 \(lookup filter architecture 'x86_64'\), but m7g.xlarge is arm64/,
  },
];

refusesBadInput('bad input to DataSeeder names the prop', CASES);
