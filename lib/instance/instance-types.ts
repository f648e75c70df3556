import { Annotations, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct, IConstruct } from 'constructs';
import { describeValue, propError } from '../private/errors';
import { INSTANCE_TYPE_REGIONS } from './instance-type-regions';

/** What this library can tell about an instance type from its name alone, offline. */
export interface InstanceTypeFacts {
  /** Whether the name reads as `<family><generation><attributes>.<size>`; false: nothing else is known. */
  readonly parsed: boolean;
  /** vCPUs, when the size names them (large = 2, xlarge = 4, Nxlarge = 4N). */
  readonly vcpus?: number;
  /** Memory in GiB, for families with a fixed memory-to-vCPU ratio (c = 2, m = 4, r = 8 from the Nitro generations). */
  readonly memoryGiB?: number;
  /** true: has instance store; false: known to have none; undefined: not known. */
  readonly instanceStore?: boolean;
  /** With instance store: whether it is NVMe (every Nitro type's is; of the Xen types only i3's and f1's). */
  readonly nvmeInstanceStore?: boolean;
  /**
   * Total instance store in GB (10^9 bytes, as AWS lists it), for the families `INSTANCE_STORE_GB` knows; undefined
   * for the others.
   */
  readonly instanceStoreGB?: number;
  /**
   * true: a Xen-based type (previous generations). Its EBS volumes, and instance store other than i3's and f1's,
   * attach as /dev/xvd* block devices with no NVMe model string.
   */
  readonly xen?: boolean;
}

const SIZE_VCPUS: Record<string, number> = { medium: 1, large: 2, xlarge: 4 };
const MEMORY_PER_VCPU: Record<string, number> = { c: 2, m: 4, r: 8 };

/**
 * The Xen-based types (AWS EC2 documentation: "Instances built on the AWS Nitro System" lists every other current
 * type as Nitro; the previous-generation page lists these), by `<family><generation><attributes>`, with their
 * instance store: none, NVMe (i3, f1: passed through as NVMe devices) or disks that attach through Xen's block driver
 * (/dev/xvd*, SSD or HDD). Their bare-metal sizes (i3.metal) are Nitro.
 */
const XEN_INSTANCE_STORE: Record<string, 'none' | 'nvme' | 'xvd'> = {
  t1: 'none', t2: 'none', m4: 'none', c4: 'none', r4: 'none', p2: 'none', p3: 'none', g3: 'none', g3s: 'none',
  i3: 'nvme', f1: 'nvme',
  m1: 'xvd', m2: 'xvd', m3: 'xvd', c1: 'xvd', c3: 'xvd', cc2: 'xvd', cg1: 'xvd', cr1: 'xvd', r3: 'xvd', x1: 'xvd',
  x1e: 'xvd', d2: 'xvd', h1: 'xvd', hi1: 'xvd', hs1: 'xvd', i2: 'xvd', g2: 'xvd',
};

/**
 * Instance store (total GB) of the storage-bearing Nitro families of generations 6 to 8 (c6gd, m6id, r7gd, c8gd, ...):
 * it follows the vCPUs (59 GB for one, 3800 for 64), from AWS's EC2 instance type specifications.
 */
const STORE_GB_BY_VCPUS: Record<number, number> = {
  1: 59, 2: 118, 4: 237, 8: 474, 16: 950, 32: 1900, 48: 2850, 64: 3800, 96: 5700, 128: 7600, 192: 11400, 384: 22800,
};
const I4I_STORE_GB: Record<string, number> = {
  'large': 468, 'xlarge': 937, '2xlarge': 1875, '4xlarge': 3750, '8xlarge': 7500, '12xlarge': 11250, '16xlarge': 15000,
  '24xlarge': 22500, '32xlarge': 30000, '48xlarge': 45000, 'metal-24xl': 22500, 'metal-48xl': 45000,
};
const I3EN_STORE_GB: Record<string, number> = {
  'large': 1250, 'xlarge': 2500, '2xlarge': 5000, '3xlarge': 7500, '6xlarge': 15000, '12xlarge': 30000, '18xlarge': 45000,
  '24xlarge': 60000, '48xlarge': 120000, 'metal': 60000, 'metal-24xl': 60000, 'metal-48xl': 120000,
};
const M5D_STORE_GB: Record<string, number> = {
  'large': 75, 'xlarge': 150, '2xlarge': 300, '4xlarge': 600, '8xlarge': 1200, '12xlarge': 1800, '16xlarge': 2400,
  '24xlarge': 3600, 'metal': 3600,
};

