/** How instances mount NFS. */
export enum MountHelper {
  /**
   * amazon-efs-utils (`mount -t efs -o tls,iam`): TLS and IAM, which a file system this library creates requires.
   * AWS only.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/images-and-kernels.md
   */
  EFS_UTILS = 'EFS_UTILS',
  /** Plain NFSv4.1 (`mount -t nfs4`): for a cache fleet, or an origin whose policy allows non-TLS access. */
  NFS = 'NFS',
}
