/**
 * What synth checks of sizes, images, zones and paths (the refusals themselves are rows of the bad-input tests (test/<folder>/bad-input.test.ts)):
 * the data behind the checks, their bounds exactly, and what they let through because nothing is known at synth.
 */
import { App, Size, Stack, Token } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { CacheFleet, CacheFleetProps, CacheOrigin, FanOut, FsCacheClientLaunchTemplate, Mirror, MirrorStorage, MountSource, NfsVersion, NodeDiskCache } from '../lib';
import { checkImageArchitecture, imageArchitecture } from '../lib/instance/image';
import { instanceTypeFacts } from '../lib/instance/instance-types';
import { systemDirectoryOf } from '../lib/private/paths';
import { importedFs, stackWithVpc } from './util';

const fleet = (props: Partial<CacheFleetProps>) => {
  const { app, stack, vpc } = stackWithVpc();
  const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), ...props });
  return { app, stack, vpc, fleet: f };
};
const warnings = (props: Partial<CacheFleetProps>, id: string) =>
  Annotations.fromStack(fleet(props).stack).findWarning('*', Match.stringLikeRegexp(`cdk-efs-cache:${id}`));

describe('instance store sizes', () => {
  test.each([
    ['c7gd.16xlarge', 3800], ['c6gd.medium', 59], ['c6gd.2xlarge', 474], ['m6id.32xlarge', 7600], ['r7gd.12xlarge', 2850],
    ['c8gd.48xlarge', 11400], ['c5d.9xlarge', 900], ['m5d.24xlarge', 3600], ['i4i.metal', 30000], ['i3.large', 475],
    ['i3en.6xlarge', 15000], ['im4gn.16xlarge', 30000], ['is4gen.medium', 937],
  ])('%s has %d GB', (type, gb) => {
    expect(instanceTypeFacts(new ec2.InstanceType(type)).instanceStoreGB).toBe(gb);
  });

  test.each(['c7gn.16xlarge', 'm6idn.large', 'c6gd.metal', 'x2gd.large', 'u-6tb1.112xlarge'])('%s: not known', (type) => {
    expect(instanceTypeFacts(new ec2.InstanceType(type)).instanceStoreGB).toBeUndefined();
  });
});

describe('mirrorSize against the node type', () => {
  const mirrors = { mirrors: [Mirror.path('/efs/app')] };

  test('in memory: half the RAM exactly, and the default size on the smallest type, pass without a warning', () => {
    expect(warnings({ ...mirrors, instanceType: new ec2.InstanceType('c7gn.xlarge'), mirroring: { size: Size.gibibytes(4) } }, 'mirrorSizeOverHalfMemory')).toHaveLength(0);
    expect(warnings({ ...mirrors, instanceType: new ec2.InstanceType('c7gn.medium') }, 'mirrorSizeOverHalfMemory')).toHaveLength(0);
  });

  test('in memory: just under the RAM warns, the RAM itself is refused', () => {
    expect(warnings({ ...mirrors, instanceType: new ec2.InstanceType('c7gn.large'), mirroring: { size: Size.mebibytes(4095) } }, 'mirrorSizeOverHalfMemory')).toHaveLength(1);
    expect(() => fleet({ ...mirrors, instanceType: new ec2.InstanceType('c7gn.large'), mirroring: { size: Size.mebibytes(4096) } }))
      .toThrow(/^Invalid mirroring\.size: 4 GiB in memory/);
  });

  test('in memory on a type whose memory is not known: not checked (the unknown-size warning stands)', () => {
    const w = warnings({
      ...mirrors, instanceType: new ec2.InstanceType('i4i.large'), mirroring: { storage: MirrorStorage.MEMORY, size: Size.tebibytes(16) }, nodeDiskCache: NodeDiskCache.instanceStore(),
    }, 'unknownInstanceSize');
    expect(w).toHaveLength(1);
  });

  test('on the instance store: the bound is half of the disks, to the MiB (c6gd.large: 118 GB)', () => {
    // 56266 MiB is 58,999,177,216 bytes, under 59 GB; 56267 MiB is over it.
    expect(warnings({ ...mirrors, instanceType: new ec2.InstanceType('c6gd.large'), mirroring: { size: Size.mebibytes(56266) } }, 'mirrorSizeNearHalfInstanceStore')).toHaveLength(1);
    expect(() => fleet({ ...mirrors, instanceType: new ec2.InstanceType('c6gd.large'), mirroring: { size: Size.mebibytes(56267) } }))
      .toThrow(/^Invalid mirroring\.size: 54.948 GiB on the instance store/);
    // Below 97% of half: no warning.
    expect(warnings({ ...mirrors, instanceType: new ec2.InstanceType('c6gd.large'), mirroring: { size: Size.gibibytes(53) } }, 'mirrorSizeNearHalfInstanceStore')).toHaveLength(0);
  });

  test('on the instance store of a type whose size is not known: left to the boot check', () => {
    expect(() => fleet({ ...mirrors, instanceType: new ec2.InstanceType('m6idn.large'), mirroring: { size: Size.tebibytes(16) } })).not.toThrow();
  });

  test('without mirrors nothing is checked', () => {
    expect(() => fleet({ instanceType: new ec2.InstanceType('c7gn.medium') })).not.toThrow();
  });
});

