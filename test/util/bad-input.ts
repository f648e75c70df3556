import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';
import {
  CacheFleet,
  CacheFleetAttributes,
  CacheFleetProps,
  CacheOrigin,
  DataSeeder,
  DataSeederProps,
  FleetSourceOptions,
  FsCacheClientLaunchTemplate,
  FsCacheClientLaunchTemplateProps,
  ICacheFleet,
  Mirror,
  MountSource,
  NfsServerOptions,
  NfsVersion,
  OriginFileSystem,
  OriginFileSystemProps,
  SeedSource,
} from '../../lib';
import { importedFs, stackWithVpc } from './index';

/**
 * Bad input: the props each construct refuses (or warns about), as cases its own test folder lists
 * (test/<folder>/bad-input.test.ts), the builders those cases share, and the runner.
 */
export interface BadInput {
  /** What is wrong. */
  readonly name: string;
  /** Builds the construct(s) with the bad input. */
  readonly build: (stack: Stack, vpc: ec2.Vpc) => unknown;
  /** The error it throws, starting with `Invalid <prop>`. */
  readonly error?: RegExp;
  /** Or the warning it adds (anywhere in the stack), starting with `<prop>:`. */
  readonly warning?: RegExp;
  /** The stack's region, for input that is wrong only in some regions. @default - env-agnostic */
  readonly region?: string;
}

export const origin = (props: (s: Stack) => Partial<OriginFileSystemProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new OriginFileSystem(stack, 'Origin', { vpc, ...props(stack) });
export const fleet = (props: Partial<CacheFleetProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), ...props });
export const client = (props: Partial<FsCacheClientLaunchTemplateProps>) =>
  (stack: Stack, vpc: ec2.Vpc) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(importedFs(stack)), ...props });
export const seeder = (props: Partial<DataSeederProps>, source: (s: Stack) => SeedSource = () => SeedSource.instanceDirectory('/srv/data')) =>
  (stack: Stack, vpc: ec2.Vpc) => new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: source(stack), ...props });
/**
 * A fleet over an NFS server: NFSv3 at 10.20.0.5:/srv/data in 10.20.0.0/16 unless `origin` (or a function of the stack
 * that makes it) says otherwise, with more fleet props.
 */
export const nfsFleet = (
  origin: Partial<NfsServerOptions> | ((s: Stack) => Partial<NfsServerOptions>),
  props: Partial<CacheFleetProps> = {},
) =>
  (stack: Stack, vpc: ec2.Vpc) => new CacheFleet(stack, 'Fleet', {
    vpc,
    ...props,
    origin: CacheOrigin.nfsServer({
      host: '10.20.0.5', exportPath: '/srv/data', nfsVersion: NfsVersion.NFS_V3, peer: ec2.Peer.ipv4('10.20.0.0/16'),
      ...(typeof origin === 'function' ? origin(stack) : origin),
    }),
  });
/** Two fleets over one file system on one VPC: the second with props of its own (given the first, if a function). */
export const twoFleets = (
  second: Partial<CacheFleetProps> | ((first: CacheFleet) => Partial<CacheFleetProps>),
  first: Partial<CacheFleetProps> = {},
) =>
  (stack: Stack, vpc: ec2.Vpc) => {
    const fileSystem = importedFs(stack);
    const a = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fileSystem), ...first });
    return new CacheFleet(stack, 'Fleet2', { vpc, origin: CacheOrigin.efs(fileSystem), ...(typeof second === 'function' ? second(a) : second) });
  };
/**
 * A seeder whose instance type CDK's own template validation (cdk.json `@aws-cdk/core:validateAgainstDefaultRules`,
 * rule E3628) refuses for the region, acknowledged: the row checks the library's warning, which apps without that
 * flag get too (the validation checks AWS::EC2::Instance, not the launch templates of nodes and clients).
 */
