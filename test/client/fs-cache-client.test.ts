import { Duration, Size } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import {
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DiskCache,
  FsCacheClientLaunchTemplate,
  FsCacheClientLaunchTemplateProps,
  ICacheFleet,
  Mirror,
  MountHelper,
  MountSource,
} from '../../lib';
import { importedFs, nagFindings, stackWithVpc } from '../util';
import { codeParameters, launchTemplateUserData, parameters } from '../util/user-data';

function client(props: Partial<FsCacheClientLaunchTemplateProps> = {}) {
  const { app, stack, vpc } = stackWithVpc();
  const c = new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(importedFs(stack)), ...props });
  const userData = Object.values(launchTemplateUserData(stack));
  return { app, stack, vpc, client: c, t: Template.fromStack(stack), userData: userData[0], params: parameters(userData[0]) };
}

describe('FsCacheClientLaunchTemplate over EFS', () => {
  test('renders the cache and mount parameters', () => {
    const { params } = client();
    expect(params).toEqual({
      ...codeParameters(),
      EFSC_NFS_SERVER: 'fs-0123456789abcdef0.efs.<Ref:AWS::Region>.<Ref:AWS::URLSuffix>',
      EFSC_NFS_PATH: '/',
      EFSC_MOUNT_POINT: '/mnt/efs',
      EFSC_MOUNT_TYPE: 'efs',
      EFSC_MOUNT_OPTIONS: 'fsc,tls,iam,tlsport=20049,nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport',
      EFSC_MOUNT_TIMEOUT_SEC: '180',
      EFSC_CACHE_DIR: '/var/cache/fscache',
      EFSC_CACHE_LABEL: 'fscache',
      EFSC_CACHE_TAG: 'efscache',
      EFSC_CACHE_SOURCE: 'instance-store',
      EFSC_DEVICE_MODEL: 'Amazon EC2 NVMe Instance Storage',
      EFSC_INITIALIZE_DEVICES: 'false',
      EFSC_CULL_BRUN: '10', EFSC_CULL_BCULL: '7', EFSC_CULL_BSTOP: '3',
      EFSC_CULL_FRUN: '10', EFSC_CULL_FCULL: '7', EFSC_CULL_FSTOP: '3',
      EFSC_METRICS: 'cloudwatch-agent', EFSC_METRICS_GROUP: 'TestStack/Client', EFSC_MIRROR_MOUNTS: '', EFSC_MIRROR_ROOT: '/mirror',
      // No warming: no paths, the bounds' defaults (checked by the script all the same).
      EFSC_WARM_PATHS: '', EFSC_WARM_WORKERS: '16', EFSC_WARM_TIMEOUT_SEC: '300', EFSC_WARM_MAX_MIB: '2048',
    });
  });

  test('user data starts with the shebang and stays under 16 KB (size printed)', () => {
    const { userData, client: c } = client();
    expect(userData.startsWith('#!/bin/bash\nset -euo pipefail\n')).toBe(true);
    process.stdout.write(`client user data: ${Buffer.byteLength(userData)} bytes (estimate with tokens: ${c.userDataBytes})\n`);
    expect(c.userDataBytes).toBeLessThan(16 * 1024);
  });

  test('the instance store\'s initializeDevices and deviceModel reach the script', () => {
    expect(client({ diskCache: DiskCache.instanceStore({ initializeDevices: true }) }).params.EFSC_INITIALIZE_DEVICES).toBe('true');
    const { params, t } = client({ diskCache: DiskCache.instanceStore({ deviceModel: 'QEMU NVMe Ctrl' }) });
    expect(params).toMatchObject({ EFSC_CACHE_SOURCE: 'instance-store', EFSC_DEVICE_MODEL: 'QEMU NVMe Ctrl', EFSC_INITIALIZE_DEVICES: 'false' });
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', { LaunchTemplateData: { BlockDeviceMappings: [Match.objectLike({ DeviceName: '/dev/xvda' })] } });
  });

  test('an EBS disk cache: 100 GiB by default, its own device model when given', () => {
    const { params, t } = client({ instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ deviceModel: 'Custom Volume' }) });
    expect(params).toMatchObject({ EFSC_CACHE_SOURCE: 'ebs', EFSC_DEVICE_MODEL: 'Custom Volume', EFSC_INITIALIZE_DEVICES: 'false' });
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: {
        BlockDeviceMappings: [
          Match.objectLike({ DeviceName: '/dev/xvda' }),
          { DeviceName: '/dev/sdf', Ebs: { Encrypted: true, VolumeSize: 100, VolumeType: 'gp3', DeleteOnTermination: true } },
        ],
      },
    });
  });

  test('props reach the script: directory, tag, limits, options, EBS fallback', () => {
    const { params, t } = client({
      instanceType: new ec2.InstanceType('c7g.2xlarge'),
      diskCache: DiskCache.ebs({ volumeSize: Size.gibibytes(500) }),
      cacheDirectory: '/scratch/fscache',
      cacheTag: 'mycache',
      cullLimits: { blocksRun: 20, blocksCull: 7, blocksStop: 3, filesRun: 30, filesCull: 20, filesStop: 10 },
      mountPoint: '/data',
      mountHelper: MountHelper.NFS,
      readOnly: true,
      mountTimeout: Duration.seconds(45),
    });
    expect(params).toMatchObject({
      EFSC_CACHE_SOURCE: 'ebs',
      EFSC_DEVICE_MODEL: 'Amazon Elastic Block Store',
      EFSC_CACHE_DIR: '/scratch/fscache',
      EFSC_CACHE_TAG: 'mycache',
      EFSC_CULL_BRUN: '20', EFSC_CULL_FRUN: '30', EFSC_CULL_FCULL: '20', EFSC_CULL_FSTOP: '10',
      EFSC_MOUNT_POINT: '/data',
      EFSC_MOUNT_TYPE: 'nfs4',
      EFSC_MOUNT_OPTIONS: 'fsc,nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro',
      EFSC_INITIALIZE_DEVICES: 'false',
      EFSC_MOUNT_TIMEOUT_SEC: '45',
    });
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: {
        InstanceType: 'c7g.2xlarge',
        BlockDeviceMappings: [
          Match.objectLike({ DeviceName: '/dev/xvda', Ebs: Match.objectLike({ Encrypted: true }) }),
          { DeviceName: '/dev/sdf', Ebs: { Encrypted: true, VolumeSize: 500, VolumeType: 'gp3', DeleteOnTermination: true } },
        ],
      },
    });
  });

  test('IMDSv2 only, encrypted root, no key pair; IAM mount and write on the file system', () => {
    const { t } = client();
    t.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: {
        MetadataOptions: { HttpTokens: 'required' },
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: Match.objectLike({ Encrypted: true }) }],
        KeyName: Match.absent(),
        InstanceType: 'm6id.xlarge',
      },
    });
    t.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite'] })]) },
    });
  });

  test('read-only clients get ClientMount only', () => {
    const { t } = client({ readOnly: true });
    t.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'elasticfilesystem:ClientMount' })]) },
    });
    expect(JSON.stringify(t.findResources('AWS::IAM::ManagedPolicy'))).not.toMatch(/ClientWrite/);
    t.resourceCountIs('AWS::IAM::Policy', 0);
  });

  test('the file system lets the clients in on 2049, and only that', () => {
    const { t } = client();
    const ingress = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress')).map((r) => r.Properties);
    expect(ingress).toEqual([expect.objectContaining({
      GroupId: 'sg-0123456789abcdef0', IpProtocol: 'tcp', FromPort: 2049, ToPort: 2049,
      SourceSecurityGroupId: { 'Fn::GetAtt': [expect.stringMatching(/^ClientSecurityGroup/), 'GroupId'] },
    })]);
    t.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('FS-Cache clients'), SecurityGroupIngress: Match.absent(),
    });
  });

  test('cdk-nag AwsSolutions and NIST 800-53 R5 find nothing unacknowledged', () => {
    const { app } = client();
    expect(nagFindings(app, ['AwsSolutions', 'NIST'])).toEqual([]);
  });
});