/**
 * Instance store (total GB) by `<family><generation><attributes>` and size, from AWS's EC2 instance type
 * specifications (instance store tables), for the families with NVMe instance store a cache node is likely to run on.
 */
const INSTANCE_STORE_GB: Record<string, Record<string, number>> = {
  c5d: { 'large': 50, 'xlarge': 100, '2xlarge': 200, '4xlarge': 400, '9xlarge': 900, '12xlarge': 1800, '18xlarge': 1800, '24xlarge': 3600, 'metal': 3600 },
  c5ad: { 'large': 75, 'xlarge': 150, '2xlarge': 300, '4xlarge': 600, '8xlarge': 1200, '12xlarge': 1800, '16xlarge': 2400, '24xlarge': 3800 },
  m5d: M5D_STORE_GB,
  r5d: M5D_STORE_GB,
  i3: { 'large': 475, 'xlarge': 950, '2xlarge': 1900, '4xlarge': 3800, '8xlarge': 7600, '16xlarge': 15200, 'metal': 15200 },
  i3en: I3EN_STORE_GB,
  i7ie: I3EN_STORE_GB,
  i8ge: I3EN_STORE_GB,
  i4g: I4I_STORE_GB,
  i4i: { ...I4I_STORE_GB, metal: 30000 },
  i7i: I4I_STORE_GB,
  i8g: I4I_STORE_GB,
  im4gn: { 'large': 937, 'xlarge': 1875, '2xlarge': 3750, '4xlarge': 7500, '8xlarge': 15000, '16xlarge': 30000 },
  is4gen: { 'medium': 937, 'large': 1875, 'xlarge': 3750, '2xlarge': 7500, '4xlarge': 15000, '8xlarge': 30000 },
};

/** The total instance store of a type in GB, where `INSTANCE_STORE_GB` or `STORE_GB_BY_VCPUS` knows it. */
function instanceStoreGB(family: string, gen: string, attrs: string, size: string, vcpus: number | undefined): number | undefined {
  const table = INSTANCE_STORE_GB[`${family}${gen}${attrs}`];
  if (table) return table[size];
  if (/^[cmr]$/.test(family) && /^[678]$/.test(gen) && /^[gi]d$/.test(attrs) && vcpus !== undefined) return STORE_GB_BY_VCPUS[vcpus];
  return undefined;
}

/**
 * Facts read from an instance type's name: `<family><generation><attributes>.<size>`, e.g. c7gn.16xlarge
 * (family c, generation 7, attributes gn). Families c, m, r and t from generation 4 on have instance store exactly
 * when their attributes include `d` (c6gd, m5d, r6id); i, d and h families always have it. Xen-based types come from
 * a table (`XEN_INSTANCE_STORE`); their memory is known only for m4 (the c, r and m3 ratios differ).
 */
