import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { IConstruct } from 'constructs';
import { describeValue, propError } from '../private/errors';

/** `6.12`: major and minor, without leading zeros (the names of AWS's parameters have none). */
const LINE_RE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/**
 * A kernel line of Amazon Linux 2023, the image the library's instances boot unless given a `machineImage`.
 * What the library relies on changes between lines, so a line the lab has not proved warns at synth.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md
 */
export class AmazonLinux2023KernelLine {
  /** Kernel line 6.1 (`al2023-ami-kernel-6.1-<arch>`). */
  public static readonly KERNEL_6_1 = new AmazonLinux2023KernelLine('6.1');

  /** Kernel line 6.12 (`al2023-ami-kernel-6.12-<arch>`). */
  public static readonly KERNEL_6_12 = new AmazonLinux2023KernelLine('6.12');

  /**
   * Kernel line 6.18 (`al2023-ami-kernel-6.18-<arch>`). From about 6.15, nfsd gives clients of a re-exported NFS file
   * system (the cache nodes' export) no locks and no delegations.
   */
  public static readonly KERNEL_6_18 = new AmazonLinux2023KernelLine('6.18');

  /**
   * Whichever line AWS makes Amazon Linux 2023's default (`al2023-ami-kernel-default-<arch>`), which floats: it
   * always warns at synth.
   * After AWS moves it to a new line, the next deploy replaces the instances with that line, proved or not.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md
   */
  public static readonly DISTRIBUTION_DEFAULT = new AmazonLinux2023KernelLine('default');

  /**
   * Any kernel line by its number, `major.minor` (`'6.12'`, `'7.0'`), known at synth.
   * Its SSM parameter must exist in the stack's region, or `cdk deploy` fails.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md
   */
  public static of(line: string): AmazonLinux2023KernelLine {
    const problem = typeof line !== 'string' || !LINE_RE.test(line)
      ? `must be a kernel line of Amazon Linux 2023 as major.minor, known at synth (such as '6.12'), got ` +
        `${describeValue(line)}. For the distribution's floating default, use AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT.`
      : undefined;
    return new AmazonLinux2023KernelLine(line, problem);
  }

  /** The line as the SSM parameter's name spells it: `6.12`, or `default` for `DISTRIBUTION_DEFAULT`. */
  public readonly line: string;

  /** Why `of()` could not take the line, said by the construct it is given to. */
  private readonly problem?: string;

  private constructor(line: string, problem?: string) {
    this.line = line;
    this.problem = problem;
  }

  /**
   * Throws `Invalid kernel:` naming `scope` when the line is not one (`of()` with a bad value).
   *
   * @internal
   */
  public _validate(scope: IConstruct): void {
    if (this.problem) throw propError(scope, 'kernel', this.problem);
  }

  /**
   * The public SSM parameter that holds the id of this line's newest image for an architecture:
   * `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-6.12-arm64`.
   */
  public ssmParameterName(architecture: ec2.InstanceArchitecture): string {
    if (this.problem) throw propError(undefined, 'kernel', this.problem);
    const cpu = architecture === ec2.InstanceArchitecture.ARM_64 ? 'arm64' : 'x86_64';
    return `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-${this.line}-${cpu}`;
  }

  /** The line (`6.12`, or `default`). */
  public toString(): string {
    return this.line;
  }
}
