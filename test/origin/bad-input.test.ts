import { CfnParameter, Fn, RemovalPolicy, Size, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as kms from 'aws-cdk-lib/aws-kms';
import { CacheFleet, CacheOrigin, MountHelper, NfsServerOptions, NfsVersion } from '../../lib';
import { importedFs } from '../util';
import { BadInput, imported, nfsFleet, origin, refusesBadInput } from '../util/bad-input';

/**
 * What the origin file system (OriginFileSystem) and a fleet's origin (CacheOrigin: an NFS server, EFS) refuse at synth,
 * or warn about, each case naming the prop to change.
 */
const CASES: BadInput[] = [
  // OriginFileSystem
  {
    name: 'origin: DESTROY without confirmation',
    build: origin(() => ({ removalPolicy: RemovalPolicy.DESTROY })),
    error: /^Invalid removalPolicy: .*confirmDataLoss: true/,
  },
  {
    name: 'origin: SNAPSHOT',
    build: origin(() => ({ removalPolicy: RemovalPolicy.SNAPSHOT })),
    error: /^Invalid removalPolicy: EFS does not support RemovalPolicy.SNAPSHOT/,
  },
  {
    name: 'origin: confirmDataLoss without DESTROY',
    build: origin(() => ({ confirmDataLoss: true })),
    error: /^Invalid confirmDataLoss: only has a meaning with removalPolicy/,
  },
  {
    name: 'origin: Max I/O with Elastic',
    build: origin(() => ({ performanceMode: efs.PerformanceMode.MAX_IO })),
    error: /^Invalid performanceMode: Max I\/O cannot be combined with Elastic/,
  },
  {
    name: 'origin: Provisioned without a rate',
    build: origin(() => ({ throughputMode: efs.ThroughputMode.PROVISIONED })),
    error: /^Invalid provisionedThroughputPerSecond: is required/,
  },
  {
    name: 'origin: a rate known only at deploy time, in GiB (aws-efs converts it to MiB/s, which its error did not name)',
    build: origin(() => ({ throughputMode: efs.ThroughputMode.PROVISIONED, provisionedThroughputPerSecond: Size.gibibytes(Token.asNumber(Fn.importValue('Rate'))) })),
    error: /^Invalid provisionedThroughputPerSecond: is a token \(known at deploy time\) given as Size\.gibibytes\(\), which cannot be converted at synth: give it as Size\.mebibytes\(\.\.\.\)\./,
  },
  {
    name: 'origin: a rate without Provisioned',
    build: origin(() => ({ provisionedThroughputPerSecond: Size.mebibytes(100) })),
    error: /^Invalid provisionedThroughputPerSecond: is only valid with ThroughputMode.PROVISIONED/,
  },
  {
    name: 'origin: import with a removal policy',
    build: origin((s) => ({ fileSystem: imported(s), removalPolicy: RemovalPolicy.RETAIN })),
    error: /^Invalid removalPolicy: applies only to a file system created here, but fileSystem imports/,
  },
  {
    name: 'origin: import with a key',
    build: origin((s) => ({ fileSystem: imported(s), kmsKey: new kms.Key(s, 'K') })),
    error: /^Invalid kmsKey: applies only to a file system created here/,
  },
  // CacheOrigin: an NFS server the nodes can reach, and the values of 0.1 given from JavaScript (which has no types)
  {
    name: 'nfs origin: the node itself (127.0.0.1)',
    build: nfsFleet({ host: '127.0.0.1', peer: ec2.Peer.ipv4('127.0.0.0/8') }),
    error: /^Invalid origin\.host: must name the NFS server as the nodes reach it, got '127\.0\.0\.1': .*loopback/,
  },
  {
    name: 'nfs origin: localhost',
    build: nfsFleet({ host: 'localhost' }),
    error: /^Invalid origin\.host: .*got 'localhost'/,
  },
  {
    name: 'nfs origin: the metadata service',
    build: nfsFleet({ host: '169.254.169.254', peer: ec2.Peer.ipv4('169.254.0.0/16') }),
    error: /^Invalid origin\.host: .*got '169\.254\.169\.254': .*metadata service/,
  },
  {
    name: 'nfs origin: no export path',
    build: nfsFleet({ exportPath: '' }),
    error: /^Invalid origin\.exportPath: must be the absolute path the server exports .*got ''/,
  },
  {
    name: 'nfs origin: a relative export path',
    build: nfsFleet({ exportPath: 'srv/data' }),
    error: /^Invalid origin\.exportPath: .*got 'srv\/data'/,
  },
  {
    name: 'nfs origin: an export path with ..',
    build: nfsFleet({ exportPath: '/srv/../etc' }),
    error: /^Invalid origin\.exportPath: .*got '\/srv\/\.\.\/etc'/,
  },
  {
    name: 'nfs origin: an export path with a trailing /',
    build: nfsFleet({ exportPath: '/srv/data/' }),
    error: /^Invalid origin\.exportPath: .*no trailing \/.*got '\/srv\/data\/'/,
  },
  {
    name: 'nfs origin: an export path with a space',
    build: nfsFleet({ exportPath: '/srv/my data' }),
    error: /^Invalid origin\.exportPath: /,
  },
  {
    name: 'nfs origin: an export path as a token',
    build: nfsFleet((s) => ({ exportPath: new CfnParameter(s, 'Export').valueAsString })),
    error: /^Invalid origin\.exportPath: must be known at synth \(the fleet's fsid is derived from it\), got parameter Export/,
  },
  {
    name: 'nfs origin: no host',
    build: nfsFleet({ host: '' }),
    error: /^Invalid origin\.host: must be the server's DNS name .* or IPv4 address .*got ''/,
  },
  {
    name: 'nfs origin: a host with a space',
    build: nfsFleet({ host: 'nas example' }),
    error: /^Invalid origin\.host: .*got 'nas example'/,
  },
  {
    name: 'nfs origin: host and path in one',
    build: nfsFleet({ host: 'nas.example.internal:/srv' }),
    error: /^Invalid origin\.host: .*got 'nas\.example\.internal:\/srv'/,
  },
  {
    name: 'nfs origin: an IPv6 host',
    build: nfsFleet({ host: 'fd00::5', peer: ec2.Peer.ipv6('fd00::/64') }),
    error: /^Invalid origin\.host: .*an IPv6 address needs a DNS name.*got 'fd00::5'/,
  },
  {
    name: 'nfs origin: a host address out of range',
    build: nfsFleet({ host: '10.20.0.256' }),
    error: /^Invalid origin\.host: .*got '10\.20\.0\.256'/,
  },
  {
    name: 'nfs origin: nfsd on port 0',
    build: nfsFleet({ ports: { nfs: 0 } }),
    error: /^Invalid origin\.ports\.nfs: must be a TCP port, a whole number from 1 to 65535, got 0\./,
  },
  {
    name: 'nfs origin: mountd on port 65536',
    build: nfsFleet({ ports: { mountd: 65536 } }),
    error: /^Invalid origin\.ports\.mountd: must be a TCP port, .*got 65536\./,
  },
  {
    name: 'nfs origin: lockd on port 4045.5',
    build: nfsFleet({ ports: { lockd: 4045.5 } }),
    error: /^Invalid origin\.ports\.lockd: must be a TCP port, .*got 4045\.5\./,
  },
  {
    name: 'nfs origin: a port as a token',
    build: nfsFleet((s) => ({ ports: { mountd: new CfnParameter(s, 'Mountd', { type: 'Number' }).valueAsNumber } })),
    error: /^Invalid origin\.ports\.mountd: must be known at synth \(it is a security group rule and a mount option\)/,
  },
  {
    name: 'nfs origin: mountd with NFSv4.1',
    build: nfsFleet({ nfsVersion: NfsVersion.NFS_V4_1, ports: { mountd: 20048 } }),
    error: /^Invalid origin\.ports\.mountd: applies to NfsVersion\.NFS_V3 only: NFSv4\.1 needs nfsd's port alone/,
  },
  {
    name: 'nfs origin: lockd with NFSv4.2',
    build: nfsFleet({ nfsVersion: NfsVersion.NFS_V4_2, ports: { lockd: 4045 } }),
    error: /^Invalid origin\.ports\.lockd: applies to NfsVersion\.NFS_V3 only/,
  },
  {
    name: 'nfs origin: rpcbind with NFSv4.1',
    build: nfsFleet({ nfsVersion: NfsVersion.NFS_V4_1, ports: { rpcbind: true } }),
    error: /^Invalid origin\.ports\.rpcbind: applies to NfsVersion\.NFS_V3 only/,
  },
  {
    name: 'nfs origin: lockd without rpcbind',
    build: nfsFleet({ ports: { lockd: 4045, rpcbind: false } }),
    error: /^Invalid origin\.ports\.rpcbind: cannot be false with lockd: .*finds the server's lockd through rpcbind/,
  },
  {
    name: 'nfs origin: mountd on nfsd\'s port',
    build: nfsFleet({ ports: { mountd: 2049 } }),
    error: /^Invalid origin\.ports: names port 2049 twice/,
  },
  {
    name: 'nfs origin: lockd on rpcbind\'s port',
    build: nfsFleet({ ports: { lockd: 111 } }),
    error: /^Invalid origin\.ports: names port 111 twice/,
  },
  {
    name: 'nfs origin: every IPv4 address as the peer',
    build: nfsFleet({ peer: ec2.Peer.anyIpv4() }),
    error: /^Invalid origin\.peer: 0\.0\.0\.0\/0 would open the origin's ports to every address/,
  },
  {
    name: 'nfs origin: every IPv6 address as the peer',
    build: nfsFleet({ host: 'nas.example.internal', peer: ec2.Peer.anyIpv6() }),
    error: /^Invalid origin\.peer: ::\/0 would open the origin's ports to every address/,
  },
  {
    name: 'nfs origin: a peer with host bits set',
    build: nfsFleet({ peer: ec2.Peer.ipv4('10.20.0.5/16') }),
    error: /^Invalid origin\.peer: '10\.20\.0\.5\/16' has host bits set: the network is 10\.20\.0\.0\/16/,
  },
  {
    name: 'nfs origin: a peer that does not hold the host',
    build: nfsFleet({ peer: ec2.Peer.ipv4('10.30.0.0/16') }),
    error: /^Invalid origin\.peer: 10\.30\.0\.0\/16 does not hold the host 10\.20\.0\.5/,
  },
  {
    name: 'nfs origin: a version that is not an NfsVersion',
    build: nfsFleet({ nfsVersion: '4.0' as NfsVersion }),
    error: /^Invalid origin\.nfsVersion: must be NfsVersion\.NFS_V3, NFS_V4_1 or NFS_V4_2, got '4\.0'\./,
  },
  {
    name: 'nfs origin: the NFSv4.1 value of 0.1 (JavaScript): the values are the member names since 0.2',
    build: nfsFleet({ nfsVersion: '4.1' as NfsVersion }),
    error: /^Invalid origin\.nfsVersion: must be NfsVersion\.NFS_V3, NFS_V4_1 or NFS_V4_2, got '4\.1'\./,
  },
  {
    name: 'efs origin: the EFS_UTILS value of 0.1 (JavaScript), never rendered as a mount type',
    build: (stack, vpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack), { mountHelper: 'efs' as MountHelper }) }),
    error: /^Invalid origin\.mountHelper: must be MountHelper\.EFS_UTILS or MountHelper\.NFS, got 'efs'\./,
  },
  {
    name: 'nfs origin: no version (the version of 0.1, from JavaScript)',
    build: nfsFleet({ nfsVersion: undefined, version: NfsVersion.NFS_V3 } as Partial<NfsServerOptions>),
    error: /^Invalid origin\.nfsVersion: is required: the NFS version the nodes mount the server with/,
  },
];

refusesBadInput('bad input to OriginFileSystem and CacheOrigin names the prop', CASES);