export function instanceTypeFacts(instanceType: ec2.InstanceType): InstanceTypeFacts {
  const m = /^([a-z]+?)(\d+)([a-z-]*)\.([a-z0-9-]+)$/.exec(instanceType.toString());
  if (!m) return { parsed: false };
  const [, family, gen, attrs, size] = m;
  const sized = /^(\d+)xlarge$/.exec(size);
  const vcpus = sized ? 4 * Number(sized[1]) : SIZE_VCPUS[size];
  const storeGB = instanceStoreGB(family, gen, attrs, size, vcpus);
  const xenStore = size.startsWith('metal') ? undefined : XEN_INSTANCE_STORE[`${family}${gen}${attrs}`];
  if (xenStore) {
    return {
      parsed: true,
      vcpus,
      memoryGiB: family === 'm' && gen === '4' && vcpus !== undefined ? 4 * vcpus : undefined,
      instanceStore: xenStore !== 'none',
      nvmeInstanceStore: xenStore === 'none' ? undefined : xenStore === 'nvme',
      instanceStoreGB: storeGB,
      xen: true,
    };
  }
  const ratio = MEMORY_PER_VCPU[family];
  const memoryGiB = vcpus !== undefined && ratio !== undefined ? vcpus * ratio : undefined;
  let instanceStore: boolean | undefined;
  if (/^(i|d|h|im|is)$/.test(family)) instanceStore = true;
  else if (attrs.includes('d')) instanceStore = true;
  else if (/^[cmrt]$/.test(family) && Number(gen) >= 4) instanceStore = false;
  return {
    parsed: true, vcpus, memoryGiB, instanceStore, nvmeInstanceStore: instanceStore ? true : undefined,
    instanceStoreGB: instanceStore ? storeGB : undefined, xen: false,
  };
}

/** EC2's instance type names: lower case, `<family>.<size>` (c7gn.16xlarge, u-6tb1.112xlarge, mac2-m2pro.metal). */
const EC2_TYPE_NAME = /^[a-z][a-z0-9-]*\.[a-z0-9-]+$/;

/** What a valid instance type name looks like, for messages. */
const TYPE_NAME_FORM = 'a name reads <family><generation><attributes>.<size> in lower case, for example c7gn.16xlarge, ' +
  'm6id.xlarge or r7g.metal';

/**
 * Throws `Invalid instanceType` for a name that no EC2 instance type has (`c7gn16xlarge`, `C7GN.16XLARGE`), before
 * aws-cdk-lib's own `Malformed instance type identifier`, which names no prop, or EC2 at deploy. A token passes.
 */
export function checkInstanceTypeName(scope: IConstruct, instanceType: ec2.InstanceType | undefined): void {
  const name = instanceType?.toString();
  if (name === undefined || Token.isUnresolved(name) || EC2_TYPE_NAME.test(name)) return;
  throw propError(scope, 'instanceType', `${describeValue(name)} is not an EC2 instance type name: ${TYPE_NAME_FORM}.`);
}

/**
 * The architecture of `instanceType`, which chooses the default image (Amazon Linux 2023 for arm64 or x86_64).
 * aws-cdk-lib reads it from the name and throws `Malformed instance type identifier` for names it cannot read (a
 * token, or a valid name such as u-6tb1.112xlarge): that becomes `Invalid instanceType`, saying to give a
 * `machineImage` (the prop named `imageProp`).
 */
export function defaultImageArchitecture(scope: IConstruct, instanceType: ec2.InstanceType, imageProp = 'machineImage'): ec2.InstanceArchitecture {
  checkInstanceTypeName(scope, instanceType);
  try {
    return instanceType.architecture;
  } catch {
    const name = instanceType.toString();
    throw propError(scope, 'instanceType', Token.isUnresolved(name)
      ? `is ${describeValue(name, scope)}, and the default ${imageProp} follows the architecture in the type's name, ` +
        `which is not known at synth: give a type known at synth, or a ${imageProp} (arm64 or x86_64 as the type).`
      : `the architecture of ${name} cannot be read from its name (aws-cdk-lib reads <family><generation><attributes>.<size>, ` +
        `for example c7gn.16xlarge), and the default ${imageProp} follows it: give a ${imageProp} for the type's architecture.`);
  }
}

/**
 * Warns (`instanceType:`) when a cache node type's vCPUs or memory are not known from its name: the nfsd thread
 * default then falls back to a fixed number, and `workingSetSize` cannot be compared with the node's memory.
 * `defaultThreads`: the threads chosen for the user, undefined when they set `tuning.nfsdThreads`.
 */
