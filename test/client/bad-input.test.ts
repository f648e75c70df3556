import { CfnParameter, Duration, Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DiskCache,
  FsCacheClientLaunchTemplate,
  FsCacheClientLaunchTemplateProps,
  Mirror,
  MountHelper,
  MountSource,
} from '../../lib';
import { importedFs } from '../util';
import { BadInput, al2023x86, client, isolatedVpc, mirrorClient, ownFleetClient, refusesBadInput } from '../util/bad-input';

/** What the clients (FsCacheClientLaunchTemplate, MountSource) refuses at synth, or warns about, each case naming the prop to change. */
const CASES: BadInput[] = [
  // DiskCache
  {
    name: 'client: a cache device model with a newline (the fleet refuses it too)',
    build: client({ diskCache: DiskCache.instanceStore({ deviceModel: 'Amazon EC2 NVMe\nInstance Storage' }) }),
    error: new RegExp('^Invalid diskCache\\.deviceModel: must be printable ASCII without a trailing space, got \'Amazon EC2 NVMe\\\\nInstance Storage\'\\. ' +
      '\\(at TestStack/Client; in Python: disk_cache\\.device_model\\)$'),
  },
  {
    name: 'client: a cache device model with a trailing space',
    build: client({ diskCache: DiskCache.instanceStore({ deviceModel: 'Amazon EC2 NVMe Instance Storage ' }) }),
    error: /^Invalid diskCache\.deviceModel: must be printable ASCII without a trailing space/,
  },
  {
    name: 'client: a cache device model from a token',
    build: (stack, vpc) => client({ diskCache: DiskCache.instanceStore({ deviceModel: new CfnParameter(stack, 'Model').valueAsString }) })(stack, vpc),
    error: /^Invalid diskCache\.deviceModel: .*token/,
  },
  {
    name: 'client: an EBS cache device model that is empty',
    build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ deviceModel: '' }) }),
    error: /^Invalid diskCache\.deviceModel: must be printable ASCII without a trailing space, got ''/,
  },
  {
    name: 'client: an EBS cache of 0 GiB',
    build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ volumeSize: Size.gibibytes(0) }) }),
    error: /^Invalid diskCache\.volumeSize: must be whole GiB from 1 to 16384, got 0 GiB\. \(at TestStack\/Client; in Python: disk_cache\.volume_size\)$/,
  },
  {
    name: 'client: an EBS cache of part of a GiB',
    build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ volumeSize: Size.mebibytes(1536) }) }),
    error: /^Invalid diskCache\.volumeSize: must be whole GiB from 1 to 16384, got 1\.5 GiB/,
  },
  {
    name: 'client: an EBS cache larger than a gp3 volume',
    build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ volumeSize: Size.tebibytes(17) }) }),
    error: /^Invalid diskCache\.volumeSize: must be whole GiB from 1 to 16384/,
  },
  {
    name: 'client in a CachedFileSystem: an EBS cache of 0 GiB',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', {
      instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ volumeSize: Size.gibibytes(0) }),
    }),
    error: /^Invalid diskCache\.volumeSize: must be whole GiB from 1 to 16384, got 0 GiB\. \(at TestStack\/Data\/C; in Python: disk_cache\.volume_size\)$/,
  },
  {
    name: 'client: a disk cache that is not a DiskCache (JavaScript, a string)',
    build: client({ diskCache: 'ebs' } as unknown as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid diskCache: must be DiskCache\.instanceStore\(\) or DiskCache\.ebs\(\{ volumeSize \}\), got 'ebs'\./,
  },
  {
    name: 'client: a disk cache that is not a DiskCache (JavaScript, its options alone)',
    build: client({ diskCache: { volumeSize: Size.gibibytes(200) } } as unknown as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid diskCache: must be DiskCache\.instanceStore\(\) or DiskCache\.ebs\(\{ volumeSize \}\), got an object of another kind\./,
  },
  // FsCacheClientLaunchTemplate
  {
    name: 'client: cull limits out of order',
    build: client({ cullLimits: { blocksRun: 5, blocksCull: 7, blocksStop: 3 } }),
    error: /^Invalid cullLimits.blocksCull: needs 0 <= blocksStop < blocksCull < blocksRun < 100/,
  },
  {
    name: 'client: stop equal to cull',
    build: client({ cullLimits: { filesCull: 3, filesStop: 3 } }),
    error: /^Invalid cullLimits.filesCull/,
  },
  {
    name: 'client: a limit of 100',
    build: client({ cullLimits: { blocksRun: 100 } }),
    error: /^Invalid cullLimits.blocksRun: must be a whole percentage from 0 to 99/,
  },
  {
    name: 'client: a type known to have no instance store',
    build: client({ instanceType: new ec2.InstanceType('c7gn.large') }),
    error: /^Invalid instanceType: c7gn.large has no instance store .*set diskCache: DiskCache\.ebs\(\)\./,
  },
  {
    name: 'client: a relative cache directory',
    build: client({ cacheDirectory: 'var/cache' }),
    error: /^Invalid cacheDirectory: must be an absolute path/,
  },
  {
    name: 'client: / as the cache directory',
    build: client({ cacheDirectory: '/' }),
    error: /^Invalid cacheDirectory/,
  },
  {
    name: 'client: mount point = cache directory',
    build: client({ mountPoint: '/var/cache/fscache' }),
    error: /^Invalid mountPoint: must differ from cacheDirectory/,
  },
  {
    name: 'client: a relative mount point',
    build: client({ mountPoint: 'mnt' }),
    error: /^Invalid mountPoint: must be an absolute path/,
  },
  {
    name: 'client: options without fsc',
    build: client({ mountOptions: ['hard', 'nfsvers=4.1'] }),
    error: /^Invalid mountOptions: must include fsc/,
  },
  {
    name: 'client: an option with a space',
    build: client({ mountOptions: ['fsc', 'hard', 'a b'] }),
    error: /^Invalid mountOptions: 'a b' is not a mount option/,
  },
  {
    name: 'client: a root volume smaller than the image',
    build: client({ rootVolumeSize: Size.gibibytes(2) }),
    error: /^Invalid rootVolumeSize: must be whole GiB from 8/,
  },
  {
    name: 'client: the NFS value of 0.1 (JavaScript), never rendered as a mount type',
    build: client({ mountHelper: 'nfs4' as MountHelper }),
    error: /^Invalid mountHelper: must be MountHelper\.EFS_UTILS or MountHelper\.NFS, got 'nfs4'\./,
  },
  {
    name: 'client: a TLS port with plain NFS',
    build: client({ mountHelper: MountHelper.NFS, tlsPort: 20100 }),
    error: /^Invalid tlsPort: applies only with mountHelper: MountHelper.EFS_UTILS/,
  },
  {
    name: 'client: a TLS port out of range',
    build: client({ tlsPort: 80 }),
    error: /^Invalid tlsPort: must be a port from 1024 to 65535/,
  },
  {
    name: 'client: a bad cache tag',
    build: client({ cacheTag: 'my tag' }),
    error: /^Invalid cacheTag/,
  },
  {
    name: 'client: no source (JavaScript, which has no types)',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', { vpc } as unknown as FsCacheClientLaunchTemplateProps),
    error: /^Invalid source: is required: MountSource.fileSystem\(fileSystem\) mounts EFS directly, MountSource.cacheFleet\(fleet\) mounts the cache tier/,
  },
  // The props of 0.1 that 0.2 removed, still given from JavaScript (which has no types): refused, never ignored.
  {
    name: 'client: the fileSystem prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', { vpc, fileSystem: importedFs(stack) } as unknown as FsCacheClientLaunchTemplateProps),
    error: /^Invalid fileSystem: was removed in 0\.2: give source: MountSource\.fileSystem\(fileSystem\)\./,
  },
  {
    name: 'client: the cacheFleet prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', {
      vpc, cacheFleet: new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) }),
    } as unknown as FsCacheClientLaunchTemplateProps),
    error: /^Invalid cacheFleet: was removed in 0\.2: give source: MountSource\.cacheFleet\(fleet\)\./,
  },
  {
    name: 'client: the mirrorPaths prop of 0.1, beside a source (JavaScript)',
    build: client({ mirrorPaths: ['/efs/app'] } as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid mirrorPaths: was removed in 0\.2: give source: MountSource\.cacheFleet\(fleet, \{ mirrorPaths \}\)\./,
  },
  {
    name: 'client: the mirrorMountPoint prop of 0.1, beside a source (JavaScript)',
    build: client({ mirrorMountPoint: '/mnt/m' } as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid mirrorMountPoint: was removed in 0\.2: give source: MountSource\.cacheFleet\(fleet, \{ mirrorPaths, mirrorMountPoint \}\)\./,
  },
  {
    name: 'client: the cacheStorage prop of 0.1 (JavaScript)',
    build: client({ instanceType: new ec2.InstanceType('c7g.xlarge'), cacheStorage: 'ebs' } as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid cacheStorage: was removed in 0\.2: give diskCache: DiskCache\.instanceStore\(\) \(CacheStorage\.INSTANCE_STORE\) or diskCache: DiskCache\.ebs\(\) \(CacheStorage\.EBS\)\./,
  },
  {
    name: 'client: the cacheVolumeSize prop of 0.1 (JavaScript)',
    build: client({ cacheVolumeSize: Size.gibibytes(200) } as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid cacheVolumeSize: was moved into diskCache in 0\.2: give diskCache: DiskCache\.ebs\(\{ volumeSize \}\)\./,
  },
  {
    name: 'client: the cacheDeviceModel prop of 0.1 (JavaScript)',
    build: client({ cacheDeviceModel: 'QEMU NVMe Ctrl' } as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid cacheDeviceModel: was moved into diskCache in 0\.2: give diskCache: DiskCache\.instanceStore\(\{ deviceModel \}\) or diskCache: DiskCache\.ebs\(\{ deviceModel \}\)\./,
  },
  {
    name: 'client: the initializeCacheDevices prop of 0.1 (JavaScript)',
    build: client({ initializeCacheDevices: true } as Partial<FsCacheClientLaunchTemplateProps>),
    error: /^Invalid initializeCacheDevices: was moved into diskCache in 0\.2: give diskCache: DiskCache\.instanceStore\(\{ initializeDevices \}\)\./,
  },
  {
    name: 'client in a CachedFileSystem: the cacheStorage prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { cacheStorage: 'ebs' } as object),
    error: /^Invalid cacheStorage: was removed in 0\.2: give diskCache: .* \(at TestStack\/Data\/C; in Python: cache_storage\)$/,
  },
  {
    name: 'client: a source mirror the fleet does not have',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', {
      vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')] }), { mirrorPaths: ['/efs/lib'] }),
    }),
    error: /^Invalid source\.mirrorPaths: '\/efs\/lib' is not a mirror of .*\/efs\/app/,
  },
  {
    name: 'client: a source mirror mount point with nothing to mount',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', {
      vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) }), { mirrorMountPoint: '/mnt/m' }),
    }),
    error: /^Invalid source\.mirrorMountPoint: needs mirrorPaths/,
  },
  {
    name: 'client: a relative source mirror mount point',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', {
      vpc,
      source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app')] }), {
        mirrorPaths: ['/efs/app'], mirrorMountPoint: 'mnt',
      }),
    }),
    error: /^Invalid source\.mirrorMountPoint: must be an absolute path/,
  },
  {
    name: 'client: a fleet source asked to write',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', {
      vpc, source: MountSource.cacheFleet(new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)) })), readOnly: false,
    }),
    error: /^Invalid readOnly: a cache fleet exports read-only/,
  },
  {
    name: 'client: a fleet client asked to write',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }).addClientLaunchTemplate('C', { readOnly: false }),
    error: /^Invalid readOnly: a cache fleet exports read-only/,
  },
  {
    name: 'client: a fleet client with amazon-efs-utils',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }).addClientLaunchTemplate('C', { mountHelper: MountHelper.EFS_UTILS }),
    error: /^Invalid mountHelper: a cache fleet is mounted over plain NFS \(NFSv4.1, or NFSv3 for an NFSv3 fleet\)/,
  },
  {
    name: 'client: a fleet client with a TLS port',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }).addClientLaunchTemplate('C', { tlsPort: 20100 }),
    error: /^Invalid tlsPort: applies only when mounting EFS with amazon-efs-utils/,
  },
  {
    name: 'client: a VPC with isolated subnets only (warning)',
    build: (stack) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc: isolatedVpc(stack, 1), source: MountSource.fileSystem(importedFs(stack)) }),
    warning: /^vpc: the instances of .*\/Client run in isolated subnets .*package repositories.*CloudWatch.*SSM/,
  },
  {
    name: 'client: an EBS cache on a Xen type (t2)',
    build: client({ instanceType: new ec2.InstanceType('t2.large'), diskCache: DiskCache.ebs() }),
    error: /^Invalid instanceType: t2.large is Xen-based: its EBS volumes attach as \/dev\/xvd\* block devices with no NVMe model, so the bootstrap can never find the cache volume/,
  },
  {
    name: 'client: an EBS cache on a Xen type (m4)',
    build: client({ instanceType: new ec2.InstanceType('m4.xlarge'), diskCache: DiskCache.ebs() }),
    error: /^Invalid instanceType: m4.xlarge is Xen-based/,
  },
  {
    name: 'client: an EBS cache on a Xen type with a custom device model',
    build: client({ instanceType: new ec2.InstanceType('c4.2xlarge'), diskCache: DiskCache.ebs({ deviceModel: 'Xen Virtual Block Device' }) }),
    error: /^Invalid instanceType: c4.2xlarge is Xen-based/,
  },
  {
    name: 'client: an EBS cache on a Xen type with NVMe instance store (i3)',
    build: client({ instanceType: new ec2.InstanceType('i3.large'), diskCache: DiskCache.ebs() }),
    error: /^Invalid instanceType: i3.large is Xen-based/,
  },
  {
    name: 'client: Xen SSD instance store (m3)',
    build: client({ instanceType: new ec2.InstanceType('m3.xlarge') }),
    error: /^Invalid instanceType: m3.xlarge is Xen-based and its instance store is not NVMe: the disks attach as \/dev\/xvd\*/,
  },
  {
    name: 'client: Xen SSD instance store (c3)',
    build: client({ instanceType: new ec2.InstanceType('c3.2xlarge') }),
    error: /^Invalid instanceType: c3.2xlarge is Xen-based and its instance store is not NVMe/,
  },
  {
    name: 'client: Xen SSD instance store (r3)',
    build: client({ instanceType: new ec2.InstanceType('r3.large') }),
    error: /^Invalid instanceType: r3.large is Xen-based and its instance store is not NVMe/,
  },
  {
    name: 'client: Xen SSD instance store (i2)',
    build: client({ instanceType: new ec2.InstanceType('i2.xlarge') }),
    error: /^Invalid instanceType: i2.xlarge is Xen-based and its instance store is not NVMe/,
  },
  {
    name: 'client: Xen HDD instance store (d2)',
    build: client({ instanceType: new ec2.InstanceType('d2.xlarge') }),
    error: /^Invalid instanceType: d2.xlarge is Xen-based and its instance store is not NVMe/,
  },
  {
    name: 'client: Xen SSD instance store (x1e)',
    build: client({ instanceType: new ec2.InstanceType('x1e.xlarge') }),
    error: /^Invalid instanceType: x1e.xlarge is Xen-based and its instance store is not NVMe/,
  },
  {
    name: 'client: a Xen type without instance store (r4)',
    build: client({ instanceType: new ec2.InstanceType('r4.large') }),
    error: /^Invalid instanceType: r4.large has no instance store, and as a Xen-based type cannot hold the cache on EBS either/,
  },
  {
    name: 'client: a Xen type without instance store (t2)',
    build: client({ instanceType: new ec2.InstanceType('t2.medium') }),
    error: /^Invalid instanceType: t2.medium has no instance store, and as a Xen-based type/,
  },
  {
    name: 'client: a type name that does not parse, instance store (warning)',
    build: client({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge'), machineImage: al2023x86 }),
    warning: /^instanceType: whether u-6tb1.112xlarge has NVMe instance store is not known here \(the name does not read as family, generation and size/,
  },
  {
    name: 'client: a type name that does not parse, EBS (warning)',
    build: client({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge'), machineImage: al2023x86, diskCache: DiskCache.ebs() }),
    warning: /^instanceType: u-6tb1.112xlarge does not read as family, generation and size .*whether it is Nitro-based is not known/,
  },
  {
    name: 'client: an unknown family (warning)',
    build: client({ instanceType: new ec2.InstanceType('zz9.xlarge') }),
    warning: /^instanceType: whether zz9.xlarge has NVMe instance store is not known here; if it has none/,
  },
  {
    name: 'client: the default type where it is not offered (warning)',
    region: 'eu-north-1',
    build: client({}),
    warning: /^instanceType: the default m6id.xlarge is not offered in eu-north-1 .*for example i4i.xlarge or m7gd.xlarge \(arm64\), offered in eu-north-1/,
  },
  {
    name: 'client: the default type in China (warning)',
    region: 'cn-north-1',
    build: client({ diskCache: DiskCache.ebs() }),
    warning: /^instanceType: the default m6id.xlarge is not offered in cn-north-1 .*for example i4i.xlarge, offered in cn-north-1/,
  },
  {
    name: 'client: a soft mount (warning)',
    build: client({ mountOptions: ['fsc', 'soft', 'nfsvers=4.1'] }),
    warning: /^mountOptions: without hard/,
  },
  {
    name: 'client: an instance type of unknown storage (warning)',
    build: client({ instanceType: new ec2.InstanceType('p5.48xlarge') }),
    warning: /^instanceType: whether p5.48xlarge has NVMe instance store is not known/,
  },
  {
    name: 'client: an instance type name in upper case',
    build: client({ instanceType: new ec2.InstanceType('M6ID.XLARGE') }),
    error: /^Invalid instanceType: 'M6ID.XLARGE' is not an EC2 instance type name/,
  },
  {
    name: 'client: a Windows image by its id',
    build: client({ instanceType: new ec2.InstanceType('c6id.xlarge'), machineImage: ec2.MachineImage.genericWindows({ 'us-east-1': 'ami-0123456789abcdef0' }) }),
    error: /^Invalid machineImage: is a Windows image/,
  },
  {
    name: 'client: Amazon Linux 2 from its public parameter',
    build: client({ instanceType: new ec2.InstanceType('c6id.xlarge'), machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2') }),
    error: /^Invalid machineImage: is Amazon Linux 2 or older \('\/aws\/service\/ami-amazon-linux-latest\/amzn2-ami-hvm-x86_64-gp2'\)/,
  },
  {
    name: 'client: a mount timeout as a token in minutes',
    build: (stack, vpc) => client({ mountTimeout: Duration.minutes(new CfnParameter(stack, 'T', { type: 'Number' }).valueAsNumber) })(stack, vpc),
    error: /^Invalid mountTimeout: is a token .* given as Duration\.minutes\(\).*give it as Duration\.seconds/,
  },
  {
    name: 'efs-utils: a client on a custom image (warning)',
    build: client({ machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/debian/release/bookworm/latest/amd64') }),
    warning: /^machineImage: with MountHelper.EFS_UTILS the image must have amazon-efs-utils.*Debian and Ubuntu package it nowhere/,
  },
  {
    name: 'images: an arm64 Ubuntu parameter on the default x86_64 client type',
    build: client({ machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/canonical/ubuntu/server/24.04/stable/current/arm64/hvm/ebs-gp3/ami-id') }),
    error: new RegExp(/^Invalid machineImage: the image is for arm64 /.source +
      /\(SSM parameter '\/aws\/service\/canonical\/ubuntu\/server\/24.04\/stable\/current\/arm64\/hvm\/ebs-gp3\/ami-id'\), but m6id.xlarge is x86_64/.source),
  },
  {
    name: 'images: an amd64 Debian parameter resolved at launch on an arm64 client type',
    build: client({ instanceType: new ec2.InstanceType('m6gd.xlarge'), machineImage: ec2.MachineImage.resolveSsmParameterAtLaunch('/aws/service/debian/release/bookworm/latest/amd64') }),
    error: /^Invalid machineImage: the image is for x86_64 .*but m6gd.xlarge is arm64/,
  },
  {
    name: 'paths: /home as client mount point',
    build: client({ mountPoint: '/home' }),
    error: /^Invalid mountPoint: '\/home' is the system directory \/home/,
  },
  {
    name: 'paths: a client mount point inside /sys',
    build: client({ mountPoint: '/sys/efs' }),
    error: /^Invalid mountPoint: '\/sys\/efs' is inside \/sys/,
  },
  {
    name: 'paths: /var/lib as client cache directory',
    build: client({ cacheDirectory: '/var/lib' }),
    error: /^Invalid cacheDirectory: '\/var\/lib' is the system directory \/var\/lib/,
  },
  // The directories a client mounts on: none on or inside another
  {
    name: 'client: a source mirror twice',
    build: mirrorClient({ mirrorPaths: ['/efs/app', '/efs/app'] }),
    error: /^Invalid source\.mirrorPaths: lists '\/efs\/app' twice/,
  },
  {
    name: 'client: mirrors inside the fsc mount',
    build: mirrorClient({ mirrorPaths: ['/efs/app'], mirrorMountPoint: '/mnt/efs' }),
    error: new RegExp(/^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/mnt\/efs\/app', inside mountPoint '\/mnt\/efs' \(the fsc mount .*\): /.source +
      /choose a source\.mirrorMountPoint apart from it, e\.g\. '\/mnt\/mirror', or another mountPoint\./.source),
  },
  {
    name: 'client: a mirror on the fsc mount\'s directory',
    build: mirrorClient({ mirrorPaths: ['/efs/app'], mirrorMountPoint: '/mnt' }, { mountPoint: '/mnt/app' }),
    error: /^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/mnt\/app', on the very directory of mountPoint '\/mnt\/app'/,
  },
  {
    name: 'client: the fsc mount inside a mirror',
    build: mirrorClient({ mirrorPaths: ['/efs/www/vendor'] }, { mountPoint: '/mnt/mirror/www/vendor/efs' }),
    error: new RegExp(/^Invalid source\.mirrorMountPoint: the mirror '\/efs\/www\/vendor' would be mounted at '\/mnt\/mirror\/www\/vendor', /.source +
      /over mountPoint '\/mnt\/mirror\/www\/vendor\/efs'.*e\.g\. '\/srv\/mirror'/.source),
  },
  {
    name: 'client: a mirror inside the cache directory',
    build: mirrorClient({ mirrorPaths: ['/efs/app'], mirrorMountPoint: '/var/cache/fscache/mirror' }),
    error: new RegExp(/^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/var\/cache\/fscache\/mirror\/app', /.source +
      /inside cacheDirectory '\/var\/cache\/fscache' \(cachefilesd's cache\): .*or another cacheDirectory\./.source),
  },
  {
    name: 'client: the cache directory inside a mirror',
    build: mirrorClient({ mirrorPaths: ['/efs/app'] }, { cacheDirectory: '/mnt/mirror/app/cache' }),
    error: /^Invalid source\.mirrorMountPoint: the mirror '\/efs\/app' would be mounted at '\/mnt\/mirror\/app', over cacheDirectory '\/mnt\/mirror\/app\/cache'/,
  },
  {
    name: 'client: two mirrors of a fleet of its own on one directory',
    build: ownFleetClient([['/efs/a', '/mirror/app'], ['/efs/b', '/mirror/app']]),
    error: /^Invalid source\.mirrorPaths: '\/efs\/a' and '\/efs\/b' would both be mounted at '\/mnt\/mirror\/app'/,
  },
  {
    name: 'client: a mirror of a fleet of its own inside another',
    build: ownFleetClient([['/efs/a', '/mirror/app'], ['/efs/b', '/mirror/app/lib']]),
    error: /^Invalid source\.mirrorPaths: the mirror '\/efs\/b' would be mounted at '\/mnt\/mirror\/app\/lib', inside the mount of '\/efs\/a'/,
  },
  {
    name: 'client: a mirror of a fleet of its own at a path outside /mirror',
    build: ownFleetClient([['/efs/a', '/etc']]),
    error: /^Invalid source\.mirrorPaths: '\/efs\/a' is served by .* at '\/etc', which is not a path under \/mirror/,
  },
  // FleetSourceOptions.nconnect: Linux takes 1-16 connections; a mount option is a literal checked at synth.
  ...[0, 17, 2.5, -1].map((n): BadInput => ({
    name: `client: nconnect ${n}`,
    build: mirrorClient({ nconnect: n }),
    error: new RegExp(`^Invalid source\\.nconnect: must be a whole number of TCP connections from 1 to 16 \\(Linux's bounds for nconnect\\), got ${String(n).replace('.', '\\.')}\\. `),
  })),
  {
    name: 'client: nconnect from a token',
    build: (stack, vpc) => mirrorClient({ nconnect: new CfnParameter(stack, 'Connections', { type: 'Number' }).valueAsNumber })(stack, vpc),
    error: /^Invalid source\.nconnect: must be known at synth \(it becomes the mount option nconnect=<n>\), got parameter Connections/,
  },
  {
    name: 'client: nconnect given twice, in mountOptions and in the source',
    build: mirrorClient({ nconnect: 4 }, { mountOptions: ['fsc', 'hard', 'nconnect=8'] }),
    error: /^Invalid source\.nconnect: mountOptions already hold an nconnect option: give the number of connections in one place\./,
  },
  {
    name: 'client: the mount point inside the cache directory',
    build: client({ mountPoint: '/var/cache/fscache/efs' }),
    error: /^Invalid mountPoint: '\/var\/cache\/fscache\/efs' is inside cacheDirectory '\/var\/cache\/fscache': .*Choose a mountPoint and a cacheDirectory apart/,
  },
  {
    name: 'client: the cache directory inside the mount point',
    build: client({ cacheDirectory: '/mnt/efs/cache' }),
    error: /^Invalid mountPoint: '\/mnt\/efs' contains cacheDirectory '\/mnt\/efs\/cache': the file system would be mounted over the cache file system/,
  },
  // Warming (ClientWarmingOptions)
  {
    name: 'client: warming with no path',
    build: client({ warming: { paths: [] } }),
    error: /^Invalid warming\.paths: is empty: there is nothing to warm\. Leave warming out for no warming\. \(at TestStack\/Client\)$/,
  },
  {
    name: 'client: a warm path outside what the client mounts',
    build: client({ warming: { paths: ['/var/www'] } }),
    error: /^Invalid warming\.paths: '\/var\/www' is not under what the client mounts \(mountPoint '\/mnt\/efs'\): warming reads only through them\./,
  },
  {
    name: 'client: a warm path that is a prefix of the mount point without being under it',
    build: client({ warming: { paths: ['/mnt/efsx'] } }),
    error: /^Invalid warming\.paths: '\/mnt\/efsx' is not under what the client mounts/,
  },
  {
    name: 'client: a warm path under the mirrors\' root that no mirror mounts',
    build: mirrorClient({ mirrorPaths: ['/efs/app'] }, { warming: { paths: ['/mnt/mirror/www'] } }),
    error: /^Invalid warming\.paths: '\/mnt\/mirror\/www' is not under what the client mounts \(mountPoint '\/mnt\/efs', the mirror at '\/mnt\/mirror\/app'\)/,
  },
  {
    name: 'client: a warm path with a .. segment',
    build: client({ warming: { paths: ['/mnt/efs/../../etc'] } }),
    error: /^Invalid warming\.paths: '\/mnt\/efs\/\.\.\/\.\.\/etc' is not an absolute path without \. or \.\. segments\./,
  },
  {
    name: 'client: a warm path twice',
    build: client({ warming: { paths: ['/mnt/efs/app', '/mnt/efs/app'] } }),
    error: /^Invalid warming\.paths: lists '\/mnt\/efs\/app' twice\./,
  },
  {
    name: 'client: a warm path from a token',
    build: (stack, vpc) => client({ warming: { paths: [new CfnParameter(stack, 'WarmPath').valueAsString] } })(stack, vpc),
    error: /^Invalid warming\.paths: must be known at synth \(each is checked against the mounts\)/,
  },
  {
    name: 'client: no warm readers',
    build: client({ warming: { paths: ['/mnt/efs'], workers: 0 } }),
    error: /^Invalid warming\.workers: must be a whole number from 1 to 512, got 0\./,
  },
  {
    name: 'client: warm readers from a token',
    build: (stack, vpc) => client({ warming: { paths: ['/mnt/efs'], workers: new CfnParameter(stack, 'Workers', { type: 'Number' }).valueAsNumber } })(stack, vpc),
    error: /^Invalid warming\.workers: must be known at synth/,
  },
  {
    name: 'client: a warming timeout of 5 seconds',
    build: client({ warming: { paths: ['/mnt/efs'], timeout: Duration.seconds(5) } }),
    error: /^Invalid warming\.timeout: must be whole seconds from 10 seconds to 60 minutes, got 5 seconds\./,
  },
  {
    name: 'client: a warming timeout of part of a second',
    build: client({ warming: { paths: ['/mnt/efs'], timeout: Duration.millis(30500) } }),
    error: /^Invalid warming\.timeout: must be whole seconds/,
  },
  {
    name: 'client: a warming bound of part of a MiB',
    build: client({ warming: { paths: ['/mnt/efs'], maxSize: Size.kibibytes(1536) } }),
    error: /^Invalid warming\.maxSize: must be whole MiB from 1 MiB to 16 TiB, got 1\.5 MiB\./,
  },
  {
    name: 'client: a warming bound from a token',
    build: (stack, vpc) => client({ warming: { paths: ['/mnt/efs'], maxSize: Size.mebibytes(new CfnParameter(stack, 'Mib', { type: 'Number' }).valueAsNumber) } })(stack, vpc),
    error: /^Invalid warming\.maxSize: must be known at synth/,
  },
];

refusesBadInput('bad input to FsCacheClientLaunchTemplate names the prop', CASES);
