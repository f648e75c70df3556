import { Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { AmazonLinux2023KernelLine } from './kernel-line';

/**
 * What every construct that launches instances takes, under the same names, each with defaults of its own.
 * Subnets and metrics are not here: a launch template has no subnets, and the seeder publishes no metrics.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
 */
export interface CommonInstanceOptions {
  /**
   * The instance type, whose architecture (arm64 or x86_64) the default image follows.
   * For a fleet's nodes memory is the cache and bandwidth the throughput; for FS-Cache clients the instance store
   * holds the cache.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/sizing-and-cost.md
   * @default - c7gn.16xlarge for a fleet's nodes (Graviton3, 64 vCPU, 128 GiB, 200 Gbps); m6id.xlarge for FS-Cache
   * clients (4 vCPU, 16 GiB, one 237 GB NVMe instance-store volume); m7g.xlarge for a data seeder (Graviton3, 4 vCPU,
   * 16 GiB, up to 12.5 Gbps). Some regions do not offer them (README lists them; a stack in such a region gets a synth
   * warning naming an alternative).
   */
  readonly instanceType?: ec2.InstanceType;

  /**
   * The instances' image: Amazon Linux 2023, Debian or Ubuntu, of `instanceType`'s architecture.
   * Windows and Amazon Linux 2 are refused at synth where the image shows them, any other OS at boot.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md
   * @default - Amazon Linux 2023 of the kernel line `kernel` (6.12 unless given), for the instance type's architecture,
   * via its SSM parameter
   */
  readonly machineImage?: ec2.IMachineImage;

  /**
   * The kernel line of the default image, Amazon Linux 2023; refused with `machineImage`, which brings its own kernel.
   * A line the lab has not proved, and the floating `DISTRIBUTION_DEFAULT`, warn at synth
   * (`cdk-efs-cache:kernelNotProved`).
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md
   * @default AmazonLinux2023KernelLine.KERNEL_6_12 - a line the lab proved
   */
  readonly kernel?: AmazonLinux2023KernelLine;

  /**
   * Size of the root volume (encrypted gp3), in whole GiB from 8 to 16384. A data seeder stages S3 and asset sources
   * on it, so there it must hold the data set (an asset needs room for its zip and the unpacked files while
   * unpacking).
   *
   * @default - Size.gibibytes(16) for a fleet's nodes and FS-Cache clients; Size.gibibytes(64) for a data seeder
   */
  readonly rootVolumeSize?: Size;
}

/**
 * The defaults that every instance-owning construct shares (test/defaults.test.ts); the instance type and root volume
 * size are each construct's own, in its defaults table, which `resolveInstance` (resolve.ts) applies.
 */
export const COMMON_INSTANCE_DEFAULTS = {
  kernel: AmazonLinux2023KernelLine.KERNEL_6_12,
} as const;
