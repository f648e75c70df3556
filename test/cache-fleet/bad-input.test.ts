import { App, CfnParameter, Duration, Fn, Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  AccessLogsOptions,
  CachedFileSystem,
  CacheFleet,
  CacheFleetProps,
  CacheOrigin,
  Capacity,
  DiskCache,
  FanOut,
  Mirror,
  MirrorStorage,
  NfsVersion,
  NodeDiskCache,
} from '../../lib';
import { importedFs } from '../util';
import {
  BadInput,
  FSIDS,
  al2023x86,
  fleet,
  importedFleet,
  importedMirrors,
  isolatedVpc,
  mixedVpc,
  nfsFleet,
  refusesBadInput,
  twoFleets,
} from '../util/bad-input';

/**
 * What the fleet (CacheFleet, fromCacheFleetAttributes) refuses at synth, or warns about, each case naming the prop to
 * change. What its origin (CacheOrigin) refuses: test/origin/bad-input.test.ts.
 */
const CASES: BadInput[] = [
  // CacheFleet
  {
    name: 'fleet: zero nodes',
    build: fleet({ capacity: Capacity.nodes(0) }),
    error: /^Invalid capacity: a cache fleet needs at least one node/,
  },
  {
    name: 'fleet: a fraction of a node',
    build: fleet({ capacity: Capacity.nodes(1.5) }),
    error: /^Invalid capacity: must be a whole number/,
  },
  {
    name: 'fleet: more nodes than one stack holds',
    build: fleet({ capacity: Capacity.nodes(129) }),
    error: /^Invalid capacity: at most 128 nodes fit in one stack, got 129: .*500 resources per stack\. .*FanOut\.route53\(\{ zoneName \}\)/,
  },
  {
    name: 'fleet: a relative export path',
    build: fleet({ exportPath: 'efs' }),
    error: /^Invalid exportPath: must be an absolute path/,
  },
  {
    name: 'fleet: / as export path',
    build: fleet({ exportPath: '/' }),
    error: /^Invalid exportPath/,
  },
  {
    name: 'fleet: a relative origin path',
    build: fleet({ originPath: 'data' }),
    error: /^Invalid originPath: must be an absolute path in the file system/,
  },
  {
    name: 'fleet: a warm path outside the export',
    build: fleet({ warming: { paths: ['/data/x'] } }),
    error: /^Invalid warming\.paths: '\/data\/x' is outside the export/,
  },
  {
    name: 'fleet: a relative warm path',
    build: fleet({ warming: { paths: ['x'] } }),
    error: /^Invalid warming\.paths: 'x' is not an absolute path/,
  },
  {
    name: 'fleet: re-warming with nothing to warm',
    build: fleet({ warming: { paths: [], rewarmInterval: Duration.hours(1) } }),
    error: /^Invalid warming\.paths: is empty: there is nothing to warm\. Leave warming out for no warming\./,
  },
  {
    name: 'fleet: warm workers with nothing to warm (JavaScript: no paths)',
    build: fleet({ warming: { workers: 4 } } as unknown as Partial<CacheFleetProps>),
    error: /^Invalid warming\.paths: is empty: there is nothing to warm/,
  },
  {
    name: 'fleet: a mirror path outside the export',
    build: fleet({ mirrors: [Mirror.path('/data/app')] }),
    error: /^Invalid mirrors: '\/data\/app' is not under the export/,
  },
  {
    name: 'fleet: the whole export as a mirror',
    build: fleet({ mirrors: [Mirror.path('/efs')] }),
    error: /^Invalid mirrors: '\/efs' is not under the export/,
  },
  {
    name: 'fleet: a relative mirror path',
    build: fleet({ mirrors: [Mirror.path('app')] }),
    error: /^Invalid mirrors: 'app' is not an absolute path/,
  },
  {
    name: 'fleet: a mirror path with ..',
    build: fleet({ mirrors: [Mirror.path('/efs/../etc')] }),
    error: /^Invalid mirrors: '\/efs\/\.\.\/etc' is not an absolute path/,
  },
  {
    name: 'fleet: a mirror inside another',
    build: fleet({ mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/app/lib')] }),
    error: /^Invalid mirrors: '\/efs\/app\/lib' is inside '\/efs\/app'/,
  },
  {
    name: 'fleet: a mirror path twice',
    build: fleet({ mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/app')] }),
    error: /^Invalid mirrors: lists a path twice/,
  },
  {
    name: 'fleet: a mirror interval with nothing to mirror',
    build: fleet({ mirroring: { interval: Duration.minutes(1) } }),
    error: /^Invalid mirroring\.interval: needs mirrors/,
  },
  {
    name: 'fleet: a mirror storage with nothing to mirror',
    build: fleet({ mirroring: { storage: MirrorStorage.MEMORY } }),
    error: /^Invalid mirroring\.storage: needs mirrors/,
  },
  {
    name: 'fleet: mirrors on an instance store the nodes do not use',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { storage: MirrorStorage.INSTANCE_STORE } }),
    error: /^Invalid mirroring\.storage: INSTANCE_STORE needs the second cache level/,
  },
  {
    name: 'fleet: a mirror size with nothing to mirror',
    build: fleet({ mirroring: { size: Size.gibibytes(1) } }),
    error: /^Invalid mirroring\.size: needs mirrors/,
  },
  {
    name: 'fleet: a mirror interval under 10 s',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { interval: Duration.seconds(5) } }),
    error: /^Invalid mirroring\.interval: must be whole seconds from 10 seconds to 24 hours/,
  },
  {
    name: 'fleet: a mirror interval of part of a second',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { interval: Duration.millis(10500) } }),
    error: /^Invalid mirroring\.interval: must be whole seconds/,
  },
  {
    name: 'fleet: a mirror size of part of a MiB',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { size: Size.kibibytes(1536) } }),
    error: /^Invalid mirroring\.size: must be whole MiB/,
  },
  {
    name: 'fleet: a disk cache on a node type without instance store',
    build: fleet({ nodeDiskCache: NodeDiskCache.instanceStore() }),
    error: /^Invalid nodeDiskCache: c7gn\.16xlarge has no NVMe instance store/,
  },
  {
    name: 'fleet: a disk cache on a Xen type whose instance store is not NVMe',
    build: fleet({ nodeDiskCache: NodeDiskCache.instanceStore(), instanceType: new ec2.InstanceType('m3.xlarge') }),
    error: /^Invalid nodeDiskCache: m3\.xlarge has no NVMe instance store/,
  },
  {
    name: 'fleet: a disk cache device model with a newline',
    build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: NodeDiskCache.instanceStore({ deviceModel: 'A\nB' }) }),
    error: /^Invalid nodeDiskCache\.deviceModel: must be printable ASCII/,
  },
  {
    name: 'fleet: nodeDiskCache: true, the boolean of 0.1 (JavaScript)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: true } as unknown as Partial<CacheFleetProps>),
    error: /^Invalid nodeDiskCache: is no longer a boolean in 0\.2: give nodeDiskCache: NodeDiskCache\.instanceStore\(\)\./,
  },
  {
    name: 'fleet: nodeDiskCache: false, the boolean of 0.1 (JavaScript)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: false } as unknown as Partial<CacheFleetProps>),
    error: /^Invalid nodeDiskCache: is no longer a boolean in 0\.2: give nodeDiskCache: NodeDiskCache\.none\(\)\./,
  },
  {
    name: 'fleet: a client DiskCache given as nodeDiskCache (JavaScript)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), nodeDiskCache: DiskCache.instanceStore() } as unknown as Partial<CacheFleetProps>),
    error: /^Invalid nodeDiskCache: must be NodeDiskCache\.instanceStore\(\) or NodeDiskCache\.none\(\), got an object of another kind\./,
  },
  ...([
    ['nodeDiskCacheDeviceModel', '{ deviceModel }'],
    ['nodeDiskCacheRequireSelfTest', '{ requireSelfTest }'],
  ] as const).map(([prop, options]): BadInput => ({
    name: `fleet: the ${prop} prop, moved into nodeDiskCache in 0.2 (JavaScript)`,
    build: fleet({ instanceType: new ec2.InstanceType('c7gd.16xlarge'), [prop]: 'x' } as Partial<CacheFleetProps>),
    error: new RegExp(`^Invalid ${prop}: was moved into nodeDiskCache in 0\\.2: give nodeDiskCache: NodeDiskCache\\.instanceStore\\(${options.replace(/[{}]/g, '\\$&')}\\)\\.`),
  })),
  {
    name: 'fleet: a mirror sync timeout under 10 s',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { syncTimeout: Duration.seconds(2) } }),
    error: /^Invalid mirroring\.syncTimeout: must be whole seconds from 10 seconds/,
  },
  {
    name: 'fleet: no mirror sync jobs',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { syncWorkers: 0 } }),
    error: /^Invalid mirroring\.syncWorkers: must be a whole number from 1 to 64, got 0\./,
  },
  {
    name: 'fleet: mirror sync jobs with nothing to mirror',
    build: fleet({ mirroring: { syncWorkers: 4 } }),
    error: /^Invalid mirroring\.syncWorkers: needs mirrors/,
  },
  {
    name: 'fleet: a change marker with nothing to mirror',
    build: fleet({ mirroring: { changeMarker: '.published' } }),
    error: /^Invalid mirroring\.changeMarker: needs mirrors/,
  },
  {
    name: 'fleet: an absolute change marker',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '/efs/app/.published' } }),
    error: /^Invalid mirroring\.changeMarker: '\/efs\/app\/\.published' is not a path relative to each mirror's root/,
  },
  {
    name: 'fleet: a change marker above the mirror',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '../.published' } }),
    error: /^Invalid mirroring\.changeMarker: '\.\.\/\.published' is not a path relative/,
  },
  {
    name: 'fleet: a change marker with a . component',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: 'deploy/./done' } }),
    error: /^Invalid mirroring\.changeMarker: 'deploy\/\.\/done' is not a path relative/,
  },
  {
    name: 'fleet: an empty change marker',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '' } }),
    error: /^Invalid mirroring\.changeMarker: '' is not a path relative/,
  },
  {
    name: 'fleet: a change marker with a blank',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: 'a b' } }),
    error: /^Invalid mirroring\.changeMarker: 'a b' is not a path relative/,
  },
  {
    name: 'fleet: a change marker with an empty component',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: 'deploy//done' } }),
    error: /^Invalid mirroring\.changeMarker: 'deploy\/\/done' is not a path relative/,
  },
  {
    name: 'fleet: a change marker that is a directory path',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: 'deploy/' } }),
    error: /^Invalid mirroring\.changeMarker: 'deploy\/' is not a path relative/,
  },
  {
    name: 'fleet: a full sync interval without a change marker',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { fullSyncInterval: Duration.hours(2) } }),
    error: /^Invalid mirroring\.fullSyncInterval: applies only with mirroring\.changeMarker/,
  },
  {
    name: 'fleet: a full sync interval with nothing to mirror',
    build: fleet({ mirroring: { fullSyncInterval: Duration.hours(2) } }),
    error: /^Invalid mirroring\.fullSyncInterval: needs mirrors/,
  },
  {
    name: 'fleet: a full sync interval shorter than the mirror interval',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published', interval: Duration.minutes(5), fullSyncInterval: Duration.minutes(2) } }),
    error: /^Invalid mirroring\.fullSyncInterval: must be at least mirroring\.interval \(5 minutes\), got 2 minutes\./,
  },
  {
    name: 'fleet: a mirror interval longer than the default full sync interval',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published', interval: Duration.hours(2) } }),
    error: /^Invalid mirroring\.fullSyncInterval: must be at least mirroring\.interval \(2 hours\), got 1 hour\./,
  },
  {
    name: 'fleet: a full sync interval over 7 days',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published', fullSyncInterval: Duration.days(8) } }),
    error: /^Invalid mirroring\.fullSyncInterval: must be whole seconds from 10 seconds to 7 days, got 8 days\./,
  },
  {
    name: 'fleet: a full sync interval of part of a second',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { changeMarker: '.published', fullSyncInterval: Duration.millis(3600500) } }),
    error: /^Invalid mirroring\.fullSyncInterval: must be whole seconds/,
  },
  {
    name: 'fleet: exporting to everyone',
    build: fleet({ clientCidrs: ['0.0.0.0/0'] }),
    error: /^Invalid clientCidrs: 0.0.0.0\/0 would export to everyone/,
  },
  {
    name: 'fleet: an address instead of a CIDR block',
    build: fleet({ clientCidrs: ['10.0.0.1'] }),
    error: /^Invalid clientCidrs: '10.0.0.1' is not a CIDR block/,
  },
  {
    name: 'fleet: an empty client list',
    build: fleet({ clientCidrs: [] }),
    error: /^Invalid clientCidrs: is empty/,
  },
  {
    name: 'fleet: everyone as 0/0 shorthand',
    build: fleet({ clientCidrs: ['0/0'] }),
    error: /^Invalid clientCidrs: 0\/0 would export to everyone: a \/0 prefix matches every address/,
  },
  {
    name: 'fleet: everyone as a /0 of a private network',
    build: fleet({ clientCidrs: ['10.0.0.0/0'] }),
    error: /^Invalid clientCidrs: 10.0.0.0\/0 would export to everyone/,
  },
  {
    name: 'fleet: everyone as /00',
    build: fleet({ clientCidrs: ['10.0.0.0/00'] }),
    error: /^Invalid clientCidrs: 10.0.0.0\/00 would export to everyone/,
  },
  {
    name: 'fleet: everyone as an all-zero netmask',
    build: fleet({ clientCidrs: ['10.0.0.0/0.0.0.0'] }),
    error: /^Invalid clientCidrs: 10.0.0.0\/0.0.0.0 would export to everyone/,
  },
  {
    name: 'fleet: every IPv6 address (::/0)',
    build: fleet({ clientCidrs: ['::/0'] }),
    error: /^Invalid clientCidrs: ::\/0 would export to everyone/,
  },
  {
    name: 'fleet: every IPv6 address (::0/0)',
    build: fleet({ clientCidrs: ['10.1.0.0/16', '::0/0'] }),
    error: /^Invalid clientCidrs: ::0\/0 would export to everyone/,
  },
  {
    name: 'fleet: every IPv6 address (0000::/0)',
    build: fleet({ clientCidrs: ['0000::/0'] }),
    error: /^Invalid clientCidrs: 0000::\/0 would export to everyone/,
  },
  {
    name: 'fleet: two IPv4 halves cover everyone',
    build: fleet({ clientCidrs: ['0.0.0.0/1', '128.0.0.0/1'] }),
    error: /^Invalid clientCidrs: 0.0.0.0\/1, 128.0.0.0\/1 together would export to everyone: they cover every IPv4 address/,
  },
  {
    name: 'fleet: IPv4 quarters and a half cover everyone',
    build: fleet({ clientCidrs: ['192.0.0.0/2', '10.1.0.0/16', '0.0.0.0/1', '128.0.0.0/2'] }),
    error: /^Invalid clientCidrs: .* together would export to everyone: they cover every IPv4 address/,
  },
  {
    name: 'fleet: two IPv6 halves cover everyone',
    build: fleet({ clientCidrs: ['::/1', '8000::/1'] }),
    error: /^Invalid clientCidrs: ::\/1, 8000::\/1 together would export to everyone: they cover every IPv6 address/,
  },
  {
    name: 'fleet: an IPv4 prefix over 32',
    build: fleet({ clientCidrs: ['10.0.0.0/33'] }),
    error: /^Invalid clientCidrs: '10.0.0.0\/33' has an invalid prefix length '33': an IPv4 prefix is a whole number from 1 to 32/,
  },
  {
    name: 'fleet: a negative prefix',
    build: fleet({ clientCidrs: ['10.0.0.0/-1'] }),
    error: /^Invalid clientCidrs: '10.0.0.0\/-1' has an invalid prefix length/,
  },
  {
    name: 'fleet: an IPv6 prefix over 128',
    build: fleet({ clientCidrs: ['fd00::/129'] }),
    error: /^Invalid clientCidrs: 'fd00::\/129' has an invalid prefix length '129': an IPv6 prefix is a whole number from 1 to 128/,
  },
  {
    name: 'fleet: a prefix with a leading zero',
    build: fleet({ clientCidrs: ['10.0.0.0/08'] }),
    error: /^Invalid clientCidrs: '10.0.0.0\/08' has an invalid prefix length/,
  },
  {
    name: 'fleet: an octet over 255',
    build: fleet({ clientCidrs: ['999.1.1.1/8'] }),
    error: /^Invalid clientCidrs: '999.1.1.1\/8' is not a CIDR block: '999.1.1.1' is not an IPv4 address/,
  },
  {
    name: 'fleet: an octet with a leading zero (octal to inet_aton)',
    build: fleet({ clientCidrs: ['010.0.0.0/8'] }),
    error: /^Invalid clientCidrs: '010.0.0.0\/8' is not a CIDR block/,
  },
  {
    name: 'fleet: a shortened IPv4 address',
    build: fleet({ clientCidrs: ['10/8'] }),
    error: /^Invalid clientCidrs: '10\/8' is not a CIDR block/,
  },
  {
    name: 'fleet: an IPv6 address with two ::',
    build: fleet({ clientCidrs: ['fd00::1::/64'] }),
    error: /^Invalid clientCidrs: 'fd00::1::\/64' is not a CIDR block/,
  },
  {
    name: 'fleet: an IPv6 address with a zone',
    build: fleet({ clientCidrs: ['fe80::1%eth0/64'] }),
    error: /^Invalid clientCidrs: 'fe80::1%eth0\/64' is not a CIDR block/,
  },
  {
    name: 'fleet: garbage',
    build: fleet({ clientCidrs: ['10.1.0.0/16', 'my clients'] }),
    error: /^Invalid clientCidrs: 'my clients' is not a CIDR block: write address\/prefix length/,
  },
  {
    name: 'fleet: an IPv4 network with host bits set',
    build: fleet({ clientCidrs: ['10.0.0.1/8'] }),
    error: /^Invalid clientCidrs: '10.0.0.1\/8' has host bits set: the network is 10.0.0.0\/8; for the one address write 10.0.0.1\/32/,
  },
  {
    name: 'fleet: an IPv6 network with host bits set',
    build: fleet({ clientCidrs: ['fd00::1/64'] }),
    error: /^Invalid clientCidrs: 'fd00::1\/64' has host bits set: the network is fd00::\/64; for the one address write fd00::1\/128/,
  },
  {
    name: 'fleet: an IPv4-mapped IPv6 network',
    build: fleet({ clientCidrs: ['::ffff:10.0.0.0/104'] }),
    error: /^Invalid clientCidrs: '::ffff:10.0.0.0\/104' is an IPv4-mapped IPv6 network; write IPv4 clients as IPv4 \(10.0.0.0\/8\)/,
  },
  {
    name: 'fleet: zero nfsd threads',
    build: fleet({ tuning: { nfsdThreads: 0 } }),
    error: /^Invalid tuning\.nfsdThreads: must be a whole number from 1 to 4096, got 0\. \(at [^;]*; in Python: tuning\.nfsd_threads\)/,
  },
  {
    name: 'fleet: an attribute cache timeout over an hour',
    build: fleet({ attributeCacheTimeout: Duration.hours(2) }),
    error: /^Invalid attributeCacheTimeout: must be between 0 and 60 minutes/,
  },
  {
    name: 'fleet: a signal timeout past CloudFormation\'s 12 hours',
    build: fleet({ signalTimeout: Duration.hours(13) }),
    error: /^Invalid signalTimeout: must be whole seconds from 5 minutes to 12 hours, got 13 hours/,
  },
  {
    name: 'fleet: a signal timeout too short to boot',
    build: fleet({ signalTimeout: Duration.seconds(30) }),
    error: /^Invalid signalTimeout/,
  },
  {
    name: 'fleet: a root volume smaller than the image',
    build: fleet({ rootVolumeSize: Size.gibibytes(4) }),
    error: /^Invalid rootVolumeSize: must be whole GiB from 8 to 16384, got 4 GiB/,
  },
  {
    name: 'fleet: a read-ahead of 1 TiB',
    build: fleet({ tuning: { readAhead: Size.tebibytes(1) } }),
    error: /^Invalid tuning\.readAhead: must be whole KiB from 0 to 1 GiB/,
  },
  {
    name: 'fleet: an empty working set',
    build: fleet({ workingSetSize: Size.gibibytes(0) }),
    error: /^Invalid workingSetSize: must be more than 0 bytes/,
  },
  {
    name: 'fleet: an elastic fleet in isolated subnets (warning names S3 for the code and Auto Scaling)',
    build: (stack) => new CacheFleet(stack, 'Fleet', {
      vpc: isolatedVpc(stack), origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer(),
      capacity: Capacity.elastic({ maxNodes: 4 }),
    }),
    warning: new RegExp(/^vpcSubnets: the instances of .*\/Fleet run in isolated subnets .*S3 \(the instances' code: a gateway endpoint\).*/.source +
      /Auto Scaling \(an elastic node completes its lifecycle hooks: without it every node is abandoned\)/.source),
  },
  {
    name: 'fleet: isolated subnets by default (warning)',
    build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: isolatedVpc(stack), origin: CacheOrigin.efs(importedFs(stack)) }),
    warning: /^vpcSubnets: the instances of .*\/Fleet run in isolated subnets .*package repositories.*CloudFormation.*EC2.*CloudWatch.*SSM/,
  },
  {
    name: 'fleet: isolated subnets chosen in a mixed VPC (warning)',
    build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: mixedVpc(stack), origin: CacheOrigin.efs(importedFs(stack)), vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } }),
    warning: /^vpcSubnets: the instances of .*\/Fleet run in isolated subnets/,
  },
  {
    name: 'fleet: isolated subnets behind an NLB, metrics off (warning)',
    build: (stack) => new CacheFleet(stack, 'Fleet', { vpc: isolatedVpc(stack, 1), origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.networkLoadBalancer(), metrics: false }),
    warning: /^vpcSubnets: (?!.*EC2 \(attaching)(?!.*CloudWatch).*endpoints for the package repositories .*CloudFormation.*SSM, ssmmessages/,
  },
  {
    name: 'fleet: a node type of unknown memory (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('x2gd.4xlarge') }),
    warning: /^instanceType: the memory of x2gd.4xlarge is not known here, so workingSetSize cannot be checked against its memory/,
  },
  {
    name: 'fleet: a burstable node type (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('t4g.large'), workingSetSize: Size.gibibytes(100) }),
    warning: /^instanceType: the memory of t4g.large is not known here, so workingSetSize cannot be checked/,
  },
  {
    name: 'fleet: a Xen node type whose memory ratio differs (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('c4.8xlarge') }),
    warning: /^instanceType: the memory of c4.8xlarge is not known here/,
  },
  {
    name: 'fleet: a bare-metal node type (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gn.metal') }),
    warning: new RegExp(/^instanceType: the vCPUs and memory of c7gn.metal are not known here, so each node runs 64 nfsd threads by default /.source +
      /\(set tuning\.nfsdThreads to size them\), and workingSetSize cannot be checked/.source),
  },
  {
    name: 'fleet: a node type name that does not parse (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge'), machineImage: al2023x86 }),
    warning: /^instanceType: the vCPUs and memory of u-6tb1.112xlarge are not known here, so each node runs 64 nfsd threads/,
  },
  {
    name: 'fleet: unknown vCPUs with nfsdThreads given (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('m7i.metal-48xl'), tuning: { nfsdThreads: 192 } }),
    warning: /^instanceType: the vCPUs and memory of m7i.metal-48xl are not known here, so workingSetSize cannot be checked/,
  },
  {
    name: 'fleet: the default type where it is not offered (warning)',
    region: 'ap-south-1',
    build: fleet({}),
    warning: new RegExp(/^instanceType: the default c7gn.16xlarge is not offered in ap-south-1 \(per cfn-lint [0-9.]+ .*\), so instances would fail to launch there. /.source +
      /Pass instanceType, for example c8gn.16xlarge or c6gn.16xlarge, offered in ap-south-1/.source),
  },
  {
    name: 'fleet: the default type where the next alternative is x86_64 (warning)',
    region: 'me-central-1',
    build: fleet({ capacity: Capacity.nodes(1) }),
    warning: /^instanceType: the default c7gn.16xlarge is not offered in me-central-1 .*for example c8gn.16xlarge or c6in.16xlarge \(x86_64\)/,
  },
  {
    name: 'fleet: the default type in a GovCloud region (warning)',
    region: 'us-gov-west-1',
    build: fleet({ workingSetSize: Size.gibibytes(64) }),
    warning: /^instanceType: the default c7gn.16xlarge is not offered in us-gov-west-1/,
  },
  {
    name: 'fleet: a working set larger than the node type\'s memory (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gn.4xlarge'), workingSetSize: Size.gibibytes(100) }),
    warning: /^workingSetSize: 100 GiB does not fit .* \(32 GiB\)/,
  },
  // FanOut (the options of each mode; an option of the other mode cannot be written)
  {
    name: 'fan-out: a zone name together with a hosted zone',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.route53({ hostedZone: new route53.PrivateHostedZone(stack, 'Zone', { zoneName: 'corp.internal', vpc }), zoneName: 'data.internal' }),
    })(stack, vpc),
    error: new RegExp(/^Invalid fanOut\.zoneName: names a new hosted zone, but hostedZone gives an existing one\. Remove one of them\. /.source +
      /\(at TestStack\/Fleet; in Python: fan_out\.zone_name\)/.source),
  },
  {
    name: 'fan-out: an access-log prefix without a bucket (JavaScript)',
    build: fleet({ fanOut: FanOut.networkLoadBalancer({ accessLogs: { prefix: 'x' } as AccessLogsOptions }) }),
    error: /^Invalid fanOut\.accessLogs\.bucket: is required/,
  },
  {
    name: 'fan-out: an access-log prefix ELB refuses',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: s3.Bucket.fromBucketName(stack, 'Logs', 'logs'), prefix: 'logs/AWSLogs' } }),
    })(stack, vpc),
    error: /^Invalid fanOut\.accessLogs\.prefix: 'logs\/AWSLogs' cannot start or end with \/ nor contain AWSLogs/,
  },
  {
    name: 'fan-out: an access-log prefix known only at deploy time (IAM would read * or ? in it as a wildcard)',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: s3.Bucket.fromBucketName(stack, 'Logs', 'logs'), prefix: Fn.importValue('Prefix') } }),
    })(stack, vpc),
    error: /^Invalid fanOut\.accessLogs\.prefix: must be known at synth \(the bucket policy lets the log delivery write only under it\)/,
  },
  {
    name: 'fan-out: an NLB idle timeout out of range',
    build: fleet({ fanOut: FanOut.networkLoadBalancer({ idleTimeout: Duration.seconds(10) }) }),
    error: /^Invalid fanOut\.idleTimeout: must be between 60 and 6000 .*in Python: fan_out\.idle_timeout/,
  },
  {
    name: 'fan-out: an NLB idle timeout as a token',
    build: (stack, vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer({ idleTimeout: Duration.seconds(new CfnParameter(stack, 'Idle', { type: 'Number' }).valueAsNumber) }),
    })(stack, vpc),
    error: /^Invalid fanOut\.idleTimeout: must be known at synth/,
  },
  {
    name: 'fan-out: a bad zone name',
    build: fleet({ fanOut: FanOut.route53({ zoneName: 'Not A Zone' }) }),
    error: /^Invalid fanOut\.zoneName: 'Not A Zone' is not a valid DNS zone name/,
  },
  {
    name: 'fan-out: a record name with a space',
    build: fleet({ fanOut: FanOut.route53({ recordName: 'my cache' }) }),
    error: /^Invalid fanOut\.recordName: 'my cache' is not a valid DNS name/,
  },
  {
    name: 'fan-out: a record TTL over a day',
    build: fleet({ fanOut: FanOut.route53({ recordTtl: Duration.days(2) }) }),
    error: /^Invalid fanOut\.recordTtl: must be between 0 seconds and 1 day/,
  },
  {
    name: 'fan-out: an access-log bucket encrypted with the AWS managed key aws/s3',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: new s3.Bucket(stack, 'Logs', { encryption: s3.BucketEncryption.KMS_MANAGED }) } }),
    })(stack, vpc),
    error: new RegExp(/^Invalid fanOut\.accessLogs\.bucket: is encrypted with the AWS managed key aws\/s3 .*which the log delivery /.source +
      /service cannot use: no access log would be written\. Give the bucket BucketEncryption\.S3_MANAGED, or BucketEncryption\.KMS /.source +
      /with a key of your own .*in Python: fan_out\.access_logs\.bucket\)$/.source),
  },
  {
    name: 'fan-out: an access-log bucket encrypted with the AWS managed key, dual-layer (DSSE)',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: new s3.Bucket(stack, 'Logs', { encryption: s3.BucketEncryption.DSSE_MANAGED }) } }),
    })(stack, vpc),
    error: /^Invalid fanOut\.accessLogs\.bucket: is encrypted with the AWS managed key aws\/s3/,
  },
  {
    name: 'fan-out: an access-log bucket in another region than the load balancer',
    region: 'us-east-1',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: s3.Bucket.fromBucketAttributes(stack, 'Logs', { bucketName: 'logs', region: 'eu-west-1' }) } }),
    })(stack, vpc),
    error: /^Invalid fanOut\.accessLogs\.bucket: is in eu-west-1, the load balancer in us-east-1: .*only to a bucket of its own region.* Give a bucket in us-east-1\./,
  },
  {
    name: 'fan-out: an NLB idle timeout of part of a second',
    build: fleet({ fanOut: FanOut.networkLoadBalancer({ idleTimeout: Duration.seconds(90.5) }) }),
    error: /^Invalid fanOut\.idleTimeout: must be whole seconds \(Elastic Load Balancing takes a number of seconds\), got 90\.5 seconds\./,
  },
  {
    name: 'fan-out: a record TTL of part of a second',
    build: fleet({ fanOut: FanOut.route53({ recordTtl: Duration.millis(1500) }) }),
    error: /^Invalid fanOut\.recordTtl: must be whole seconds \(a DNS TTL is a number of seconds\), got 1\.5 seconds\./,
  },
  {
    name: 'fan-out: a zone name over DNS\'s 253 characters',
    build: fleet({ fanOut: FanOut.route53({ zoneName: `${Array.from({ length: 5 }, () => 'x'.repeat(60)).join('.')}.internal` }) }),
    error: /^Invalid fanOut\.zoneName: is 313 characters, over DNS's 253 \(Route 53 refuses the zone at deploy time\)\. Give a shorter zoneName\./,
  },
  {
    name: 'fan-out: a zone name whose records are over DNS\'s 253 characters',
    build: fleet({ fanOut: FanOut.route53({ zoneName: `${Array.from({ length: 4 }, () => 'x'.repeat(60)).join('.')}.internal` }) }),
    error: new RegExp(/^Invalid fanOut\.zoneName: makes the record '<az>\.cache\.x{60}\.x{60}\.x{60}\.x{60}\.internal', 280 characters: /.source +
      /over DNS's 253, which Route 53 refuses at deploy time\. Shorten zoneName or recordName by 27 characters or more\./.source),
  },
  {
    name: 'fan-out: a record name whose records are over DNS\'s 253 characters',
    build: fleet({ fanOut: FanOut.route53({ recordName: Array.from({ length: 4 }, () => 'r'.repeat(60)).join('.') }) }),
    error: /^Invalid fanOut\.recordName: makes the record '<az>\.r{60}.*\.efs-cache\.internal', 284 characters: .*Shorten recordName by 31 characters or more\./,
  },
  ...([
    ['amazonaws.com', '', 'AWS\'s service endpoints'],
    ['s3.us-east-1.amazonaws.com', ' is under amazonaws.com', 'AWS\'s service endpoints'],
    ['amazonaws.com.cn', '', 'AWS\'s service endpoints in China'],
    ['ec2.us-east-1.api.aws', ' is under api.aws', 'AWS\'s dual-stack service endpoints'],
    ['ec2.internal', '', 'the VPC\'s own host names in us-east-1'],
    ['eu-west-1.compute.internal', ' is under compute.internal', 'the VPC\'s own host names'],
    ['compute.internal', '', 'the VPC\'s own host names'],
  ] as const).map(([zoneName, under, what]): BadInput => ({
    name: `fan-out: a zone named ${zoneName}, which shadows ${what} for the whole VPC`,
    build: fleet({ fanOut: FanOut.route53({ zoneName }) }),
    error: new RegExp(`^Invalid fanOut\\.zoneName: '${zoneName.replace(/\./g, '\\.')}'${under.replace(/\./g, '\\.')}: a private hosted zone of that name ` +
      `would answer, for every instance of the VPC, for ${what.replace(/[()]/g, '\\$&')}.*Give a name of your own, such as 'efs-cache\\.internal'`),
  })),
  {
    name: 'elastic: a scale-in cooldown from a token',
    build: (stack: Stack, vpc: ec2.Vpc) => fleet({
      fanOut: FanOut.networkLoadBalancer(),
      capacity: Capacity.elastic({ maxNodes: 4, scaleInCooldown: Duration.minutes(new CfnParameter(stack, 'Cool', { type: 'Number' }).valueAsNumber) }),
    })(stack, vpc),
    error: /^Invalid capacity\.scaleInCooldown: must be known at synth \(the scale-in policy's cooldown, in seconds, and its alarm's count of one-minute periods/,
  },
  {
    name: 'fan-out: a FanOutMode value of 0.1 (JavaScript)',
    build: fleet({ fanOut: 'nlb' as unknown as FanOut }),
    error: /^Invalid fanOut: must be FanOut\.route53\(\) or FanOut\.networkLoadBalancer\(\), got 'nlb'\. FanOutMode\.ROUTE53 is FanOut\.route53\(\)/,
  },
  // Messages: instance type names aws-cdk-lib cannot read, and tokens where a value is needed at synth
  {
    name: 'fleet: an instance type name without its dot',
    build: fleet({ instanceType: new ec2.InstanceType('c7gn16xlarge') }),
    error: /^Invalid instanceType: 'c7gn16xlarge' is not an EC2 instance type name: a name reads <family><generation><attributes>\.<size> in lower case, for example c7gn\.16xlarge/,
  },
  {
    name: 'fleet: a Windows image',
    build: fleet({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.latestWindows(ec2.WindowsVersion.WINDOWS_SERVER_2022_ENGLISH_FULL_BASE) }),
    error: /^Invalid machineImage: is a Windows image: the instances run bash scripts as Linux user data\. Use Amazon Linux 2023/,
  },
  {
    name: 'fleet: Amazon Linux 2',
    build: fleet({ instanceType: new ec2.InstanceType('c6in.xlarge'), machineImage: ec2.MachineImage.latestAmazonLinux2() }),
    error: /^Invalid machineImage: is Amazon Linux 2 or older \('\/aws\/service\/ami-amazon-linux-latest\/amzn2-ami-kernel-5\.10-hvm-x86_64-gp2'\): the scripts install packages with dnf/,
  },
  {
    name: 'fleet: a type whose architecture CDK cannot read, with the default image',
    build: fleet({ instanceType: new ec2.InstanceType('u-6tb1.112xlarge') }),
    error: /^Invalid instanceType: the architecture of u-6tb1\.112xlarge cannot be read from its name .*give a machineImage/,
  },
  {
    name: 'fleet: a node count as a token',
    build: (stack, vpc) => fleet({ capacity: Capacity.nodes(new CfnParameter(stack, 'Nodes', { type: 'Number' }).valueAsNumber) })(stack, vpc),
    error: /^Invalid capacity: must be known at synth .*got parameter Nodes \(a token, known at deploy time\)/,
  },
  // Route 53 names that two fleets would both claim (Route 53 refuses the second at deploy)
  {
    name: 'fleets: two with the default zone on one VPC',
    build: twoFleets({}),
    error: new RegExp(/^Invalid fanOut\.zoneName: a private hosted zone named 'efs-cache.internal' on this VPC already belongs to the fleet /.source +
      /TestStack\/Fleet: .*another zoneName/.source),
  },
  {
    name: 'fleets: two cached file systems with fleets in one stack',
    build: (stack, vpc) => [1, 2].map((i) => new CachedFileSystem(stack, `Data${i}`, { vpc, cacheFleet: {} })),
    error: /^Invalid fanOut\.zoneName: .*already belongs to the fleet TestStack\/Data1\/CacheFleet/,
  },
  {
    name: 'fleets: one zone name with a trailing dot',
    build: twoFleets({ fanOut: FanOut.route53({ zoneName: 'data.example.internal.' }) }, { fanOut: FanOut.route53({ zoneName: 'data.example.internal' }) }),
    error: /^Invalid fanOut\.zoneName: a private hosted zone named 'data.example.internal.' on this VPC/,
  },
  {
    name: 'fleets: the same zone name in two stacks on one imported VPC',
    build: (stack) => ['Other', 'Mine'].map((id) => {
      const s = id === 'Mine' ? stack : new Stack(stack.node.root as App, id);
      const vpc = ec2.Vpc.fromVpcAttributes(s, 'Shared', {
        vpcId: 'vpc-0123456789abcdef0', vpcCidrBlock: '10.0.0.0/16', availabilityZones: ['us-east-1a'], privateSubnetIds: ['subnet-0123456789abcdef0'],
      });
      return new CacheFleet(s, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(s)) });
    }),
    error: /^Invalid fanOut\.zoneName: .*already belongs to the fleet Other\/Fleet/,
  },
  {
    name: 'fleets: a shared hosted zone with the default record name',
    build: twoFleets((first) => ({ fanOut: FanOut.route53({ hostedZone: first.hostedZone }) })),
    error: /^Invalid fanOut\.recordName: the record 'cache' in this hosted zone already belongs to the fleet TestStack\/Fleet: .*its own recordName/,
  },
  {
    name: 'fleets: a record name that is another fleet\'s node name',
    build: twoFleets((first) => ({ fanOut: FanOut.route53({ hostedZone: first.hostedZone, recordName: 'node2.cache' }) })),
    error: /^Invalid fanOut\.recordName: the record 'node2.cache' in this hosted zone already belongs to the fleet TestStack\/Fleet/,
  },
  {
    name: 'efs-utils: a fleet on a custom image (warning)',
    build: fleet({ machineImage: ec2.MachineImage.fromSsmParameter('/aws/service/canonical/ubuntu/server/24.04/stable/current/arm64/hvm/ebs-gp3/ami-id') }),
    warning: /^machineImage: with MountHelper.EFS_UTILS/,
  },
  // Sizes, images, zones and paths the library can check: mirrors larger than the node type's RAM or half its
  // instance store, images of the other architecture, a zone of the user's with the fleet's zone name, system directories
  {
    name: 'mirrors: in memory, as large as the node type\'s RAM',
    build: fleet({ instanceType: new ec2.InstanceType('c7gn.large'), mirrors: [Mirror.path('/efs/app')], mirroring: { size: Size.gibibytes(4) } }),
    error: /^Invalid mirroring\.size: 4 GiB in memory \(MirrorStorage.MEMORY\) is not less than the 4 GiB of RAM of c7gn.large: .*Choose at most 2 GiB/,
  },
  {
    name: 'mirrors: in memory, more than the default type\'s RAM',
    build: fleet({ mirrors: [Mirror.path('/efs/app')], mirroring: { size: Size.gibibytes(200) } }),
    error: /^Invalid mirroring\.size: 200 GiB in memory \(MirrorStorage.MEMORY\) is not less than the 128 GiB of RAM of c7gn.16xlarge/,
  },
  {
    name: 'mirrors: in memory, more than half the RAM (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('c7gn.xlarge'), mirrors: [Mirror.path('/efs/app')], mirroring: { size: Size.gibibytes(5) } }),
    warning: /^mirroring\.size: 5 GiB in memory is more than half of the 8 GiB of RAM of c7gn.xlarge/,
  },
  {
    name: 'mirrors: on the instance store, more than half of it',
    build: fleet({ instanceType: new ec2.InstanceType('c6gd.large'), mirrors: [Mirror.path('/efs/app')], mirroring: { size: Size.gibibytes(60) } }),
    error: new RegExp(/^Invalid mirroring\.size: 60 GiB on the instance store \(MirrorStorage.INSTANCE_STORE\) is more than half of the 118 GB of c6gd.large: /.source +
      /every node would refuse to serve at boot.*Choose at most 53 GiB/.source),
  },
  {
    name: 'mirrors: on an i4i\'s instance store, more than half of it',
    build: fleet({ instanceType: new ec2.InstanceType('i4i.2xlarge'), mirrors: [Mirror.path('/efs/app')], mirroring: { storage: MirrorStorage.INSTANCE_STORE, size: Size.tebibytes(1) } }),
    error: /^Invalid mirroring\.size: 1024 GiB on the instance store .* half of the 1875 GB of i4i.2xlarge/,
  },
  {
    name: 'mirrors: on the instance store, within ext4\'s overhead of half of it (warning)',
    build: fleet({ instanceType: new ec2.InstanceType('c6gd.large'), mirrors: [Mirror.path('/efs/app')], mirroring: { size: Size.gibibytes(54) } }),
    warning: /^mirroring\.size: 54 GiB is within 3% of half of the 118 GB instance store of c6gd.large.*Choose at most 53 GiB/,
  },
  {
    name: 'images: an x86_64 Amazon Linux 2023 on the default arm64 node type',
    build: fleet({ machineImage: ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.X86_64 }) }),
    error: new RegExp(/^Invalid machineImage: the image is for x86_64 \(SSM parameter '\/aws\/service\/ami-amazon-linux-latest\/al2023-ami-kernel-[0-9.]+-x86_64'\), /.source +
      /but c7gn.16xlarge is arm64: .*AmazonLinuxCpuType.ARM_64/.source),
  },
  {
    name: 'images: an arm64 Amazon Linux 2 on an x86_64 node type',
    build: fleet({ instanceType: new ec2.InstanceType('c6in.16xlarge'), machineImage: ec2.MachineImage.latestAmazonLinux2({ cpuType: ec2.AmazonLinuxCpuType.ARM_64 }) }),
    error: /^Invalid machineImage: the image is for arm64 .*but c6in.16xlarge is x86_64/,
  },
  {
    name: 'zones: a private zone of the user\'s with the fleet\'s zone name on its VPC',
    build: (stack, vpc) => {
      new route53.PrivateHostedZone(stack, 'Mine', { zoneName: 'EFS-Cache.Internal.', vpc });
      return fleet({})(stack, vpc);
    },
    error: new RegExp(/^Invalid fanOut\.zoneName: the private hosted zone TestStack\/Mine is also named 'efs-cache.internal' /.source +
      /and is associated with this VPC: Route 53 refuses/.source),
  },
  {
    name: 'zones: a CfnHostedZone in another stack with a fleet\'s zone name on one imported VPC',
    build: (stack) => {
      const attrs = { vpcId: 'vpc-0123456789abcdef0', vpcCidrBlock: '10.0.0.0/16', availabilityZones: ['us-east-1a'], privateSubnetIds: ['subnet-0123456789abcdef0'] };
      const other = new Stack(stack.node.root as App, 'Other');
      new route53.CfnHostedZone(other, 'Zone', { name: 'data.example.internal', vpcs: [{ vpcId: attrs.vpcId, vpcRegion: 'us-east-1' }] });
      const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Shared', attrs);
      return new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), fanOut: FanOut.route53({ zoneName: 'data.example.internal' }) });
    },
    error: /^Invalid fanOut\.zoneName: the private hosted zone Other\/Zone is also named 'data.example.internal'/,
  },
  {
    name: 'paths: /var as export path',
    build: fleet({ exportPath: '/var' }),
    error: /^Invalid exportPath: '\/var' is the system directory \/var: the nodes' mount of the origin would hide or break/,
  },
  {
    name: 'paths: /etc as export path',
    build: fleet({ exportPath: '/etc' }),
    error: /^Invalid exportPath: '\/etc' is the system directory \/etc/,
  },
  {
    name: 'paths: /usr as export path',
    build: fleet({ exportPath: '/usr' }),
    error: /^Invalid exportPath: '\/usr' is the system directory \/usr/,
  },
  {
    name: 'paths: an export path inside /proc',
    build: fleet({ exportPath: '/proc/efs' }),
    error: /^Invalid exportPath: '\/proc\/efs' is inside \/proc/,
  },
  {
    name: 'paths: an export path inside /run',
    build: fleet({ exportPath: '/run/efs' }),
    error: /^Invalid exportPath: '\/run\/efs' is inside \/run/,
  },
  {
    name: 'paths: /mirror as export path of a fleet with mirrors',
    build: fleet({ exportPath: '/mirror', mirrors: [Mirror.path('/mirror/app')] }),
    error: /^Invalid exportPath: '\/mirror' is \/mirror, where each node mounts the root of the mirrors/,
  },
  {
    name: 'paths: an export path inside the nodes\' disk cache',
    build: fleet({ nodeDiskCache: NodeDiskCache.instanceStore(), instanceType: new ec2.InstanceType('c6gd.16xlarge'), exportPath: '/var/cache/fscache/efs' }),
    error: /^Invalid exportPath: '\/var\/cache\/fscache\/efs' is inside \/var\/cache\/fscache, where each node mounts the disk cache/,
  },
  // The origin of a fleet (CacheOrigin): given, and an NFS server that can be reached
  {
    name: 'fleet: no origin (JavaScript, which has no types)',
    build: (stack, vpc) => new CacheFleet(stack, 'Fleet', { vpc } as unknown as CacheFleetProps),
    error: /^Invalid origin: is required: CacheOrigin\.efs\(fileSystem\) .*CacheOrigin\.nfsServer/,
  },
  // The props of 0.1 that 0.2 renamed or removed, still given from JavaScript (which has no types): refused, never
  // ignored (an ignored clientProtocol would turn an NFSv3 fleet into an NFSv4.1 one under another fsid).
  {
    name: 'fleet: the fileSystem prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CacheFleet(stack, 'Fleet', { vpc, fileSystem: importedFs(stack) } as unknown as CacheFleetProps),
    error: /^Invalid fileSystem: was removed in 0\.2: give origin: CacheOrigin\.efs\(fileSystem\)\./,
  },
  {
    name: 'fleet: the originMountHelper prop of 0.1 (JavaScript)',
    build: fleet({ originMountHelper: 'nfs' } as Partial<CacheFleetProps>),
    error: /^Invalid originMountHelper: was removed in 0\.2: give origin: CacheOrigin\.efs\(fileSystem, \{ mountHelper \}\)\./,
  },
  {
    name: 'fleet: the originMountTimeout prop of 0.1 (JavaScript)',
    build: fleet({ originMountTimeout: Duration.minutes(5) } as Partial<CacheFleetProps>),
    error: /^Invalid originMountTimeout: was renamed mountTimeout in 0\.2\./,
  },
  {
    name: 'fleet: the bootstrapTimeout prop of 0.1 (JavaScript)',
    build: fleet({ bootstrapTimeout: Duration.minutes(30) } as Partial<CacheFleetProps>),
    error: /^Invalid bootstrapTimeout: was renamed signalTimeout in 0\.2\./,
  },
  {
    name: 'fleet: the clientProtocol prop of 0.1 (JavaScript)',
    build: fleet({ clientProtocol: 'nfs3' } as Partial<CacheFleetProps>),
    error: /^Invalid clientProtocol: was renamed clientNfsVersion in 0\.2: ClientProtocol\.NFS_V3 is NfsVersion\.NFS_V3/,
  },
  ...([
    ['hostedZone', 'route53', '{ hostedZone }'],
    ['zoneName', 'route53', '{ zoneName }'],
    ['recordName', 'route53', '{ recordName }'],
    ['recordTtl', 'route53', '{ recordTtl }'],
    ['loadBalancerIdleTimeout', 'networkLoadBalancer', '{ idleTimeout }'],
    ['crossZone', 'networkLoadBalancer', '{ crossZone }'],
    ['loadBalancerAccessLogs', 'networkLoadBalancer', '{ accessLogs: { bucket } }'],
    ['loadBalancerAccessLogsPrefix', 'networkLoadBalancer', '{ accessLogs: { bucket, prefix } }'],
  ] as const).map(([prop, factory, options]): BadInput => ({
    name: `fleet: the ${prop} prop, moved into fanOut in 0.2 (JavaScript)`,
    build: fleet({ [prop]: 'x' } as Partial<CacheFleetProps>),
    error: new RegExp(`^Invalid ${prop}: was moved into fanOut in 0\\.2: give fanOut: FanOut\\.${factory}\\(${options.replace(/[{}]/g, '\\$&')}\\)\\.`),
  })),
  {
    name: 'fleet: the nodeCount prop, moved into capacity in 0.2 (JavaScript)',
    build: fleet({ nodeCount: 3 } as Partial<CacheFleetProps>),
    error: /^Invalid nodeCount: was moved into capacity in 0\.2: give capacity: Capacity\.nodes\(n\)\./,
  },
  {
    name: 'fleet: the elastic prop, moved into capacity in 0.2 (JavaScript)',
    build: fleet({ fanOut: FanOut.networkLoadBalancer(), elastic: { maxNodes: 4 } } as Partial<CacheFleetProps>),
    error: /^Invalid elastic: was moved into capacity in 0\.2: give capacity: Capacity\.elastic\(\{ \.\.\. \}\), with the same options\./,
  },
  {
    name: 'fleet in a CachedFileSystem: the nodeCount prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Cached', { vpc, cacheFleet: { nodeCount: 1 } as object }),
    error: /^Invalid nodeCount: was moved into capacity in 0\.2/,
  },
  {
    name: 'fleet: a number given as capacity (JavaScript)',
    build: fleet({ capacity: 3 } as unknown as Partial<CacheFleetProps>),
    error: /^Invalid capacity: must be Capacity\.nodes\(count\) or Capacity\.elastic\(\{ maxNodes \}\), got 3\./,
  },
  ...([
    ['nfsdThreads', 'tuning', '{ nfsdThreads }'],
    ['readAhead', 'tuning', '{ readAhead }'],
    ['sunrpcSlotTableEntries', 'tuning', '{ sunrpcSlotTableEntries }'],
    ['vfsCachePressure', 'tuning', '{ vfsCachePressure }'],
    ['warmPaths', 'warming', '{ paths }'],
    ['warmWorkers', 'warming', '{ paths, workers }'],
    ['rewarmInterval', 'warming', '{ paths, rewarmInterval }'],
  ] as const).map(([prop, group, options]): BadInput => ({
    name: `fleet: the ${prop} prop, moved into ${group} in 0.2 (JavaScript)`,
    build: fleet({ [prop]: 1 } as Partial<CacheFleetProps>),
    error: new RegExp(`^Invalid ${prop}: was moved into ${group} in 0\\.2: give ${group}: ${options.replace(/[{}]/g, '\\$&')}\\.`),
  })),
  {
    name: 'fleet in a CachedFileSystem: the warmPaths prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Cached', { vpc, cacheFleet: { warmPaths: ['/efs/models'] } as object }),
    error: /^Invalid warmPaths: was moved into warming in 0\.2: give warming: \{ paths \}\./,
  },
  {
    name: 'fleet: the mirrorPaths prop, moved into mirrors in 0.2 (JavaScript)',
    build: fleet({ mirrorPaths: ['/efs/app'] } as Partial<CacheFleetProps>),
    error: /^Invalid mirrorPaths: was moved into mirrors in 0\.2: give mirrors: \[Mirror\.path\(\.\.\.\)\]\./,
  },
  {
    name: 'fleet: the mirrorSources prop, moved into mirrors in 0.2 (JavaScript)',
    build: fleet({ mirrorSources: [] } as Partial<CacheFleetProps>),
    error: /^Invalid mirrorSources: was moved into mirrors in 0\.2: give mirrors: \[Mirror\.s3\(bucket, prefix\)\]\./,
  },
  ...([
    ['mirrorInterval', 'interval'],
    ['mirrorSize', 'size'],
    ['mirrorStorage', 'storage'],
    ['mirrorSyncTimeout', 'syncTimeout'],
    ['mirrorSyncWorkers', 'syncWorkers'],
    ['mirrorChangeMarker', 'changeMarker'],
    ['mirrorFullSyncInterval', 'fullSyncInterval'],
  ] as const).map(([prop, option]): BadInput => ({
    name: `fleet: the ${prop} prop, moved into mirroring in 0.2 (JavaScript)`,
    build: fleet({ mirrors: [Mirror.path('/efs/app')], [prop]: 'x' } as Partial<CacheFleetProps>),
    error: new RegExp(`^Invalid ${prop}: was moved into mirroring in 0\\.2: give mirroring: \\{ ${option} \\}\\.`),
  })),
  {
    name: 'fleet: a path given in mirrors as 0.1\'s mirrorPaths took it (JavaScript)',
    build: fleet({ mirrors: ['/efs/app'] } as unknown as Partial<CacheFleetProps>),
    error: /^Invalid mirrors: mirrors\[0\] must be made by Mirror\.path\(path\) or Mirror\.s3\(bucket, prefix\), got '\/efs\/app'\./,
  },
  {
    name: 'fleet in a CachedFileSystem: the mirrorPaths prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Cached', { vpc, cacheFleet: { mirrorPaths: ['/efs/app'] } as object }),
    error: /^Invalid mirrorPaths: was moved into mirrors in 0\.2/,
  },
  {
    name: 'fleet in a CachedFileSystem: a fan-out prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Cached', { vpc, cacheFleet: { zoneName: 'data.internal' } as object }),
    error: /^Invalid zoneName: was moved into fanOut in 0\.2: give fanOut: FanOut\.route53\(\{ zoneName \}\)\./,
  },
  {
    name: 'fleet in a CachedFileSystem: a renamed prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Cached', { vpc, cacheFleet: { bootstrapTimeout: Duration.minutes(30) } as object }),
    error: /^Invalid bootstrapTimeout: was renamed signalTimeout in 0\.2\./,
  },
  {
    name: 'imported fleet: the mirrors attribute of 0.1 (JavaScript)',
    build: (stack) => importedFleet(stack, { mirrors: [{ path: '/efs/app', exportPath: '/mirror/app' }] } as object),
    error: /^Invalid mirrors: was renamed mirrorExports in 0\.2\./,
  },
  {
    name: 'imported fleet: the clientProtocol attribute of 0.1 (JavaScript)',
    build: (stack) => importedFleet(stack, { clientProtocol: 'nfs3' } as object),
    error: /^Invalid clientProtocol: was renamed clientNfsVersion in 0\.2/,
  },
  // NFSv3 to the origin works with every fan-out (test/origin/nfs-origin.test.ts); NFSv3 to the clients needs Route 53 whatever the origin.
  {
    name: 'nfs origin: NFSv3 clients behind an NLB',
    build: nfsFleet({}, { fanOut: FanOut.networkLoadBalancer(), clientNfsVersion: NfsVersion.NFS_V3 }),
    error: /^Invalid clientNfsVersion: NfsVersion\.NFS_V3 needs fanOut: FanOut\.route53\(\)/,
  },
  // One NfsVersion for both ends: the nodes mount an NFS server with any of its versions, but serve clients NFSv3 and NFSv4.1 only.
  {
    name: 'clients over NFSv4.2',
    build: fleet({ clientNfsVersion: NfsVersion.NFS_V4_2 }),
    error: /^Invalid clientNfsVersion: must be NfsVersion\.NFS_V4_1 or NfsVersion\.NFS_V3: the nodes serve NFSv3 and NFSv4\.1 to clients, got NfsVersion\.NFS_V4_2 /,
  },
  {
    name: 'clients over NFSv4.2 of an NFSv4.2 server',
    build: nfsFleet({ nfsVersion: NfsVersion.NFS_V4_2 }, { clientNfsVersion: NfsVersion.NFS_V4_2 }),
    error: /^Invalid clientNfsVersion: must be NfsVersion\.NFS_V4_1 or NfsVersion\.NFS_V3: .*got NfsVersion\.NFS_V4_2/,
  },
  {
    name: 'clients over a version that is not an NfsVersion (the NFSv3 value of 0.1, from JavaScript)',
    build: fleet({ clientNfsVersion: 'nfs3' as NfsVersion }),
    error: /^Invalid clientNfsVersion: must be NfsVersion\.NFS_V4_1 or NfsVersion\.NFS_V3: .*got 'nfs3'\./,
  },
  // Fleets of another stack or app (CacheFleet.fromCacheFleetAttributes): the rules of a CacheFleet's own values
  {
    name: 'imported fleet: clients over NFSv4.2',
    build: (stack) => importedFleet(stack, { clientNfsVersion: NfsVersion.NFS_V4_2 }),
    error: /^Invalid clientNfsVersion: must be NfsVersion\.NFS_V4_1 or NfsVersion\.NFS_V3: the nodes serve NFSv3 and NFSv4\.1 to clients/,
  },
  {
    name: 'imported fleet: an endpoint with a space',
    build: (stack) => importedFleet(stack, { endpoint: 'cache efs' }),
    error: /^Invalid endpoint: must be the fleet's endpoint, a DNS name .* or an IPv4 address, got 'cache efs'\./,
  },
  {
    name: 'imported fleet: an endpoint as a URL',
    build: (stack) => importedFleet(stack, { endpoint: 'nfs://cache.efs-cache.internal' }),
    error: /^Invalid endpoint: must be the fleet's endpoint/,
  },
  {
    name: 'imported fleet: an endpoint of an address out of range',
    build: (stack) => importedFleet(stack, { endpoint: '10.0.0.256' }),
    error: /^Invalid endpoint: .*got '10\.0\.0\.256'/,
  },
  {
    name: 'imported fleet: an IPv6 endpoint',
    build: (stack) => importedFleet(stack, { endpoint: 'fd00::1' }),
    error: /^Invalid endpoint: .*got 'fd00::1'/,
  },
  {
    name: 'imported fleet: an endpoint label over 63 characters',
    build: (stack) => importedFleet(stack, { endpoint: `${'a'.repeat(64)}.internal` }),
    error: /^Invalid endpoint: /,
  },
  {
    name: 'imported fleet: a relative export path',
    build: (stack) => importedFleet(stack, { exportPath: 'efs' }),
    error: /^Invalid exportPath: must be an absolute path other than \/ .*got 'efs'/,
  },
  {
    name: 'imported fleet: / as the export path',
    build: (stack) => importedFleet(stack, { exportPath: '/' }),
    error: /^Invalid exportPath: must be an absolute path other than \//,
  },
  {
    name: 'imported fleet: an export path with ..',
    build: (stack) => importedFleet(stack, { exportPath: '/efs/../etc' }),
    error: /^Invalid exportPath: .*got '\/efs\/\.\.\/etc'/,
  },
  {
    name: 'imported fleet: an attribute cache timeout over an hour',
    build: (stack) => importedFleet(stack, { attributeCacheTimeout: Duration.hours(2) }),
    error: /^Invalid attributeCacheTimeout: must be between 0 and 60 minutes/,
  },
  {
    name: 'imported fleet: a relative mirror path',
    build: importedMirrors(['app', '/mirror/app']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.path 'app' is not an absolute path.*e\.g\. '\/efs\/app'/,
  },
  {
    name: 'imported fleet: a mirror path with ..',
    build: importedMirrors(['/efs/../etc', '/mirror/../etc']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.path '\/efs\/\.\.\/etc' is not an absolute path/,
  },
  {
    name: 'imported fleet: a mirror path with //',
    build: importedMirrors(['/efs//app', '/mirror//app']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.path '\/efs\/\/app' is not an absolute path/,
  },
  {
    name: 'imported fleet: a mirror path outside the export',
    build: importedMirrors(['/data/app', '/mirror/app']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.path '\/data\/app' is not under the fleet's exportPath '\/efs'/,
  },
  {
    name: 'imported fleet: a mirror export path outside /mirror',
    build: importedMirrors(['/efs/app', '/efs/app']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.exportPath '\/efs\/app' is not a path under \/mirror/,
  },
  {
    name: 'imported fleet: a mirror export path with ..',
    build: importedMirrors(['/efs/app', '/mirror/../../etc']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.exportPath '\/mirror\/\.\.\/\.\.\/etc' is not a path under \/mirror/,
  },
  {
    name: 'imported fleet: a mirror export path of another tree',
    build: importedMirrors(['/efs/app', '/mirror/lib']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.exportPath '\/mirror\/lib' is not where the fleet exports '\/efs\/app': .*'\/mirror\/app'/,
  },
  {
    name: 'imported fleet: a mirror fsid that is not a UUID',
    build: importedMirrors(['/efs/app', '/mirror/app', 'f']),
    error: /^Invalid mirrorExports: mirrorExports\[0\]\.fsid 'f' is not a UUID/,
  },
  {
    name: 'imported fleet: a mirror twice',
    build: importedMirrors(['/efs/app', '/mirror/app'], ['/efs/app', '/mirror/app']),
    error: /^Invalid mirrorExports: mirrorExports\[0\] and mirrorExports\[1\] have the same path '\/efs\/app'/,
  },
  {
    name: 'imported fleet: a mirror inside another',
    build: importedMirrors(['/efs/app', '/mirror/app'], ['/efs/app/lib', '/mirror/app/lib']),
    error: /^Invalid mirrorExports: the path '\/efs\/app\/lib' is inside '\/efs\/app' \(mirrorExports\[0\] and mirrorExports\[1\]\)/,
  },
  {
    name: 'imported fleet: two mirrors with one fsid',
    build: importedMirrors(['/efs/app', '/mirror/app', FSIDS[0]], ['/efs/lib', '/mirror/lib', FSIDS[0]]),
    error: /^Invalid mirrorExports: mirrorExports\[0\] and mirrorExports\[1\] have the same fsid/,
  },
  {
    name: 'fleet: a mirror path with //',
    build: fleet({ mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs//app')] }),
    error: /^Invalid mirrors: '\/efs\/\/app' is not an absolute path/,
  },
];

refusesBadInput('bad input to CacheFleet and its fan-out and mirrors names the prop', CASES);
