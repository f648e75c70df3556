import { Duration, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as efs from 'aws-cdk-lib/aws-efs';

/** How instances mount NFS. */
export enum MountHelper {
  /**
   * amazon-efs-utils (`mount -t efs -o tls,iam`): encrypted in transit, as the TLS-only policy of a file system
   * created by this library requires. AWS only.
   */
  EFS_UTILS = 'efs',
  /** Plain NFSv4.1 (`mount -t nfs4`): for a cache fleet, or an origin whose policy allows non-TLS access. */
  NFS = 'nfs4',
}

/** The options EFS recommends for NFS clients. */
export const RECOMMENDED_NFS_OPTIONS = ['nfsvers=4.1', 'rsize=1048576', 'wsize=1048576', 'hard', 'timeo=600', 'retrans=2', 'noresvport'];

/** `fs-id.efs.REGION.URL_SUFFIX` of a file system. */
export function efsDnsName(fileSystem: efs.IFileSystem): string {
  const stack = Stack.of(fileSystem);
  return `${fileSystem.fileSystemId}.efs.${stack.region}.${stack.urlSuffix}`;
}

/** Whole seconds of a duration, as a string for a mount option or script parameter. */
export function seconds(d: Duration): string {
  return String(d.toSeconds({ integral: true }));
}

/** A systemd time span (`90min`, `6h`) for a duration of whole minutes. */
export function systemdTimeSpan(d: Duration): string {
  const minutes = d.toMinutes({ integral: true });
  return minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}min`;
}

/** Amazon Linux 2023 with the distribution's default kernel, through its public SSM parameter (no lookup). */
export function amazonLinux2023(arch: ec2.InstanceArchitecture): ec2.IMachineImage {
  const cpu = arch === ec2.InstanceArchitecture.ARM_64 ? 'arm64' : 'x86_64';
  return ec2.MachineImage.fromSsmParameter(`/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-${cpu}`, {
    os: ec2.OperatingSystemType.LINUX,
  });
}
