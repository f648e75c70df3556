/** How instances mount NFS. */
export enum MountHelper {
  /**
   * amazon-efs-utils (`mount -t efs -o tls,iam`): encrypted in transit, as the TLS-only policy of a file system
   * created by this library requires. AWS only.
   */
  EFS_UTILS = 'EFS_UTILS',
  /** Plain NFSv4.1 (`mount -t nfs4`): for a cache fleet, or an origin whose policy allows non-TLS access. */
  NFS = 'NFS',
}
