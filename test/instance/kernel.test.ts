import * as fs from 'fs';
import * as path from 'path';
import { Annotations as CoreAnnotations, CfnParameter, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  AmazonLinux2023KernelLine,
  CachedFileSystem,
  CacheFleet,
  CacheOrigin,
  Capacity,
  DataSeeder,
  FsCacheClientLaunchTemplate,
  MountSource,
  SeedSource,
} from '../../lib';
import { DEFAULT_KERNEL_LINE, PROVED_KERNEL_LINES } from '../../lib/instance/kernel';
import { importedFs, stackWithVpc } from '../util';

/**
 * The kernel line of the default image (issue 30): Amazon Linux 2023 of a line the lab proved unless the user
 * chooses another, each line through its own public SSM parameter, and a synth warning for a line not proved.
 */
type Build = (stack: Stack, vpc: ec2.Vpc, p: object) => unknown;
const TIERS: Array<[string, Build, { arm64: string; x86_64: string }]> = [
  ['CacheFleet', (stack, vpc, p) => new CacheFleet(stack, 'Tier', { vpc, origin: CacheOrigin.efs(importedFs(stack)), capacity: Capacity.nodes(1), ...p }),
    { arm64: 'c7gn.16xlarge', x86_64: 'c6in.2xlarge' }],
  ['FsCacheClientLaunchTemplate', (stack, vpc, p) => new FsCacheClientLaunchTemplate(stack, 'Tier', { vpc, source: MountSource.fileSystem(importedFs(stack)), ...p }),
    { arm64: 'm6gd.xlarge', x86_64: 'm6id.xlarge' }],
  ['DataSeeder', (stack, vpc, p) => new DataSeeder(stack, 'Tier', { vpc, fileSystem: importedFs(stack), source: SeedSource.instanceDirectory('/srv/data'), ...p }),
    { arm64: 'm7g.xlarge', x86_64: 'm7i.xlarge' }],
];
const ARCHS = ['arm64', 'x86_64'] as const;
const NOT_PROVED = 'cdk-efs-cache:kernelNotProved';

/** Builds one tier and returns the SSM parameter names of its images and its kernel warnings. */
function synth(build: Build, p: object): { images: string[]; warnings: string[] } {
  const { stack, vpc } = stackWithVpc();
  build(stack, vpc, p);
  const parameters = Template.fromStack(stack).toJSON().Parameters ?? {};
  const images = Object.values<{ Type: string; Default: string }>(parameters)
    .filter((x) => x.Type === 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>').map((x) => x.Default);
  const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp(NOT_PROVED)).map((w) => String(w.entry.data));
  return { images, warnings };
}

const param = (line: string, arch: string) => `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-${line}-${arch}`;

describe('the default image: Amazon Linux 2023 of the proved default line', () => {
  test('the default line is one the lab proved, and it is 6.12', () => {
    expect(PROVED_KERNEL_LINES).toContain(DEFAULT_KERNEL_LINE);
    expect(DEFAULT_KERNEL_LINE).toBe('6.12');
    expect(PROVED_KERNEL_LINES).toEqual(['6.1', '6.12']);
  });

  for (const [name, build, types] of TIERS) {
    test.each(ARCHS)(`${name} on %s: the default line's own parameter, no warning`, (arch) => {
      const { images, warnings } = synth(build, { instanceType: new ec2.InstanceType(types[arch]) });
      expect(images).toEqual([param(DEFAULT_KERNEL_LINE, arch)]);
      expect(warnings).toEqual([]);
    });
  }

  test('CachedFileSystem: the fleet and the client templates it adds take the default and their own kernel', () => {
    const { stack, vpc } = stackWithVpc();
    const shared = new CachedFileSystem(stack, 'Data', { vpc, cacheFleet: { capacity: Capacity.nodes(1), kernel: AmazonLinux2023KernelLine.KERNEL_6_1 } });
    shared.addClientLaunchTemplate('Clients');
    shared.addClientLaunchTemplate('Newer', { kernel: AmazonLinux2023KernelLine.KERNEL_6_18 });
    const images = Object.values<{ Default: string }>(Template.fromStack(stack).toJSON().Parameters).map((x) => x.Default)
      .filter((d) => String(d).includes('al2023')).sort();
    expect(images).toEqual([param('6.1', 'arm64'), param('6.12', 'x86_64'), param('6.18', 'x86_64')]);
    const warned = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp(NOT_PROVED)).map((w) => w.id);
    expect(warned).toEqual(['/TestStack/Data/Newer']);
  });
});