describe('image architecture', () => {
  test.each([
    [ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.ARM_64 }), 'arm64'],
    [ec2.MachineImage.latestAmazonLinux2023(), 'x86_64'],
    [ec2.MachineImage.fromSsmParameter('/aws/service/canonical/ubuntu/server/24.04/stable/current/amd64/hvm/ebs-gp3/ami-id'), 'x86_64'],
    [ec2.MachineImage.fromSsmParameter('/aws/service/bottlerocket/aws-k8s-1.30/aarch64/latest/image_id'), 'arm64'],
    [ec2.MachineImage.lookup({ name: 'x', filters: { architecture: ['arm64'] } }), 'arm64'],
  ])('%# is read as %s', (image, arch) => {
    expect(imageArchitecture(image)?.architecture).toBe(arch);
  });

  test.each([
    ['an AMI map', ec2.MachineImage.genericLinux({ 'us-east-1': 'ami-0123456789abcdef0' })],
    ['a parameter name that is a token', ec2.MachineImage.fromSsmParameter(Token.asString({ Ref: 'ImageParameterName' }))],
    ['a parameter naming no architecture', ec2.MachineImage.fromSsmParameter('/my/golden-image')],
    ['a parameter naming both', ec2.MachineImage.fromSsmParameter('/images/x86_64-to-arm64/latest')],
    ['a lookup with two architectures', ec2.MachineImage.lookup({ name: 'x', filters: { architecture: ['arm64', 'x86_64'] } })],
  ])('%s is not known, and passes on either architecture', (_what, image) => {
    expect(imageArchitecture(image)).toBeUndefined();
    const stack = new Stack();
    for (const type of ['c7gn.16xlarge', 'c6in.16xlarge']) {
      expect(() => checkImageArchitecture(stack, image, new ec2.InstanceType(type))).not.toThrow();
    }
  });

  test('an AMI map passes on a fleet of either architecture', () => {
    const image = ec2.MachineImage.genericLinux({ 'us-east-1': 'ami-0123456789abcdef0' });
    for (const type of ['c7gn.16xlarge', 'c6in.16xlarge']) {
      expect(() => fleet({ instanceType: new ec2.InstanceType(type), machineImage: image })).not.toThrow();
    }
  });

  test('a type whose architecture aws-cdk-lib cannot read passes with any image', () => {
    expect(() => checkImageArchitecture(new Stack(), ec2.MachineImage.latestAmazonLinux2023(), new ec2.InstanceType('u-6tb1.112xlarge'))).not.toThrow();
  });

  test('matching images pass on fleets and clients', () => {
    expect(() => fleet({ machineImage: ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.ARM_64 }) })).not.toThrow();
    const { stack, vpc } = stackWithVpc();
    expect(() => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(importedFs(stack)), machineImage: ec2.MachineImage.latestAmazonLinux2023() })).not.toThrow();
  });
});