describe('FsCacheClientLaunchTemplate over a cache fleet', () => {
  test('mounts the fleet name and export read-only over NFSv4.1, and the fleet lets it in', () => {
    const { stack, vpc } = stackWithVpc();
    const cfs = new CachedFileSystem(stack, 'Data', {
      vpc, cacheFleet: { capacity: Capacity.nodes(2), exportPath: '/cache', directoryCacheTimeout: Duration.minutes(2) },
    });
    cfs.addClientLaunchTemplate('Clients');
    const ud = Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('DataClients'))![1];
    // No revalidation sooner than the fleet itself would: the fleet's timers (10 and 2 minutes here), no close-to-open.
    expect(parameters(ud)).toMatchObject({
      EFSC_NFS_SERVER: 'cache.efs-cache.internal',
      EFSC_NFS_PATH: '/cache',
      EFSC_MOUNT_TYPE: 'nfs4',
      EFSC_MOUNT_OPTIONS: 'fsc,nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,ro,nocto,' +
        'acregmin=600,acregmax=600,acdirmin=120,acdirmax=120',
    });
    Template.fromStack(stack).hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      FromPort: 2049, ToPort: 2049,
      GroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataCacheFleetSecurityGroup'), 'GroupId'] },
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataClientsSecurityGroup'), 'GroupId'] },
    });
  });

  test('MountSource.fileSystem of the origin file system mounts EFS directly even with a fleet', () => {
    const { stack, vpc } = stackWithVpc();
    const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } });
    cfs.addClientLaunchTemplate('Writers', { source: MountSource.fileSystem(cfs.originFileSystem.fileSystem) });
    const ud = Object.values(launchTemplateUserData(stack)).find((u) => u.includes('EFSC_CACHE_TAG'))!;
    expect(parameters(ud).EFSC_NFS_SERVER).toMatch(/^<Ref:DataOrigin[0-9A-F]{8}>\.efs\./);
  });

  test.each([
    ['with a fleet, its fleet', true, (cfs: CachedFileSystem) => MountSource.cacheFleet(cfs.cacheFleet!)],
    ['without a fleet, its file system', false, (cfs: CachedFileSystem) => MountSource.fileSystem(cfs.originFileSystem.fileSystem)],
  ])('the default source is, %s: written out, the same template', (_name, withFleet, source) => {
    const synth = (explicit: boolean) => {
      const { stack, vpc } = stackWithVpc();
      const cfs = new CachedFileSystem(stack, 'Data', { vpc, ...(withFleet ? { cacheFleet: { capacity: Capacity.nodes(1) } } : {}) });
      cfs.addClientLaunchTemplate('Clients', explicit ? { source: source(cfs) } : {});
      return Template.fromStack(stack).toJSON();
    };
    expect(synth(true)).toEqual(synth(false));
  });

  test('the source may ask for the fleet\'s mirrors', () => {
    const { stack, vpc } = stackWithVpc();
    const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1), mirrors: [Mirror.path('/efs/app')] } });
    cfs.addClientLaunchTemplate('Web', { source: MountSource.cacheFleet(cfs.cacheFleet!, { mirrorPaths: ['/efs/app'] }) });
    const ud = Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('DataWeb'))![1];
    expect(parameters(ud)).toMatchObject({ EFSC_NFS_SERVER: 'cache.efs-cache.internal', EFSC_MIRROR_MOUNTS: '/mirror/app' });
  });
});

