/**
 * The NFS version nodes mount an NFS server origin with, or clients mount a cache fleet with.
 * NFSv4.0 is not offered: the kernel cannot re-export an NFSv4.0 mount.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
 */
export enum NfsVersion {
  /**
   * NFSv3 over TCP, to fixed ports (nothing queries rpcbind); for clients of a fleet, Route 53 fan-out only.
   * It has no OPEN, so a client re-opens and re-reads a file it holds without asking the node.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   */
  NFS_V3 = 'NFS_V3',
  /**
   * NFSv4.1, on nfsd's port alone; between clients and nodes the default.
   * Every re-open reaches the node, and through it the origin, as an OPEN: the node spares the origin reads, not opens.
   *
   * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
   */
  NFS_V4_1 = 'NFS_V4_1',
  /**
   * NFSv4.2, to an NFS server origin only (`mount -t nfs4 -o nfsvers=4.2`, nfsd's port alone). The nodes serve NFSv3
   * and NFSv4.1 to clients, so a fleet's `clientNfsVersion` cannot be NFSv4.2.
   */
  NFS_V4_2 = 'NFS_V4_2',
}
