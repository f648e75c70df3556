import * as ec2 from 'aws-cdk-lib/aws-ec2';

/** What this library can tell about an instance type from its name alone, offline. */
export interface InstanceTypeFacts {
  /** vCPUs, when the size names them (large = 2, xlarge = 4, Nxlarge = 4N). */
  readonly vcpus?: number;
  /** Memory in GiB, for families with a fixed memory-to-vCPU ratio (c = 2, m = 4, r = 8, x = 16). */
  readonly memoryGiB?: number;
  /** true: has instance store; false: known to have none; undefined: not known. */
  readonly instanceStore?: boolean;
}

const SIZE_VCPUS: Record<string, number> = { medium: 1, large: 2, xlarge: 4 };
const MEMORY_PER_VCPU: Record<string, number> = { c: 2, m: 4, r: 8, x: 16 };

/**
 * Facts read from an instance type's name: `<family><generation><attributes>.<size>`, e.g. c7gn.16xlarge
 * (family c, generation 7, attributes gn). Families c, m, r and t from generation 4 on have instance store exactly
 * when their attributes include `d` (c6gd, m5d, r6id); i, d and h families always have it.
 */
export function instanceTypeFacts(instanceType: ec2.InstanceType): InstanceTypeFacts {
  const m = /^([a-z]+?)(\d+)([a-z-]*)\.([a-z0-9]+)$/.exec(instanceType.toString());
  if (!m) return {};
  const [, family, gen, attrs, size] = m;
  const sized = /^(\d+)xlarge$/.exec(size);
  const vcpus = sized ? 4 * Number(sized[1]) : SIZE_VCPUS[size];
  const ratio = MEMORY_PER_VCPU[family];
  const memoryGiB = vcpus !== undefined && ratio !== undefined && family !== 'x' ? vcpus * ratio : undefined;
  let instanceStore: boolean | undefined;
  if (/^(i|d|h|im|is)$/.test(family)) instanceStore = true;
  else if (attrs.includes('d')) instanceStore = true;
  else if (/^[cmrt]$/.test(family) && Number(gen) >= 4) instanceStore = false;
  return { vcpus, memoryGiB, instanceStore };
}