describe('a zone of the user\'s with the fleet\'s zone name', () => {
  test('made after the fleet: refused when the app is synthesized', () => {
    const { app, stack, vpc } = fleet({});
    new route53.PrivateHostedZone(stack, 'Later', { zoneName: 'efs-cache.internal', vpc });
    expect(() => app.synth()).toThrow(/Invalid fanOut\.zoneName: the private hosted zone TestStack\/Later is also named 'efs-cache.internal'/);
  });

  test('associated with the VPC later (addVpc): refused when the app is synthesized', () => {
    const { app, stack, vpc } = stackWithVpc();
    const other = new ec2.Vpc(stack, 'OtherVpc', { maxAzs: 1, natGateways: 0 });
    const zone = new route53.PrivateHostedZone(stack, 'Mine', { zoneName: 'efs-cache.internal', vpc: other });
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) });
    zone.addVpc(vpc);
    expect(() => app.synth()).toThrow(/Invalid fanOut\.zoneName: the private hosted zone TestStack\/Mine/);
  });

  test('on another VPC, public, of another name, or given as hostedZone: accepted', () => {
    const { app, stack, vpc } = stackWithVpc();
    const other = new ec2.Vpc(stack, 'OtherVpc', { maxAzs: 1, natGateways: 0 });
    new route53.PrivateHostedZone(stack, 'OnOther', { zoneName: 'efs-cache.internal', vpc: other });
    new route53.PublicHostedZone(stack, 'Public', { zoneName: 'efs-cache.internal' });
    new route53.PrivateHostedZone(stack, 'Else', { zoneName: 'else.internal', vpc });
    const mine = new route53.PrivateHostedZone(stack, 'Mine', { zoneName: 'data.internal', vpc });
    const fileSystem = importedFs(stack);
    new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fileSystem) });
    new CacheFleet(stack, 'Fleet2', { vpc, origin: CacheOrigin.efs(fileSystem), fanOut: FanOut.route53({ hostedZone: mine }) });
    expect(() => app.synth()).not.toThrow();
  });
});

describe('system directories', () => {
  test.each(['/var', '/etc', '/usr/lib', '/opt', '/home', '/tmp', '/var/lib/nfs', '/'])('%s is one, or a parent of one', (p) => {
    expect(systemDirectoryOf(p)).toBeDefined();
  });

  test.each(['/proc/x', '/dev/shm/x', '/etc/efs', '/var/lib/nfs/x', '/boot/efi/x'])('%s is inside a system tree', (p) => {
    expect(systemDirectoryOf(p)?.how).toBe('inside');
  });

  test.each(['/efs', '/mnt/efs', '/var/cache/fscache', '/srv/data', '/var/www', '/home/data', '/usr/local/data', '/opt/data', '/mnt'])('%s is not', (p) => {
    expect(systemDirectoryOf(p)).toBeUndefined();
  });

  test('the defaults pass', () => {
    expect(() => fleet({ mirrors: [Mirror.path('/efs/app')], instanceType: new ec2.InstanceType('c6gd.16xlarge') })).not.toThrow();
  });
});

describe('the room the user data leaves for users\' commands (EC2: 16,384 bytes before base64)', () => {
  /**
   * The largest node the tests build: NFSv3 (fsids in the export lines), the disk cache, two path mirrors and two S3
   * mirrors, a change marker, warming, and a zone name of 225 characters (the clients' server name), the longest whose
   * records fit DNS's 253 (`<az>.cache.<zone>`, an AZ name counted at 21). The docs
   * (getting-started.md, README "Limits") publish the figure this holds to.
   */
  const largest = () => {
    const { stack, vpc } = stackWithVpc();
    const site = s3.Bucket.fromBucketName(stack, 'Site', 'efsc-site-data');
    const zoneName = `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'d'.repeat(24)}.internal`;
    const f = new CacheFleet(stack, 'Fleet', {
      vpc, origin: CacheOrigin.efs(importedFs(stack)), instanceType: new ec2.InstanceType('c7gd.16xlarge'), clientNfsVersion: NfsVersion.NFS_V3,
      mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www'), Mirror.s3(site, 'site/'), Mirror.s3(site, 'docs/', { name: 'docs' })],
      mirroring: { changeMarker: '.published' },
      warming: { paths: ['/efs/models'] },
      fanOut: FanOut.route53({ zoneName }),
    });
    const clients = new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(f, { mirrorPaths: ['/efs/app', '/mirror/docs'] }) });
    return { zoneName, fleet: f, clients };
  };

  test('the largest node leaves at least 7,500 bytes, its clients at least 8,192; a default fleet at least 8,192', () => {
    const { zoneName, fleet: node, clients } = largest();
    expect(zoneName).toHaveLength(225);
    expect(16384 - node.userDataBytes).toBeGreaterThanOrEqual(7500);
    expect(16384 - clients.userDataBytes).toBeGreaterThanOrEqual(8192);
    expect(16384 - fleet({}).fleet.userDataBytes).toBeGreaterThanOrEqual(8192);
  });

  test('so 7,500 bytes of commands fit on the largest node, and synthesize', () => {
    const { fleet: node } = largest();
    // 7,500 bytes: 60 lines of 125 (124 and the newline).
    const commands = Array.from({ length: 60 }, (_, i) => `echo ${String(i).padStart(3, '0')} ${'x'.repeat(115)}`);
    expect(Buffer.byteLength(commands.join('\n') + '\n')).toBe(7500);
    node.userData.addCommands(...commands);
    expect(() => (Stack.of(node).node.root as App).synth()).not.toThrow();
  });
});
