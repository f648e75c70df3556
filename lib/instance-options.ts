import { Size } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { AmazonLinux2023KernelLine } from './kernel-line';

/**
 * What every construct that launches instances takes, under the same names: the nodes of a cache fleet
 * (`CacheFleetOptions`), FS-Cache clients (`FsCacheClientOptions`) and a data seeder's instance (`DataSeederProps`).
 * Each construct applies defaults of its own, which the `@default` of each option names.
 *
 * Subnets (`vpcSubnets`) and metrics (`metrics`) are not here: a launch template has no subnets (its Auto Scaling group
 * chooses them), and the seeder publishes no metrics. Each keeps that name where it exists.
 */
export interface CommonInstanceOptions {
  /**
   * The instance type, whose architecture (arm64 or x86_64) the default image follows. For a fleet's nodes memory is
   * the cache and network bandwidth the throughput. For FS-Cache clients its instance store holds the cache (or the EBS volume, with `diskCache: DiskCache.ebs()`);
   * the bootstrap finds cache disks by their NVMe model, so Xen-based types (previous generations) are refused, except
   * i3 and f1 with their NVMe instance store. For a data seeder network bandwidth and enough CPU for the rsync jobs
   * matter.
   *
   * @default - c7gn.16xlarge for a fleet's nodes (Graviton3, 64 vCPU, 128 GiB, 200 Gbps); m6id.xlarge for FS-Cache
   * clients (4 vCPU, 16 GiB, one 237 GB NVMe instance-store volume); m7g.xlarge for a data seeder (Graviton3, 4 vCPU,
   * 16 GiB, up to 12.5 Gbps). Some regions do not offer them (README lists them; a stack in such a region gets a synth
   * warning naming an alternative).
   */
  readonly instanceType?: ec2.InstanceType;

  /**
   * The instances' image. The bootstrap supports Amazon Linux 2023, Debian and Ubuntu; Windows and Amazon Linux 2
   * images are refused at synth where the image shows them, and any other OS at boot. Where the image's architecture
   * shows at synth, it must match `instanceType`'s (EC2 refuses to launch the instances otherwise): in the name of
   * the SSM parameter that holds its id (`MachineImage.latestAmazonLinux2023({ cpuType })` and the other Amazon Linux
   * helpers, `fromSsmParameter`, `resolveSsmParameterAtLaunch`: `arm64`/`aarch64` or `x86_64`/`amd64`), or in the
   * `architecture` filter of `MachineImage.lookup`. Other images (an AMI map, a parameter name that is a token) are
   * not checked.
   *
   * @default - Amazon Linux 2023 of the kernel line `kernel` (6.12 unless given), for the instance type's architecture,
   * via its SSM parameter
   */
  readonly machineImage?: ec2.IMachineImage;

  /**
   * The kernel line of the default image, Amazon Linux 2023 (each line is a public SSM parameter of its own per
   * architecture). A line the lab has not proved (docs/images-and-kernels.md, "Why the default image does not
   * float"), and `AmazonLinux2023KernelLine.DISTRIBUTION_DEFAULT`, which floats, warn at synth
   * (`cdk-efs-cache:kernelNotProved`).
   * Refused with `machineImage`, which chooses the image, kernel included.
   *
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
 * The defaults that every instance-owning construct shares (test/defaults.test.ts); the instance type, image and root
 * volume size are each construct's own.
 */
export const COMMON_INSTANCE_DEFAULTS = {
  kernel: AmazonLinux2023KernelLine.KERNEL_6_12,
} as const;