export const seederInRegion = (props: Partial<DataSeederProps>) => (stack: Stack, vpc: ec2.Vpc) => {
  const s = seeder(props)(stack, vpc);
  Validations.of(s).acknowledge({ id: 'CloudFormation-Validate::E3628', reason: 'the row checks the library\'s own warning' });
  return s;
};
export const imported = (s: Stack) => efs.FileSystem.fromFileSystemAttributes(s, 'Fs', {
  fileSystemId: 'fs-0123456789abcdef0',
  securityGroup: ec2.SecurityGroup.fromSecurityGroupId(s, 'Sg', 'sg-0123456789abcdef0'),
});
/** A fleet of another stack or app, known by its attributes (`CacheFleet.fromCacheFleetAttributes`). */
export const importedFleet = (stack: Stack, attrs: Partial<CacheFleetAttributes> = {}) => CacheFleet.fromCacheFleetAttributes(stack, 'Imported', {
  endpoint: 'cache.efs-cache.internal', securityGroup: ec2.SecurityGroup.fromSecurityGroupId(stack, 'FleetSg', 'sg-0123456789abcdef1'), ...attrs,
});
export const FSIDS = ['0f6a1b2c-3d4e-5f60-8172-93a4b5c6d7e8', '1f6a1b2c-3d4e-5f60-8172-93a4b5c6d7e8'];
/** Imported fleet attributes with these mirrors ([path, exportPath, fsid?]). */
export const importedMirrors = (...mirrors: [string, string, string?][]) => (stack: Stack) =>
  importedFleet(stack, { mirrorExports: mirrors.map(([path, exportPath, fsid], i) => ({ path, exportPath, fsid: fsid ?? FSIDS[i] })) });
/** Clients of a fleet with mirrors /efs/app and /efs/www/vendor, mounting `mirrorPaths` with the given client props. */
export const mirrorClient = (options: FleetSourceOptions, props: Partial<FsCacheClientLaunchTemplateProps> = {}) => (stack: Stack, vpc: ec2.Vpc) => {
  const f = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/app'), Mirror.path('/efs/www/vendor')] });
  return new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(f, options), ...props });
};
/** Clients of a fleet of the user's own making (an ICacheFleet), whose mirrors no CacheFleet would have. */
export const ownFleetClient = (mirrors: [string, string][]) => (stack: Stack, vpc: ec2.Vpc) => {
  const base = importedFleet(stack);
  const own: ICacheFleet = Object.assign(Object.create(base), {
    mirrorExports: mirrors.map(([path, exportPath], i) => ({ path, exportPath, fsid: FSIDS[i] })),
  });
  return new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.cacheFleet(own, { mirrorPaths: mirrors.map(([p]) => p) }) });
};
/** A VPC with isolated subnets only (no NAT, no internet gateway), in `azs` AZs. */
export const isolatedVpc = (stack: Stack, azs = 2) => new ec2.Vpc(stack, 'Isolated', {
  maxAzs: azs, natGateways: 0, subnetConfiguration: [{ name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
});
/** A VPC with public, private-with-egress and isolated subnets. */
export const mixedVpc = (stack: Stack) => new ec2.Vpc(stack, 'Mixed', {
  maxAzs: 2,
  natGateways: 1,
  subnetConfiguration: [
    { name: 'pub', subnetType: ec2.SubnetType.PUBLIC },
    { name: 'app', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    { name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
  ],
});
/** An image for types whose architecture CDK cannot read from the name (it throws for the default image's lookup). */
export const al2023x86 = ec2.MachineImage.fromSsmParameter('/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64');
/** A one-file directory; returns the file's path. */
export function aFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'efsc-bad-'));
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
  return path.join(dir, 'a.txt');
}

/**
 * Runs `cases` under `title`: each builds in a fresh stack with a two-AZ VPC and names the message it expects. Errors
 * read `Invalid <prop>: <why>` (lib/private/errors.ts) and warnings start with `<prop>:`, so the user sees which
 * prop to change; the first test holds every case to that shape.
 */
export function refusesBadInput(title: string, cases: BadInput[]): void {
  describe(title, () => {
    test('each case expects one message, an error or a warning, that names a prop', () => {
      expect(cases.length).toBeGreaterThan(0);
      expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
      for (const c of cases) {
        expect([c.error, c.warning].filter(Boolean)).toHaveLength(1);
        if (c.error) expect(c.error.source).toMatch(/^\^Invalid [A-Za-z][A-Za-z0-9]*(\\?\.[A-Za-z][A-Za-z0-9]*)*(:|$)/);
        if (c.warning) expect(c.warning.source).toMatch(/^\^[A-Za-z][A-Za-z0-9]*(\\?\.[A-Za-z][A-Za-z0-9]*)*:/);
      }
    });

    test.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const { stack, vpc } = stackWithVpc(undefined, undefined, c.region ? { region: c.region } : undefined);
      if (c.error) {
        expect(() => c.build(stack, vpc)).toThrow(c.error);
      } else {
        c.build(stack, vpc);
        Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp(c.warning!.source));
      }
    });
  });
}
