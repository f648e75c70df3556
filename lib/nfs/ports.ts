/**
 * NFS over TCP: the only port the tiers open to each other (and, for an NFSv3 fleet, NFS_MOUNTD_PORT; for a fleet
 * with mirrors, NFS_MIRROR_PORT).
 */
export const NFS_PORT = 2049;

/**
 * rpc.mountd of a fleet that serves NFSv3 (`clientNfsVersion: NfsVersion.NFS_V3`): a fixed port (IANA's for mountd), which clients
 * name in `mountport=` so that neither they nor the security groups need rpcbind (port 111).
 */
export const NFS_MOUNTD_PORT = 20048;

/**
 * The mirrors' own nfsd (`mirrors`): each node serves its mirrors from a second nfsd, in a network namespace of
 * the node, reached through a DNAT rule from this port of the node's own addresses, so that readers of the re-export
 * that hang on an unreachable origin (every thread of the node's nfsd waiting on EFS) leave the mirrors answering.
 * The re-export stays on NFS_PORT. Clients name it in `port=` when they mount a mirror.
 */
export const NFS_MIRROR_PORT = 2050;
