import { IConstruct } from 'constructs';
import { describeValue, knownAtSynth, propError } from '../private/errors';

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

/** The model string of EBS volumes on Nitro-based instances. */
export const EBS_MODEL = 'Amazon Elastic Block Store';

/**
 * Throws `Invalid <prop>` unless `model` can be a device's model as `/sys/block/<device>/device/model` shows it,
 * and as the bootstrap compares it: printable ASCII, not ending in a space (the kernel pads with spaces, which the
 * bootstrap strips). A newline would end the bootstrap's parameter. Known at synth.
 */
export function checkDeviceModel(scope: IConstruct, prop: string, model: string | undefined): void {
  if (model === undefined) return;
  knownAtSynth(scope, prop, model);
  if (!/^[\x20-\x7e]*[\x21-\x7e]$/.test(model)) {
    throw propError(scope, prop, `must be printable ASCII without a trailing space, got ${describeValue(model, scope)}.`);
  }
}

/** A disk cache as assets/lib/fscache.sh sets it up: where it is mounted, its names, its devices and culling limits. */
export interface FsCacheDisk {
  /** Where the cache file system is mounted (cachefilesd's `dir`). */
  readonly dir: string;
  /** ext4 label of the cache file system (1-16 characters). */
  readonly label: string;
  /** cachefilesd's tag, as /proc/fs/fscache/caches lists it. */
  readonly tag: string;
  /** The model string of the cache devices (`/sys/block/<device>/device/model`). */
  readonly deviceModel: string;
  /** Whether the devices are written in full once before use. */
  readonly initializeDevices: boolean;
  /** cachefilesd's culling limits. */
  readonly cull: CullPercents;
}

/** The `EFSC_CACHE_*`, `EFSC_DEVICE_MODEL`, `EFSC_INITIALIZE_DEVICES` and `EFSC_CULL_*` parameters of a disk cache. */
export function diskCacheParameters(c: FsCacheDisk): Record<string, string> {
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
