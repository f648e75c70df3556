import { RemovalPolicy } from 'aws-cdk-lib';
import {
  CachedFileSystem,
  CachedFileSystemProps,
  CacheFleet,
  CacheOrigin,
  Capacity,
  ClientLaunchTemplateOptions,
  DataSeeder,
  FanOut,
  FsCacheClientLaunchTemplate,
  MountHelper,
  MountSource,
  OriginFileSystem,
  SeedSource,
} from '../lib';
import { importedFs } from './util';
import { BadInput, isolatedVpc, refusesBadInput } from './util/bad-input';

/** What constructs together (CachedFileSystem, several fleets, TLS across tiers) refuses at synth, or warns about, each case naming the prop to change. */
const CASES: BadInput[] = [
  // CachedFileSystem
  {
    name: 'composition: origin options are checked too',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, originFileSystem: { removalPolicy: RemovalPolicy.DESTROY } }),
    error: /^Invalid removalPolicy: .*confirmDataLoss/,
  },
  // The props of 0.1 that 0.2 renamed, still given from JavaScript (which has no types): refused, never ignored (an
  // ignored origin would create a new file system instead of importing the given one).
  {
    name: 'composition: the origin prop of 0.1 (JavaScript)',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, origin: { fileSystem: importedFs(stack) } } as unknown as CachedFileSystemProps),
    error: /^Invalid origin: was renamed originFileSystem in 0\.2 \(its type, OriginOptions, was renamed OriginFileSystemOptions\)\./,
  },
  {
    name: 'composition: monitoring options with dashboard: false',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, dashboard: false, monitoring: {} }),
    error: /^Invalid monitoring: configures the dashboard and alarms, but dashboard is false/,
  },
  {
    name: 'composition: clients through a fleet, without a fleet',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', {
      source: MountSource.cacheFleet(new CacheFleet(stack, 'Other', { vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1) })),
    }),
    error: /^Invalid source: mounts a cache fleet, but this CachedFileSystem has none: give the cacheFleet prop/,
  },
  {
    name: 'composition: clients through a fleet that is not the construct\'s',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }).addClientLaunchTemplate('C', {
      source: MountSource.cacheFleet(new CacheFleet(stack, 'Other', {
        vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), fanOut: FanOut.route53({ zoneName: 'other.internal' }),
      })),
    }),
    error: /^Invalid source: mounts a cache fleet that is not this CachedFileSystem's: give MountSource\.cacheFleet\(cachedFileSystem\.cacheFleet\)/,
  },
  {
    name: 'composition: clients of a file system that is not the construct\'s',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { source: MountSource.fileSystem(importedFs(stack)) }),
    error: /^Invalid source: mounts a file system that is not this CachedFileSystem's: give MountSource\.fileSystem\(cachedFileSystem\.originFileSystem\.fileSystem\)/,
  },
  // A ClientSource value of 0.1 (the enum is gone), still given from JavaScript: refused, naming the MountSource.
  ...['cache-fleet', 'origin'].map((value): BadInput => ({
    name: `composition: the ClientSource value '${value}' of 0.1 as a client source (JavaScript)`,
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }).addClientLaunchTemplate('C', {
      source: value,
    } as unknown as ClientLaunchTemplateOptions),
    error: new RegExp(`^Invalid source: must be MountSource\\.cacheFleet\\(cachedFileSystem\\.cacheFleet\\) or .*, got '${value}'\\. ` +
      'ClientSource\\.CACHE_FLEET is MountSource\\.cacheFleet\\(cachedFileSystem\\.cacheFleet\\), ClientSource\\.ORIGIN is ' +
      'MountSource\\.fileSystem\\(cachedFileSystem\\.originFileSystem\\.fileSystem\\)\\.'),
  })),
  {
    name: 'composition: a fleet subnet in an AZ without a mount target',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', {
      vpc,
      vpcSubnets: { subnets: [vpc.privateSubnets[0]] },
      cacheFleet: { vpcSubnets: { subnets: [vpc.privateSubnets[1]] } },
    }),
    error: /^Invalid cacheFleet.vpcSubnets: subnet .* no mount target/,
  },
  {
    name: 'composition: a fleet in an isolated-only VPC (warning)',
    build: (stack) => new CachedFileSystem(stack, 'Data', { vpc: isolatedVpc(stack), cacheFleet: { capacity: Capacity.nodes(1) } }),
    warning: /^vpcSubnets: the instances of .*\/Data\/CacheFleet run in isolated subnets/,
  },
  {
    name: 'composition: clients of an isolated-only VPC (warning)',
    build: (stack) => new CachedFileSystem(stack, 'Data', { vpc: isolatedVpc(stack) }).addClientLaunchTemplate('C'),
    warning: /^vpc: the instances of .*\/Data\/C run in isolated subnets/,
  },
  {
    name: 'composition: the fleet\'s default type where it is not offered (warning)',
    region: 'eu-central-1',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1) } }),
    warning: /^instanceType: the default c7gn.16xlarge is not offered in eu-central-1/,
  },
  {
    name: 'composition: the clients\' default type where it is not offered (warning)',
    region: 'eu-west-3',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C'),
    warning: /^instanceType: the default m6id.xlarge is not offered in eu-west-3/,
  },
  // Mounts that contradict the TLS-only origin this library creates, and images that may lack amazon-efs-utils
  {
    name: 'tls: a client mounting a created origin with plain NFS',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { mountHelper: MountHelper.NFS }),
    error: /^Invalid mountHelper: the file system was created by this library with a policy that denies non-TLS access.*MountHelper.EFS_UTILS/,
  },
  {
    name: 'tls: client options without tls on a created origin',
    build: (stack, vpc) => new CachedFileSystem(stack, 'Data', { vpc }).addClientLaunchTemplate('C', { mountOptions: ['fsc', 'hard', 'iam', 'nfsvers=4.1'] }),
    error: /^Invalid mountOptions: must include tls/,
  },
  {
    name: 'tls: a client template over an OriginFileSystem with plain NFS',
    build: (stack, vpc) => new FsCacheClientLaunchTemplate(stack, 'C', { vpc, source: MountSource.fileSystem(new OriginFileSystem(stack, 'O', { vpc }).fileSystem), mountHelper: MountHelper.NFS }),
    error: /^Invalid mountHelper: .*denies non-TLS/,
  },
  // A CachedFileSystem's fleet always mounts its TLS-only origin with amazon-efs-utils (its options have no mount helper).
  {
    name: 'tls: a fleet over an OriginFileSystem with plain NFS',
    build: (stack, vpc) => new CacheFleet(stack, 'F', {
      vpc, origin: CacheOrigin.efs(new OriginFileSystem(stack, 'O', { vpc }).fileSystem, { mountHelper: MountHelper.NFS }),
    }),
    error: /^Invalid origin\.mountHelper: .*denies non-TLS/,
  },
  {
    name: 'tls: a seeder writing to a created origin with plain NFS',
    build: (stack, vpc) => new DataSeeder(stack, 'S', {
      vpc, fileSystem: new OriginFileSystem(stack, 'O', { vpc }).fileSystem, mountHelper: MountHelper.NFS, source: SeedSource.instanceDirectory('/srv/data'),
    }),
    error: /^Invalid mountHelper: .*denies non-TLS/,
  },
];

refusesBadInput('bad input to CachedFileSystem and constructs together names the prop', CASES);