describe('choosing a kernel line', () => {
  const CHOICES: Array<[string, AmazonLinux2023KernelLine, string, boolean]> = [
    ['KERNEL_6_1', AmazonLinux2023KernelLine.KERNEL_6_1, '6.1', false],
    ['KERNEL_6_12', AmazonLinux2023KernelLine.KERNEL_6_12, '6.12', false],
    ['KERNEL_6_18', AmazonLinux2023KernelLine.KERNEL_6_18, '6.18', true],
    ['DISTRIBUTION_DEFAULT', AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT, 'default', true],
    ["of('7.0')", AmazonLinux2023KernelLine.of('7.0'), '7.0', true],
    ["of('6.12')", AmazonLinux2023KernelLine.of('6.12'), '6.12', false],
  ];

  for (const [name, build, types] of TIERS) {
    test.each(CHOICES)(`${name}: %s boots its line's parameter on both architectures`, (_choice, kernel, line, warns) => {
      for (const arch of ARCHS) {
        const { images, warnings } = synth(build, { instanceType: new ec2.InstanceType(types[arch]), kernel });
        expect(images).toEqual([param(line, arch)]);
        expect(warnings).toHaveLength(warns ? 1 : 0);
      }
    });
  }

  test('the warning names the line, the proved lines, the default and where the README says so; prop first', () => {
    const [, build] = TIERS[0];
    const [w618] = synth(build, { kernel: AmazonLinux2023KernelLine.KERNEL_6_18 }).warnings;
    expect(w618).toMatch(/^kernel: Amazon Linux 2023's kernel line 6\.18 is not one the lab proved\. /);
    expect(w618).toContain('The lab proved 6.1 and 6.12 (docs/images-and-kernels.md, "Why the default image does not float"); leave kernel unset for 6.12');
    const [w70] = synth(build, { kernel: AmazonLinux2023KernelLine.of('7.0') }).warnings;
    expect(w70).toMatch(/^kernel: Amazon Linux 2023's kernel line 7\.0 is not one the lab proved/);
    const [floating] = synth(build, { kernel: AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT }).warnings;
    expect(floating).toMatch(/^kernel: DISTRIBUTION_DEFAULT is whichever line AWS makes Amazon Linux 2023's default \(al2023-ami-kernel-default\): it floats/);
    expect(floating).toContain('the next deploy replaces the instances with the new line');
    expect(floating).toContain('The lab proved 6.1 and 6.12');
  });

  test('the static members are the lines their names say; ssmParameterName per architecture', () => {
    expect(AmazonLinux2023KernelLine.KERNEL_6_1.line).toBe('6.1');
    expect(AmazonLinux2023KernelLine.KERNEL_6_12.line).toBe('6.12');
    expect(AmazonLinux2023KernelLine.KERNEL_6_18.line).toBe('6.18');
    expect(AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT.line).toBe('default');
    expect(String(AmazonLinux2023KernelLine.of('7.0'))).toBe('7.0');
    expect(AmazonLinux2023KernelLine.KERNEL_6_12.ssmParameterName(ec2.InstanceArchitecture.ARM_64)).toBe(param('6.12', 'arm64'));
    expect(AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT.ssmParameterName(ec2.InstanceArchitecture.X86_64)).toBe(param('default', 'x86_64'));
  });
});

describe('keeping 0.1\'s image, and acknowledging the warning', () => {
  test.each(TIERS.map(([name, build]) => [name, build] as const))('%s: DISTRIBUTION_DEFAULT synthesizes the template of 0.1\'s default image', (_name, build) => {
    const template = (p: object) => {
      const { stack, vpc } = stackWithVpc();
      build(stack, vpc, p);
      return Template.fromStack(stack).toJSON();
    };
    // 0.1 built its default image this way (0.1's lib/private/mount.ts amazonLinux2023); the types' architectures: arm64.
    const old = ec2.MachineImage.fromSsmParameter(param('default', 'arm64'), { os: ec2.OperatingSystemType.LINUX });
    const arm = { instanceType: new ec2.InstanceType('m6gd.xlarge') };
    expect(template({ ...arm, kernel: AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT })).toEqual(template({ ...arm, machineImage: old }));
  });

  test('the README\'s acknowledgement silences the warning on that construct only', () => {
    const { stack, vpc } = stackWithVpc();
    const fileSystem = importedFs(stack);
    const fleet = new CacheFleet(stack, 'Fleet', { vpc, origin: CacheOrigin.efs(fileSystem), kernel: AmazonLinux2023KernelLine.KERNEL_6_18 });
    CoreAnnotations.of(fleet).acknowledgeWarning('cdk-efs-cache:kernelNotProved', 'Tested on 6.18; no locks needed through the nodes');
    new FsCacheClientLaunchTemplate(stack, 'Clients', { vpc, source: MountSource.cacheFleet(fleet), kernel: AmazonLinux2023KernelLine.KERNEL_6_18 });
    const warned = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp(NOT_PROVED)).map((w) => w.id);
    expect(warned).toEqual(['/TestStack/Clients']);
  });
});

describe('refusals', () => {
  for (const [name, build] of TIERS) {
    test(`${name}: kernel with machineImage is refused, naming kernel and the construct`, () => {
      const { stack, vpc } = stackWithVpc();
      const machineImage = ec2.MachineImage.latestAmazonLinux2023({ cpuType: name === 'FsCacheClientLaunchTemplate' ? ec2.AmazonLinuxCpuType.X86_64 : ec2.AmazonLinuxCpuType.ARM_64 });
      expect(() => build(stack, vpc, { machineImage, kernel: AmazonLinux2023KernelLine.KERNEL_6_1 }))
        .toThrow(/^Invalid kernel: machineImage already chooses the image, and the kernel with it: .*Give one of them\. \(at TestStack\/Tier\)$/);
    });
  }

  test.each(['7', 'v6.12', '6.012', '06.1', '6.12.1', '', ' 6.12', 'default', 'latest'])('of(%p) is refused by each tier it is given to, which names itself', (line) => {
    for (const [, build] of TIERS) {
      const { stack, vpc } = stackWithVpc();
      expect(() => build(stack, vpc, { kernel: AmazonLinux2023KernelLine.of(line) })).toThrow(new RegExp(
        /^Invalid kernel: must be a kernel line of Amazon Linux 2023 as major\.minor, known at synth \(such as '6\.12'\), got '.*'\. /.source +
        /For the distribution's floating default, use AmazonLinux2023KernelLine\.DISTRIBUTION_DEFAULT\. \(at TestStack\/Tier\)$/.source));
    }
    expect(() => AmazonLinux2023KernelLine.of(line).ssmParameterName(ec2.InstanceArchitecture.ARM_64)).toThrow(/^Invalid kernel: must be a kernel line/);
  });

  test('of(a token) is refused: the line names the parameter at synth', () => {
    const { stack, vpc } = stackWithVpc();
    const token = new CfnParameter(stack, 'Line').valueAsString;
    const [, build] = TIERS[0];
    expect(() => build(stack, vpc, { kernel: AmazonLinux2023KernelLine.of(token) })).toThrow(/^Invalid kernel: must be .* got a token \(known at deploy time\)\..* \(at TestStack\/Tier\)$/);
  });
});

describe('the docs follow the constants (lib/instance/kernel.ts)', () => {
  const read = (f: string) => fs.readFileSync(path.join(__dirname, '..', '..', f), 'utf8');
  const member = `KERNEL_${DEFAULT_KERNEL_LINE.replace('.', '_')}`;

  // The fleet, the clients and the seeder take kernel and machineImage from CommonInstanceOptions, documented once.
  test('lib/instance/options.ts: kernel\'s @default and machineImage\'s', () => {
    const text = read('lib/instance/options.ts');
    expect(text).toContain(`   * @default AmazonLinux2023KernelLine.${member} - a line the lab proved\n   */\n  readonly kernel?: AmazonLinux2023KernelLine;`);
    expect(text).toMatch(new RegExp(`@default - Amazon Linux 2023 of the kernel line \`kernel\` \\(${DEFAULT_KERNEL_LINE.replace('.', '\\.')} unless given\\)`));
  });

  test('docs/images-and-kernels.md names the default line and the proved ones, with the lab\'s table of each proved line', () => {
    const readme = read('docs/images-and-kernels.md');
    expect(readme).toContain('## Why the default image does not float');
    expect(readme).toContain(`\`AmazonLinux2023KernelLine.${member}\``);
    expect(readme).toContain(`proved ${PROVED_KERNEL_LINES.slice(0, -1).join(', ')} and ${PROVED_KERNEL_LINES[PROVED_KERNEL_LINES.length - 1]}`);
    // The table of what the lab proved on which kernel has a column for each proved line (test/heavy/lab/kernels.lab.ts).
    const header = readme.split('\n').find((l) => l.startsWith('| behaviour the library relies on |'));
    expect(header).toBeDefined();
    for (const line of PROVED_KERNEL_LINES) expect(header!.split('|').map((c) => c.trim())).toContain(line);
    expect(readme).not.toContain('Amazon Linux 2023, default kernel, via SSM parameter');
  });
});
