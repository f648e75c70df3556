import { MountHelper } from '../mount-helper';
import { NfsVersion } from '../nfs-version';

/*
 * The spellings the scripts and mount(8) read, for the public enums whose values are their member names (the rule of
 * every enum of this library but the metric enums, whose values are the CloudWatch names a metric's `metricName`
 * returns) and for the kinds of the union classes (`SeedSource`, `DiskCache`). A template holds these, never an
 * enum's value: test/upgrade-contract.test.ts pins them. The user data of a deployed instance holds them too, so a
 * change of one would replace a seeder (which would seed again) and give launch templates a new version.
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

/** The kinds of seed source, one for each factory of `SeedSource`. */
export enum SeedKind {
  S3 = 'S3',
  ASSET = 'ASSET',
  INSTANCE_DIRECTORY = 'INSTANCE_DIRECTORY',
}

/** How the seeding script names each kind of seed source (`EFSC_SOURCE_KIND`). */
export const SEED_SOURCE_KIND: Readonly<Record<SeedKind, string>> = {
  [SeedKind.S3]: 's3',
  [SeedKind.ASSET]: 'asset',
  [SeedKind.INSTANCE_DIRECTORY]: 'local',
};

/** How the client's bootstrap names where a disk cache lives (`EFSC_CACHE_SOURCE`), by the `DiskCache` factory. */
export const DISK_CACHE_SOURCE: Readonly<Record<'instanceStore' | 'ebs', string>> = {
  instanceStore: 'instance-store',
  ebs: 'ebs',
};
