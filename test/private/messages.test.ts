import * as fs from 'fs';
import * as path from 'path';
import { CfnParameter, Duration, Size, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  CachedFileSystem,
  Capacity,
  CacheFleet,
  CacheOrigin,
  DataSeeder,
  DiskCache,
  FanOut,
  FsCacheClientLaunchTemplate,
  Mirror,
  MountSource,
  SeedSource,
} from '../../lib';
import { describeValue, pythonPropName } from '../../lib/private/errors';
import { importedFs, stackWithVpc } from '../util';

/**
 * What the messages show of the values they name: a token (a CfnParameter, an import, an attribute) reads as what it
 * refers to and that it is known only at deploy time, never as `${Token[TOKEN.12]}` or a number such as -1.888e+289;
 * and the Python name of a prop whose name differs there.
 */
const F = (stack: Stack, vpc: ec2.Vpc, p: object) => new CacheFleet(stack, 'Fleet', {
  vpc, origin: CacheOrigin.efs(importedFs(stack)), mirrors: [Mirror.path('/efs/a')], warming: { paths: ['/efs/a'] }, ...p,
});
const C = (stack: Stack, vpc: ec2.Vpc, p: object) => new FsCacheClientLaunchTemplate(stack, 'Client', { vpc, source: MountSource.fileSystem(importedFs(stack)), ...p });
const S = (stack: Stack, vpc: ec2.Vpc, p: object, source?: SeedSource) =>
  new DataSeeder(stack, 'Seeder', { vpc, fileSystem: importedFs(stack), source: source ?? SeedSource.instanceDirectory('/srv/data'), ...p });