describe('source: one MountSource', () => {
  interface Given { readonly fs: efs.IFileSystem; readonly fleet: ICacheFleet }
  type Props = (g: Given) => Omit<FsCacheClientLaunchTemplateProps, 'vpc'>;

  /**
   * The whole template of a stack with a file system, a fleet with two mirrors and one client template with `props`,
   * and the client's mount parameters.
   */
  function synth(props: Props) {
    const { stack, vpc } = stackWithVpc();
    const fs = importedFs(stack);
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fs), capacity: Capacity.nodes(2), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www/vendor')] });
    new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, ...props({ fs, fleet }) });
    const ud = Object.entries(launchTemplateUserData(stack)).find(([id]) => id.startsWith('Client'))![1];
    return { template: Template.fromStack(stack).toJSON(), params: parameters(ud) };
  }

  test('a template mounts what was asked: the fleet with its mirrors, or EFS over TLS', () => {
    const viaFleet = synth(({ fleet }) => ({ source: MountSource.cacheFleet(fleet, { mirrorPaths: ['/efs/app'], mirrorMountPoint: '/srv/mirror' }) }));
    expect(viaFleet.params).toMatchObject({
      EFSC_NFS_SERVER: 'cache.efs-cache.internal', EFSC_NFS_PATH: '/efs', EFSC_MOUNT_TYPE: 'nfs4', EFSC_MIRROR_MOUNTS: '/mirror/app', EFSC_MIRROR_MOUNT_POINT: '/srv/mirror',
    });
    const direct = synth(({ fs }) => ({ source: MountSource.fileSystem(fs) }));
    expect(direct.params).toMatchObject({ EFSC_NFS_PATH: '/', EFSC_MOUNT_TYPE: 'efs', EFSC_MIRROR_MOUNTS: '' });
    expect(direct.params.EFSC_NFS_SERVER).toMatch(/^fs-0123456789abcdef0\.efs\./);
  });

  test('nconnect is an option of each mount of the fleet, and of none by default', () => {
    const mirrors = { mirrorPaths: ['/efs/app'] };
    const base = synth(({ fleet }) => ({ source: MountSource.cacheFleet(fleet, mirrors) })).params;
    const four = synth(({ fleet }) => ({ source: MountSource.cacheFleet(fleet, { ...mirrors, nconnect: 4 }) })).params;
    expect(`${base.EFSC_MOUNT_OPTIONS},${base.EFSC_MIRROR_MOUNT_OPTIONS}`).not.toMatch(/nconnect/);
    expect(four.EFSC_MOUNT_OPTIONS).toBe(`${base.EFSC_MOUNT_OPTIONS},nconnect=4`);
    expect(four.EFSC_MIRROR_MOUNT_OPTIONS).toBe(`${base.EFSC_MIRROR_MOUNT_OPTIONS},nconnect=4`);
    // Options of the user's own: the source's nconnect is added to them.
    const own = synth(({ fleet }) => ({ source: MountSource.cacheFleet(fleet, { nconnect: 16 }), mountOptions: ['fsc', 'hard', 'ro'] })).params;
    expect(own.EFSC_MOUNT_OPTIONS).toBe('fsc,hard,ro,nconnect=16');
    // EFS directly: MountSource.fileSystem takes no nconnect (EFS does not support it).
    expect(synth(({ fs }) => ({ source: MountSource.fileSystem(fs) })).params.EFSC_MOUNT_OPTIONS).not.toMatch(/nconnect/);
  });

  test('a MountSource says what the client mounts: server, path, connections, helper, mirrors', () => {
    const { stack, vpc } = stackWithVpc();
    const fs = importedFs(stack);
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fs), capacity: Capacity.nodes(1), exportPath: '/data', mirrors: [Mirror.path('/data/app')] });
    const direct = MountSource.fileSystem(fs);
    expect([direct.remotePath, direct.mountHelper, direct.mirrorPaths, direct.efsFileSystem, direct.fleet]).toEqual(['/', undefined, [], fs, undefined]);
    expect(direct.connections).toBe(fs.connections);
    expect(stack.resolve(direct.server)).toEqual({ 'Fn::Join': ['', ['fs-0123456789abcdef0.efs.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] });
    const options = { mirrorPaths: ['/data/app'], mirrorMountPoint: '/srv/m' };
    const viaFleet = MountSource.cacheFleet(fleet, options);
    options.mirrorPaths.push('/data/later');
    expect([viaFleet.server, viaFleet.remotePath, viaFleet.mountHelper, viaFleet.mirrorPaths, viaFleet.mirrorMountPoint, viaFleet.fleet,
      viaFleet.nconnect])
      .toEqual([fleet.endpoint, '/data', MountHelper.NFS, ['/data/app'], '/srv/m', fleet, undefined]);
    expect([MountSource.cacheFleet(fleet, { nconnect: 8 }).nconnect, direct.nconnect]).toEqual([8, undefined]);
    expect(viaFleet.connections).toBe(fleet.connections);
  });

  test('CachedFileSystem passes its clients a source: addClientLaunchTemplate gives the launch template of MountSource.cacheFleet', () => {
    // The sample's snapshot holds this too.
    const viaSource = () => {
      const { stack, vpc } = stackWithVpc();
      const cfs = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } });
      new FsCacheClientLaunchTemplate(cfs, 'Clients', { vpc, source: MountSource.cacheFleet(cfs.cacheFleet!) });
      return Template.fromStack(stack).toJSON();
    };
    const { stack, vpc } = stackWithVpc();
    new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }).addClientLaunchTemplate('Clients');
    const viaMethod = Template.fromStack(stack).toJSON();
    // addClientLaunchTemplate also adds the clients to the dashboard: compare the launch templates only.
    const lt = (t: Record<string, any>) => Object.fromEntries(Object.entries(t.Resources).filter(([, r]: [string, any]) => r.Type === 'AWS::EC2::LaunchTemplate'));
    expect(Object.keys(lt(viaMethod))).toHaveLength(2);
    expect(lt(viaMethod)).toEqual(lt(viaSource()));
  });
});
