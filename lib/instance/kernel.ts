import { Annotations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { propError } from '../private/errors';
import { defaultImageArchitecture } from './instance-types';
import { AmazonLinux2023KernelLine } from './kernel-line';
import { COMMON_INSTANCE_DEFAULTS, CommonInstanceOptions } from './options';

/**
 * The Amazon Linux 2023 kernel lines the lab (test/heavy/lab/) proved, and the line the library's instances boot when
 * neither `machineImage` nor `kernel` is given (one of the proved lines). Change them from the lab's results only,
 * together with the README (the kernel table under "Why the default image does not float", the props tables, and the
 * upgrade notes: a new default replaces the nodes and the seeder's instance on the next deploy) and the `kernel`
 * props' `@default`; test/instance/kernel.test.ts holds the docs to these two constants.
 */
export const PROVED_KERNEL_LINES: readonly string[] = ['6.1', '6.12'];
/** The default line: `COMMON_INSTANCE_DEFAULTS.kernel`'s, named once there. */
export const DEFAULT_KERNEL_LINE: string = COMMON_INSTANCE_DEFAULTS.kernel.line;

/** The props that choose the image of a construct's instances. */
export type ImageChoice = Pick<CommonInstanceOptions, 'machineImage' | 'kernel'>;

/** The proved lines in words: `6.1 and 6.12`. */
function provedInWords(): string {
  const lines = [...PROVED_KERNEL_LINES];
  return lines.length > 1 ? `${lines.slice(0, -1).join(', ')} and ${lines[lines.length - 1]}` : lines.join('');
}

/**
 * Throws `Invalid kernel` when `kernel` is given with `machineImage` (which already chooses the image, kernel
 * included), and warns (`kernel:`, `cdk-efs-cache:kernelNotProved`) when the chosen line is not one the lab proved:
 * `DISTRIBUTION_DEFAULT` always, since it floats. No warning without `kernel` (the default is proved).
 */
export function checkKernel(scope: IConstruct, p: ImageChoice): void {
  if (!p.kernel) return;
  p.kernel._validate(scope);
  if (p.machineImage) {
    throw propError(scope, 'kernel', 'machineImage already chooses the image, and the kernel with it: kernel chooses the ' +
      'line of the default image (Amazon Linux 2023) only. Give one of them.');
  }
  const proved = `The lab proved ${provedInWords()} (docs/images-and-kernels.md, "Why the default image does not float"); leave kernel unset ` +
    `for ${DEFAULT_KERNEL_LINE}, or acknowledge this warning once the line is proved for your use.`;
  if (p.kernel.line === AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT.line) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:kernelNotProved', 'kernel: DISTRIBUTION_DEFAULT is whichever line AWS ' +
      'makes Amazon Linux 2023\'s default (al2023-ami-kernel-default): it floats, so no lab can have proved it, and after ' +
      'AWS moves it the next deploy replaces the instances with the new line. FS-Cache reads, the NFS re-export and its ' +
      `locks and delegations change between kernel lines, and the library relies on each. ${proved}`);
  } else if (!PROVED_KERNEL_LINES.includes(p.kernel.line)) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:kernelNotProved', `kernel: Amazon Linux 2023's kernel line ` +
      `${p.kernel.line} is not one the lab proved. FS-Cache reads, the NFS re-export and its locks and delegations change ` +
      `between kernel lines, and the library relies on each. ${proved}`);
  }
}

/**
 * The image of a construct's instances: `machineImage` when given, else Amazon Linux 2023 of the kernel line `kernel`
 * (`DEFAULT_KERNEL_LINE` when not given) for the architecture of `instanceType`, through the line's public SSM
 * parameter (no lookup). Call `checkKernel` first.
 */
export function instanceImage(scope: IConstruct, p: ImageChoice, instanceType: ec2.InstanceType): ec2.IMachineImage {
  if (p.machineImage) return p.machineImage;
  const line = p.kernel ?? COMMON_INSTANCE_DEFAULTS.kernel;
  return ec2.MachineImage.fromSsmParameter(line.ssmParameterName(defaultImageArchitecture(scope, instanceType)), {
    os: ec2.OperatingSystemType.LINUX,
  });
}
