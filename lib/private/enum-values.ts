import { MountHelper } from '../mount-helper';
import { NfsVersion } from '../nfs-version';

/*
 * The spellings the scripts and mount(8) read, for the public enums whose values are their member names (the rule of
 * every enum of this library but the metric enums, whose values are the CloudWatch names a metric's `metricName`
 * returns). A template holds these, never an enum's value: test/upgrade-contract.test.ts pins them.
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
