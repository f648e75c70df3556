/**
 * An NFS version: the one the cache nodes mount an NFS server origin with (`NfsServerOptions.nfsVersion`), and the one
 * clients mount a cache fleet with (`CacheFleetOptions.clientNfsVersion`, NFSv3 or NFSv4.1). NFSv4.0 is not offered:
 * the kernel cannot re-export an NFSv4.0 mount (Documentation/filesystems/nfs/reexport.rst).
 */
export enum NfsVersion {
  /**
   * NFSv3. To an NFS server origin: `mount -t nfs -o nfsvers=3`, over TCP, to the server's nfsd and rpc.mountd at the
   * ports `ports` names (`port=`, `mountport=`), so the mount asks the server's rpcbind nothing; `nolock` unless
   * `ports.lockd` is given.
   *
   * For clients of a fleet (and NFSv4.1 for the mirrors): NFSv3 has no OPEN, so a client that holds a file's attributes
   * (the fleet's timers, `nocto`) re-opens and re-reads it without asking the node, and the node reads it without
   * asking the origin (docs/benchmarks.md, item 9). An NFSv3 file handle holds at most 64 bytes and a re-export's is
   * the origin's plus about 22, so each node checks before it serves, with an NFSv3 mount of its own export, that the
   * origin's handles fit, and does not serve (one FATAL line, the node's FAILURE signal) if they do not. Clients mount
   * with `nolock` (the export is read-only) and fixed ports, NFS on 2049 and mountd on 20048 (`CacheFleet.MOUNTD_PORT`),
   * so the security groups open those two and nothing needs rpcbind. Route 53 fan-out only.
   */
  NFS_V3 = 'NFS_V3',
  /**
   * NFSv4.1. To an NFS server origin: `mount -t nfs4 -o nfsvers=4.1`, nfsd's port alone.
   *
   * For clients of a fleet (the default): every open of a file a client re-opens reaches the node as an OPEN, and
   * through the re-export the origin: the node spares the origin the reads, not the opens (docs/benchmarks.md, item 9).
   */
  NFS_V4_1 = 'NFS_V4_1',
  /**
   * NFSv4.2, to an NFS server origin only (`mount -t nfs4 -o nfsvers=4.2`, nfsd's port alone). The nodes serve NFSv3
   * and NFSv4.1 to clients, so a fleet's `clientNfsVersion` cannot be NFSv4.2.
   */
  NFS_V4_2 = 'NFS_V4_2',
}
