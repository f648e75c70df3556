/** The parameters of assets/lib/fscache.sh (a disk cache: RAID 0, ext4, cachefilesd), shared by clients and nodes. */

/** cachefilesd's culling limits, percent of the cache file system's blocks and files. */
export interface CullPercents {
  readonly blocksRun: number;
  readonly blocksCull: number;
  readonly blocksStop: number;
  readonly filesRun: number;
  readonly filesCull: number;
  readonly filesStop: number;
}

/** cachefilesd's own defaults. */
export const DEFAULT_CULL: CullPercents = { blocksRun: 10, blocksCull: 7, blocksStop: 3, filesRun: 10, filesCull: 7, filesStop: 3 };

/** The model string of EC2's NVMe instance store devices (`/sys/block/<dev>/device/model`). */
export const INSTANCE_STORE_MODEL = 'Amazon EC2 NVMe Instance Storage';

export interface DiskCache {
  readonly dir: string;
  /** ext4 label of the cache file system (1-16 characters). */
  readonly label: string;
  /** cachefilesd's tag, as /proc/fs/fscache/caches lists it. */
  readonly tag: string;
  readonly deviceModel: string;
  readonly initializeDevices: boolean;
  readonly cull: CullPercents;
}

export function diskCacheParameters(c: DiskCache): Record<string, string> {
  return {
    EFSC_CACHE_DIR: c.dir,
    EFSC_CACHE_LABEL: c.label,
    EFSC_CACHE_TAG: c.tag,
    EFSC_DEVICE_MODEL: c.deviceModel,
    EFSC_INITIALIZE_DEVICES: String(c.initializeDevices),
    EFSC_CULL_BRUN: String(c.cull.blocksRun),
    EFSC_CULL_BCULL: String(c.cull.blocksCull),
    EFSC_CULL_BSTOP: String(c.cull.blocksStop),
    EFSC_CULL_FRUN: String(c.cull.filesRun),
    EFSC_CULL_FCULL: String(c.cull.filesCull),
    EFSC_CULL_FSTOP: String(c.cull.filesStop),
  };
}