export function warnUnknownNodeSize(scope: Construct, instanceType: ec2.InstanceType, facts: InstanceTypeFacts, defaultThreads?: number): void {
  if (facts.vcpus !== undefined && facts.memoryGiB !== undefined) return;
  const consequences = [
    ...(facts.vcpus === undefined && defaultThreads !== undefined
      ? [`each node runs ${defaultThreads} nfsd threads by default (set tuning.nfsdThreads to size them)`] : []),
    'workingSetSize cannot be checked against its memory',
  ];
  Annotations.of(scope).addWarningV2('cdk-efs-cache:unknownInstanceSize',
    `instanceType: the ${facts.vcpus === undefined ? 'vCPUs and memory' : 'memory'} of ${describeValue(instanceType, scope, false)} ` +
    `${facts.vcpus === undefined ? 'are' : 'is'} not known here, so ${consequences.join(', and ')}.`);
}

/**
 * Refuses a client type whose cache devices the bootstrap can never find: it picks disks by their NVMe model string
 * (`Amazon EC2 NVMe Instance Storage`, `Amazon Elastic Block Store`), and on Xen-based types EBS volumes and most
 * instance store attach as /dev/xvd* with no model at all. A name this library cannot read gets a warning with EBS
 * (with instance store, the unknown-instance-store warning covers it).
 */
export function checkCacheDevicesFindable(scope: Construct, instanceType: ec2.InstanceType, facts: InstanceTypeFacts, ebs: boolean): void {
  const noModel = 'attach as /dev/xvd* block devices with no NVMe model, so the bootstrap can never find';
  if (facts.xen && ebs) {
    throw propError(scope, 'instanceType', `${instanceType} is Xen-based: its EBS volumes ${noModel} the cache volume ` +
      '(diskCache: DiskCache.ebs()). Choose a Nitro-based type (every current generation, e.g. m6i, c7g, r6g).');
  }
  if (facts.xen && facts.nvmeInstanceStore === false) {
    throw propError(scope, 'instanceType', `${instanceType} is Xen-based and its instance store is not NVMe: the disks ` +
      `${noModel} them. Choose a type with NVMe instance store (for example m6id, c6gd, i4i).`);
  }
  if (facts.xen && facts.instanceStore === false) {
    throw propError(scope, 'instanceType', `${instanceType} has no instance store, and as a Xen-based type cannot hold the ` +
      `cache on EBS either (its volumes ${noModel} them). Choose a Nitro-based type: with NVMe instance store (m6id, ` +
      'c6gd, i4i), or any other with diskCache: DiskCache.ebs().');
  }
  if (!facts.parsed && ebs) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:unknownInstanceType',
      `instanceType: ${describeValue(instanceType, scope, false)} does not read as family, generation and size (e.g. m6i.xlarge), so whether it ` +
      'is Nitro-based is not known here: on a Xen-based type the EBS cache volume has no NVMe model and the ' +
      'bootstrap never finds it.');
  }
}

/**
 * Warns (`instanceType:`) when a construct uses its default type (`given` undefined) in a region known at synth
 * where that type is not offered (lib/instance/instance-type-regions.ts, generated from cfn-lint's data): instances
 * would fail to launch at deploy time. Names up to two alternatives offered there. Env-agnostic stacks (the region
 * is a token) and regions the data does not know get no warning.
 */
export function warnIfDefaultTypeNotOffered(scope: Construct, defaultType: string, given: ec2.InstanceType | undefined): void {
  if (given) return;
  const region = Stack.of(scope).region;
  const data = INSTANCE_TYPE_REGIONS;
  if (Token.isUnresolved(region) || !data.regions.includes(region)) return;
  const entry = Object.values(data.defaults).find((d) => d.type === defaultType);
  if (!entry || data.offered[defaultType]?.includes(region)) return;
  const arch = new ec2.InstanceType(defaultType).architecture;
  const alternatives = entry.alternatives.filter((t) => data.offered[t]?.includes(region)).slice(0, 2)
    .map((t) => (new ec2.InstanceType(t).architecture === arch ? t : `${t} (${new ec2.InstanceType(t).architecture})`));
  Annotations.of(scope).addWarningV2('cdk-efs-cache:defaultInstanceTypeNotOffered',
    `instanceType: the default ${defaultType} is not offered in ${region} (per ${data.source}), so instances would ` +
    'fail to launch there. Pass instanceType' +
    (alternatives.length ? `, for example ${alternatives.join(' or ')}, offered in ${region}.` : ' with a type offered there.'));
}
