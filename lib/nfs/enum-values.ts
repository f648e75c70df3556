import { MountHelper } from './mount-helper';
import { NfsVersion } from './nfs-version';

/*
 * The spellings the scripts and mount(8) read for the NFS enums, whose values are their member names. A template holds
 * these, never an enum's value: test/upgrade-contract.test.ts pins them. The user data of a deployed instance holds
 * them too, so a change of one would replace a seeder (which would seed again) and give launch templates a new version.
 * The seed kinds (lib/seeding/seed-kind.ts) and disk cache sources (lib/fscache/disk-cache.ts) follow the same rule.
 */

/** The `nfsvers=` of each NFS version, and the version as written after "NFSv" in messages. */
export const NFS_VERSION_NUMBER: Readonly<Record<NfsVersion, string>> = {
  [NfsVersion.NFS_V3]: '3',
  [NfsVersion.NFS_V4_1]: '4.1',
  [NfsVersion.NFS_V4_2]: '4.2',
};

/** The `mount -t` type of each mount helper of an EFS file system. */
export const MOUNT_HELPER_TYPE: Readonly<Record<MountHelper, string>> = {
  [MountHelper.EFS_UTILS]: 'efs',
  [MountHelper.NFS]: 'nfs4',
};
