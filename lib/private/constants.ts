/** NFS over TCP: the only port the tiers open to each other. */
export const NFS_PORT = 2049;

/** EC2's limit on raw (pre-base64) user data. */
export const USER_DATA_LIMIT_BYTES = 16 * 1024;
