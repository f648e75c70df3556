import { Size, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { propError } from '../private/errors';

/** What this library can tell about an image's CPU architecture at synth, and from where. */
export interface ImageArchitecture {
  readonly architecture: ec2.InstanceArchitecture;
  /** Where it was read, for the message: the SSM parameter's name or the lookup's filter. */
  readonly source: string;
}

const ARM_RE = /(^|[^A-Za-z0-9])(arm64|aarch64)([^A-Za-z0-9]|$)/;
const X86_RE = /(^|[^A-Za-z0-9])(x86_64|amd64)([^A-Za-z0-9]|$)/;

/**
 * The architecture of an image where it shows at synth without a lookup: in the name of the SSM parameter that holds
 * its id (`MachineImage.latestAmazonLinux2023({ cpuType })` and the other Amazon Linux helpers, `fromSsmParameter`,
 * `resolveSsmParameterAtLaunch`: AWS's public parameters name `arm64`/`aarch64` or `x86_64`/`amd64`), or in the
 * `architecture` filter of `MachineImage.lookup`. Anything else (an AMI map, a parameter name that is a token or
 * names no architecture or both) is not known: undefined.
 */
export function imageArchitecture(image: ec2.IMachineImage): ImageArchitecture | undefined {
  // The Amazon Linux helpers keep the parameter's name in `props` (not public API, read defensively).
  const i = image as unknown as { props?: { filters?: Record<string, unknown> } };
  const name = parameterNameOf(image);
  if (name !== undefined && !Token.isUnresolved(name)) {
    const arm = ARM_RE.test(name);
    // ECS's optimized Linux images name arm64 only: the others (standard, GPU, Neuron) are x86_64.
    const x86 = X86_RE.test(name) || (name.startsWith('/aws/service/ecs/optimized-ami/') && !arm);
    if (arm !== x86) {
      return { architecture: arm ? ec2.InstanceArchitecture.ARM_64 : ec2.InstanceArchitecture.X86_64, source: `SSM parameter '${name}'` };
    }
    return undefined;
  }
  if (image instanceof ec2.LookupMachineImage) {
    const filter = i.props?.filters?.architecture;
    if (Array.isArray(filter) && filter.length === 1 && (filter[0] === 'arm64' || filter[0] === 'x86_64')) {
      return {
        architecture: filter[0] === 'arm64' ? ec2.InstanceArchitecture.ARM_64 : ec2.InstanceArchitecture.X86_64,
        source: `lookup filter architecture '${filter[0]}'`,
      };
    }
  }
  return undefined;
}

/**
 * The name of the SSM parameter that holds an image's id, where the image keeps it: the Amazon Linux helpers and
 * `fromSsmParameter` (`parameterName`, `props.parameterName`), ECS's optimized images and Bottlerocket
 * (`amiParameterName`). Not public API, read defensively.
 */
function parameterNameOf(image: ec2.IMachineImage): string | undefined {
  const i = image as unknown as { parameterName?: unknown; amiParameterName?: unknown; props?: { parameterName?: unknown } };
  return [i.parameterName, i.props?.parameterName, i.amiParameterName].find((n): n is string => typeof n === 'string');
}

/** The SSM parameters of Amazon's EKS-optimized Amazon Linux 2023 images: `/aws/service/eks/optimized-ami/<version>/amazon-linux-2023/...`. */
const EKS_AL2023_RE = /^\/aws\/service\/eks\/optimized-ami\/[^/]+\/amazon-linux-2023\//;

/**
 * What an image is for EKS nodes, where its SSM parameter's name shows it at synth: `eks-al2023` (Amazon's
 * EKS-optimized Amazon Linux 2023, with nodeadm and the kubelet), `other` (an image whose name is known and is not
 * that), or undefined (an AMI map, a lookup, a parameter name that is a token: not known here).
 */
export function eksImageKind(image: ec2.IMachineImage): 'eks-al2023' | 'other' | undefined {
  const name = parameterNameOf(image);
  if (name === undefined || Token.isUnresolved(name)) return undefined;
  return EKS_AL2023_RE.test(name) ? 'eks-al2023' : 'other';
}

/** The SSM parameter of the EKS-optimized Amazon Linux 2023 image for a Kubernetes version and an architecture. */
export function eksAl2023ImageParameter(kubernetesVersion: string, architecture: ec2.InstanceArchitecture): string {
  return `/aws/service/eks/optimized-ami/${kubernetesVersion}/amazon-linux-2023/${architecture === ec2.InstanceArchitecture.ARM_64 ? 'arm64' : 'x86_64'}` +
    '/standard/recommended/image_id';
}

/** The architecture aws-cdk-lib reads from an instance type's name; undefined where it cannot read the name. */
function typeArchitecture(instanceType: ec2.InstanceType): ec2.InstanceArchitecture | undefined {
  try {
    return instanceType.architecture;
  } catch {
    return undefined;
  }
}

/**
 * Throws `Invalid machineImage` when the image's architecture is known at synth and is not the instance type's: EC2
 * refuses to launch the instances, at deploy time. Images whose architecture is not known pass.
 */
export function checkImageArchitecture(scope: IConstruct, image: ec2.IMachineImage | undefined, instanceType: ec2.InstanceType): void {
  if (!image) return;
  const img = imageArchitecture(image);
  const type = typeArchitecture(instanceType);
  if (!img || !type || img.architecture === type) return;
  const helper = type === ec2.InstanceArchitecture.ARM_64 ? 'ARM_64' : 'X86_64';
  throw propError(scope, 'machineImage', `the image is for ${img.architecture} (${img.source}), but ${instanceType} is ` +
    `${type}: EC2 would refuse to launch the instances. Use an image for ${type}, for example ` +
    `ec2.MachineImage.latestAmazonLinux2023({ cpuType: ec2.AmazonLinuxCpuType.${helper} }), or leave machineImage unset ` +
    '(Amazon Linux 2023 for the instance type\'s architecture).');
}

/** The names an image shows at synth: its SSM parameter's, or the name filter of a lookup. */
function imageNames(image: ec2.IMachineImage): string[] {
  const i = image as unknown as { props?: { name?: unknown } };
  return [parameterNameOf(image), image instanceof ec2.LookupMachineImage ? i.props?.name : undefined]
    .filter((n): n is string => typeof n === 'string' && !Token.isUnresolved(n));
}

/**
 * Throws `Invalid machineImage` for an image the instance scripts cannot run on: Windows (`osType`, as the launch
 * template or instance read it from the image: its user data is not a bash script), and Amazon Linux 2 or the first
 * Amazon Linux where the image's parameter or lookup names it (they have yum, no dnf, and not AL2023's packages).
 * Images that show neither pass; the scripts refuse an unsupported OS at boot too.
 */
export function checkImageOs(scope: IConstruct, image: ec2.IMachineImage | undefined, osType: ec2.OperatingSystemType | undefined): void {
  if (!image) return;
  const supported = 'Amazon Linux 2023 (leave machineImage unset, or ec2.MachineImage.latestAmazonLinux2023()), Debian or Ubuntu';
  if (osType === ec2.OperatingSystemType.WINDOWS) {
    throw propError(scope, 'machineImage', `is a Windows image: the instances run bash scripts as Linux user data. Use ${supported}.`);
  }
  const names = imageNames(image);
  const bottlerocket = names.find((n) => /(^|[/*-])bottlerocket([/*-]|$)/.test(n));
  if (bottlerocket) {
    throw propError(scope, 'machineImage', `is Bottlerocket ('${bottlerocket}'): its user data is TOML settings, not a script, ` +
      `and it has no package manager for cachefilesd or nfs-utils. Use ${supported}.`);
  }
  const old = names.find((n) => /(^|[/*])amzn2?-ami/.test(n) || /\/optimized-ami\/amazon-linux(-2)?\//.test(n) ||
    /^\/aws\/service\/eks\/optimized-ami\/[^/]+\/amazon-linux-2(-arm64|-gpu)?\//.test(n));
  if (old) {
    throw propError(scope, 'machineImage', `is Amazon Linux 2 or older ('${old}'): the scripts install packages with dnf under ` +
      `AL2023's names, or with apt. Use ${supported}.`);
  }
}

/**
 * Amazon's ECS-optimized Linux images are built with a 30 GiB root device (amazon-ecs-ami's packer variable
 * `block_device_size_gb`), its EKS-optimized Amazon Linux 2023 images with a 20 GiB one (amazon-eks-ami's
 * `launch_block_device_mappings_volume_size`), and EC2 refuses to launch an instance whose root volume is smaller than
 * its image's snapshot.
 */
const OPTIMIZED_ROOTS: Array<{ prefix: RegExp; size: Size }> = [
  { prefix: /^\/aws\/service\/ecs\/optimized-ami\//, size: Size.gibibytes(30) },
  { prefix: EKS_AL2023_RE, size: Size.gibibytes(20) },
];

export function rootVolumeSizeFor(scope: IConstruct, image: ec2.IMachineImage | undefined, given: Size | undefined, fallback: Size): Size {
  const name = image ? parameterNameOf(image) : undefined;
  const needed = name !== undefined && !Token.isUnresolved(name) ? OPTIMIZED_ROOTS.find((r) => r.prefix.test(name))?.size : undefined;
  if (!needed) return given ?? fallback;
  if (given === undefined) return needed.toGibibytes() > fallback.toGibibytes() ? needed : fallback;
  if (!given.isUnresolved() && given.toGibibytes() < needed.toGibibytes()) {
    throw propError(scope, 'rootVolumeSize', `is ${given.toGibibytes()} GiB, but the image ('${name}') is built with a ` +
      `${needed.toGibibytes()} GiB root device: EC2 would refuse to launch the instances. Give at least ` +
      `Size.gibibytes(${needed.toGibibytes()}), or leave rootVolumeSize unset.`);
  }
  return given;
}