describe('values in messages', () => {
  test('describeValue: literals as they are, tokens as what they refer to', () => {
    const { stack } = stackWithVpc();
    const s = new CfnParameter(stack, 'Dir').valueAsString;
    const n = new CfnParameter(stack, 'Count', { type: 'Number' }).valueAsNumber;
    expect(describeValue('/data', stack)).toBe("'/data'");
    expect(describeValue('m6id.xlarge', stack, false)).toBe('m6id.xlarge');
    expect(describeValue(5, stack)).toBe('5');
    expect(describeValue(Size.gibibytes(4), stack)).toBe('4 GiB');
    expect(describeValue(s, stack)).toBe('parameter Dir (a token, known at deploy time)');
    expect(describeValue(n, stack)).toBe('parameter Count (a token, known at deploy time)');
    expect(describeValue(`/efs/${s}`, stack)).toBe("'/efs/${parameter Dir}' (holds a token, known at deploy time)");
    expect(describeValue(stack.availabilityZones[1], stack)).toBe('AZ #2 of the region (a token, known at deploy time)');
    expect(describeValue(Size.gibibytes(n), stack)).toBe('a token (known at deploy time)');
    expect(describeValue(s)).toBe('a token (known at deploy time)');
  });

  /** Each builds with a number (`n`) or string (`s`) token where the library needs a value at synth. */
  const TOKEN_CASES: Array<[string, (stack: Stack, vpc: ec2.Vpc, n: number, s: string) => unknown, RegExp]> = [
    ['fleet capacity', (st, v, n) => F(st, v, { capacity: Capacity.nodes(n) }),
      /^Invalid capacity: must be known at synth \(each node is an Auto Scaling group of its own\), got parameter N \(a token, known at deploy time\)\. Give a literal value/],
    ['fleet exportPath', (st, v, _n, s) => F(st, v, { exportPath: s }), /^Invalid exportPath: must be known at synth .*got parameter S \(a token/],
    ['fleet mirrors', (st, v, _n, s) => F(st, v, { mirrors: [Mirror.path(`/efs/${s}`)] }), /^Invalid mirrors: must be known at synth .*got '\/efs\/\$\{parameter S\}' \(holds a token/],
    ['fleet mirroring.size in GiB', (st, v, n) => F(st, v, { mirroring: { size: Size.gibibytes(n) } }), /^Invalid mirroring\.size: must be known at synth, got a token/],
    ['fleet rootVolumeSize', (st, v, n) => F(st, v, { rootVolumeSize: Size.gibibytes(n) }), /^Invalid rootVolumeSize: must be known at synth/],
    ['fleet tuning.readAhead', (st, v, n) => F(st, v, { tuning: { readAhead: Size.kibibytes(n) } }), /^Invalid tuning\.readAhead: must be known at synth/],
    ['fleet mirroring.interval in minutes', (st, v, n) => F(st, v, { mirroring: { interval: Duration.minutes(n) } }), /^Invalid mirroring\.interval: must be known at synth/],
    ['fleet mirroring.changeMarker', (st, v, _n, s) => F(st, v, { mirroring: { changeMarker: s } }), /^Invalid mirroring\.changeMarker: must be known at synth, got parameter S \(a token/],
    ['fleet mirroring.fullSyncInterval in hours', (st, v, n) => F(st, v, { mirroring: { changeMarker: '.published', fullSyncInterval: Duration.hours(n) } }),
      /^Invalid mirroring\.fullSyncInterval: must be known at synth/],
    ['fleet warming.rewarmInterval in hours', (st, v, n) => F(st, v, { warming: { paths: ['/efs/a'], rewarmInterval: Duration.hours(n) } }),
      /^Invalid warming\.rewarmInterval: must be known at synth/],
    ['fleet workingSetSize', (st, v, n) => F(st, v, { workingSetSize: Size.gibibytes(n) }), /^Invalid workingSetSize: must be known at synth/],
    ['client cullLimits', (st, v, n) => C(st, v, { cullLimits: { blocksRun: n } }), /^Invalid cullLimits.blocksRun: must be known at synth .*got parameter N/],
    ['client mountPoint', (st, v, _n, s) => C(st, v, { mountPoint: s }), /^Invalid mountPoint: must be known at synth/],
    ['client diskCache.volumeSize', (st, v, n) => C(st, v, { instanceType: new ec2.InstanceType('c7g.xlarge'), diskCache: DiskCache.ebs({ volumeSize: Size.gibibytes(n) }) }),
      /^Invalid diskCache\.volumeSize: must be known at synth, got a token .*\(at TestStack\/Client; in Python: disk_cache\.volume_size\)$/],
    ['client mountTimeout in minutes', (st, v, n) => C(st, v, { mountTimeout: Duration.minutes(n) }),
      /^Invalid mountTimeout: is a token \(known at deploy time\) given as Duration\.minutes\(\), which cannot be converted at synth: give it as Duration\.seconds\(\.\.\.\)/],
    ['seeder signalTimeout', (st, v, n) => S(st, v, { signalTimeout: Duration.hours(n) }), /^Invalid signalTimeout: must be known at synth/],
    ['seeder instance directory', (st, v, _n, s) => S(st, v, {}, SeedSource.instanceDirectory(s)), /^Invalid source: must be known at synth .*got parameter S .*\(at TestStack\/Seeder\)$/],
    ['dashboard threshold', (st, vpc, n) => new CachedFileSystem(st, 'Data', { vpc, monitoring: { percentIoLimitThreshold: n } }),
      /^Invalid percentIoLimitThreshold: must be known at synth, got parameter N/],
    ['node type as a token, default image', (st, v, _n, s) => F(st, v, { instanceType: new ec2.InstanceType(s) }),
      /^Invalid instanceType: is parameter S \(a token, known at deploy time\), and the default machineImage follows the architecture/],
  ];
  test.each(TOKEN_CASES)('%s: refused at synth naming the token', (_name, build, error) => {
    const { stack, vpc } = stackWithVpc();
    const n = new CfnParameter(stack, 'N', { type: 'Number' }).valueAsNumber;
    const s = new CfnParameter(stack, 'S').valueAsString;
    let message = 'nothing thrown';
    try {
      build(stack, vpc, n, s);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(error);
    expect(message).not.toMatch(/\$\{Token\[|e\+\d{2,}|Resolution error/);
  });

  test('a subnet and AZs that are tokens read as the subnet\'s path and the region\'s AZs', () => {
    const { stack, vpc } = stackWithVpc();
    expect(() => new CachedFileSystem(stack, 'Data', {
      vpc,
      vpcSubnets: { subnets: [vpc.privateSubnets[0]] },
      cacheFleet: { vpcSubnets: { subnets: [vpc.privateSubnets[1]] } },
    })).toThrow(new RegExp(/^Invalid cacheFleet.vpcSubnets: subnet TestStack\/Vpc\/PrivateSubnet2 is in AZ #2 of the region \(a token, known at deploy time\), /.source +
      /where the file system has no mount target \(mount targets: AZ #1 of the region \(a token, known at deploy time\)\)/.source));
  });

  test('warnings about a node type given as a token name it readably', () => {
    const { stack, vpc } = stackWithVpc();
    const type = new CfnParameter(stack, 'Type').valueAsString;
    const fleet = F(stack, vpc, { instanceType: new ec2.InstanceType(type), machineImage: ec2.MachineImage.latestAmazonLinux2023() });
    const warnings = fleet.node.metadata.filter((m) => m.type === 'aws:cdk:warning').map((m) => String(m.data));
    expect(warnings.some((w) => /^instanceType: the vCPUs and memory of parameter Type \(a token, known at deploy time\) are not known/.test(w))).toBe(true);
    expect(warnings.join('\n')).not.toMatch(/\$\{Token\[/);
  });
});

describe('prop names in Python', () => {
  test('the message names the Python prop where it differs, nested props too, and only there', () => {
    const { stack, vpc } = stackWithVpc();
    expect(() => F(stack, vpc, { mirroring: { syncWorkers: 0 } })).toThrow(/^Invalid mirroring\.syncWorkers: .* \(at TestStack\/Fleet; in Python: mirroring\.sync_workers\)$/);
    const second = stackWithVpc();
    expect(() => new CachedFileSystem(second.stack, 'Data', {
      vpc: second.vpc,
      vpcSubnets: { subnets: [second.vpc.privateSubnets[0]] },
      cacheFleet: { vpcSubnets: { subnets: [second.vpc.privateSubnets[1]] } },
    })).toThrow(/\(at TestStack\/Data\/Origin; in Python: cache_fleet\.vpc_subnets\)$/);
    const third = stackWithVpc();
    expect(() => S(third.stack, third.vpc, { workers: 0 })).toThrow(/^Invalid workers: .* \(at TestStack\/Seeder\)$/);
    const fourth = stackWithVpc();
    expect(() => C(fourth.stack, fourth.vpc, { diskCache: DiskCache.instanceStore({ deviceModel: 'NVMe ' }) }))
      .toThrow(/^Invalid diskCache\.deviceModel: .* \(at TestStack\/Client; in Python: disk_cache\.device_model\)$/);
    const fifth = stackWithVpc();
    const logs = s3.Bucket.fromBucketName(fifth.stack, 'Logs', 'logs');
    expect(() => F(fifth.stack, fifth.vpc, { fanOut: FanOut.networkLoadBalancer({ accessLogs: { bucket: logs, prefix: '/logs' } }) }))
      .toThrow(/^Invalid fanOut\.accessLogs\.prefix: .* \(at TestStack\/Fleet; in Python: fan_out\.access_logs\.prefix\)$/);
  });

  test('pythonPropName is jsii\'s snake_case (codemaker) for every prop of the library', () => {

    const { toSnakeCase } = require('codemaker') as { toSnakeCase: (s: string) => string };
    const names = new Set<string>(['readAheadKiB', 'ipv6Cidrs', 's3Prefix', 'cacheFleet.mirroring.syncWorkers', 'cullLimits.blocksRun', 'diskCache.volumeSize', 'fanOut.accessLogs.prefix']);
    const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
    for (const file of walk(path.join(__dirname, '..', '..', 'lib'))) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/^\s+readonly (\w+)\??:/gm)) names.add(m[1]);
    }
    expect(names.size).toBeGreaterThan(100);
    for (const name of names) {
      const expected = name.split('.').map((p) => toSnakeCase(p)).join('.');
      expect([name, pythonPropName(name) ?? name]).toEqual([name, expected]);
    }
    expect(pythonPropName('source')).toBeUndefined();
  });
});
