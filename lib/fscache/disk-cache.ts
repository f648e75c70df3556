import { Size } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { describeValue, propError, wholeGib } from '../private/errors';
import { checkDeviceModel, EBS_MODEL, INSTANCE_STORE_MODEL } from './fscache';

/**
 * How the client's bootstrap names where a disk cache lives (`EFSC_CACHE_SOURCE`), by the `DiskCache` factory. A template
 * holds these spellings (test/upgrade-contract.test.ts pins them): a change would give launch templates a new version.
 */
const DISK_CACHE_SOURCE: Readonly<Record<'instanceStore' | 'ebs', string>> = {
  instanceStore: 'instance-store',
  ebs: 'ebs',
};

/** Options of every disk cache, whichever disks hold it. */
export interface DiskCacheOptions {
  /**
   * Model string that identifies the cache devices, as `/sys/block/<device>/device/model` shows it (device names are
   * not stable across boots). Printable ASCII without a trailing space, known at synth.
   *
   * @default - 'Amazon EC2 NVMe Instance Storage' on the instance store, 'Amazon Elastic Block Store' for `DiskCache.ebs()`
   */
  readonly deviceModel?: string;
}

/** Options of a disk cache on the instance store (`DiskCache.instanceStore`). */
export interface InstanceStoreDiskCacheOptions extends DiskCacheOptions {
  /**
   * Write every cache device in full once before use (`dd`), for older instance types that need it for full speed.
   *
   * @default false
   */
  readonly initializeDevices?: boolean;
}

/** Options of a disk cache on an EBS volume (`DiskCache.ebs`). */
export interface EbsDiskCacheOptions extends DiskCacheOptions {
  /**
   * Size of the EBS cache volume (encrypted gp3), whole GiB from 1 to 16384.
   *
   * @default Size.gibibytes(100)
   */
  readonly volumeSize?: Size;
}

/**
 * Where FS-Cache clients keep their disk cache: a RAID 0 of the NVMe instance store, or an added EBS volume.
 * One value, so that the options of one kind of disk cannot be given with the other.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md
 */
export class DiskCache {
  /**
   * A RAID 0 of the instance's NVMe instance store: erased by a stop and start, and built again at boot. The instance
   * type must have NVMe instance store (m6id, c6gd, i4i...).
   */
  public static instanceStore(options: InstanceStoreDiskCacheOptions = {}): DiskCache {
    const initializeDevices = options.initializeDevices ?? INSTANCE_STORE_DISK_CACHE_DEFAULTS.initializeDevices;
    return new DiskCache(false, options.deviceModel ?? INSTANCE_STORE_MODEL, initializeDevices, undefined);
  }

  /**
   * An encrypted gp3 EBS volume added to the launch template, for instance types without instance store. The
   * instance type must be Nitro-based, so that the volume shows as an NVMe device.
   */
  public static ebs(options: EbsDiskCacheOptions = {}): DiskCache {
    return new DiskCache(true, options.deviceModel ?? EBS_MODEL, false, options.volumeSize ?? EBS_DISK_CACHE_DEFAULTS.volumeSize);
  }

  /**
   * Whether the cache is on an EBS volume (else on the instance store).
   *
   * @internal
   */
  public readonly _ebs: boolean;

  /**
   * The model string of the cache devices, default filled in.
   *
   * @internal
   */
  public readonly _deviceModel: string;

  /**
   * Whether the devices are written in full once before use.
   *
   * @internal
   */
  public readonly _initializeDevices: boolean;

  /**
   * The size of the EBS cache volume, default filled in; undefined on the instance store.
   *
   * @internal
   */
  public readonly _volumeSize?: Size;

  private constructor(ebs: boolean, deviceModel: string, initializeDevices: boolean, volumeSize: Size | undefined) {
    this._ebs = ebs;
    this._deviceModel = deviceModel;
    this._initializeDevices = initializeDevices;
    this._volumeSize = volumeSize;
  }

  /**
   * The bootstrap's name of where the cache lives (`EFSC_CACHE_SOURCE`).
   *
   * @internal
   */
  public get _source(): string {
    return DISK_CACHE_SOURCE[this._ebs ? 'ebs' : 'instanceStore'];
  }

  /**
   * Throws `Invalid <prop>.deviceModel:` or `Invalid <prop>.volumeSize:` naming `scope`, the construct that was given
   * this disk cache as `prop`.
   *
   * @internal
   */
  public _validate(scope: IConstruct, prop: string): void {
    checkDeviceModel(scope, `${prop}.deviceModel`, this._deviceModel);
    wholeGib(scope, `${prop}.volumeSize`, this._volumeSize, 1, 16384);
  }
}

/**
 * The disk cache given as `prop` (`byDefault` when not given), checked: from JavaScript, which has no
 * types, anything else is refused (`Invalid diskCache: must be DiskCache.instanceStore() or DiskCache.ebs() ...`).
 */
export function checkDiskCache(scope: IConstruct, prop: string, diskCache: DiskCache | undefined, byDefault: DiskCache): DiskCache {
  if (diskCache === undefined || diskCache === null) return byDefault;
  if (typeof (diskCache as Partial<DiskCache>)._validate !== 'function') {
    const got = typeof diskCache === 'object' ? 'an object of another kind' : describeValue(diskCache, scope);
    throw propError(scope, prop, `must be DiskCache.instanceStore() or DiskCache.ebs({ volumeSize }), got ${got}.`);
  }
  diskCache._validate(scope, prop);
  return diskCache;
}

/** The defaults of `InstanceStoreDiskCacheOptions` (test/defaults.test.ts). */
export const INSTANCE_STORE_DISK_CACHE_DEFAULTS = {
  initializeDevices: false,
} as const;

/** The defaults of `EbsDiskCacheOptions` (test/defaults.test.ts). */
export const EBS_DISK_CACHE_DEFAULTS = {
  volumeSize: Size.gibibytes(100),
} as const;
