/** NFS over TCP: the only port the tiers open to each other (and, for an NFSv3 fleet, NFS_MOUNTD_PORT). */
export const NFS_PORT = 2049;

/**
 * rpc.mountd of a fleet that serves NFSv3 (`ClientProtocol.NFS_V3`): a fixed port (IANA's for mountd), which clients
 * name in `mountport=` so that neither they nor the security groups need rpcbind (port 111).
 */
export const NFS_MOUNTD_PORT = 20048;

/** EC2's limit on raw (pre-base64) user data. */
export const USER_DATA_LIMIT_BYTES = 16 * 1024;
