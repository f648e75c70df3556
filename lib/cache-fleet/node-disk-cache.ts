import { IConstruct } from 'constructs';
import { DiskCacheOptions } from '../fscache/disk-cache';
import { checkDeviceModel } from '../fscache/fscache';
import { describeValue, propError } from '../private/errors';

/** Options of a cache node's disk cache (`NodeDiskCache.instanceStore`). */
export interface NodeDiskCacheOptions extends DiskCacheOptions {
  /**
   * Whether a node whose disk cache failed its boot self-test does not serve. At every boot a node reads one file of
   * the origin (64 KiB to 64 MiB), drops it from the page cache and reads it again, which must cost the origin less
   * than half the file and count an FS-Cache read; the result is logged either way.
   *
   * @default false - the result is logged, the node serves
   */
  readonly requireSelfTest?: boolean;
}

/**
 * A second cache level on each cache node: FS-Cache on a RAID 0 of the node type's NVMe instance store.
 * A working set larger than RAM is then still served from the node, not from the origin.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/cache-fleet.md
 */
export class NodeDiskCache {
  /**
   * A RAID 0 of the node's NVMe instance store. The node type must have NVMe instance store (c7gd, c6gd, m6id, i4i
   * and the like).
   */
  public static instanceStore(options: NodeDiskCacheOptions = {}): NodeDiskCache {
    return new NodeDiskCache(true, options.deviceModel, options.requireSelfTest ?? NODE_DISK_CACHE_DEFAULTS.requireSelfTest);
  }

  /** No disk cache: the nodes cache in RAM only, and leave any instance store unused. */
  public static none(): NodeDiskCache {
    return new NodeDiskCache(false, undefined, false);
  }

  /**
   * Whether the nodes keep the disk cache.
   *
   * @internal
   */
  public readonly _enabled: boolean;

  /**
   * The model string of the cache devices as given; undefined for the instance store's own.
   *
   * @internal
   */
  public readonly _deviceModel?: string;

  /**
   * Whether a node whose cache failed its boot self-test does not serve.
   *
   * @internal
   */
  public readonly _requireSelfTest: boolean;

  private constructor(enabled: boolean, deviceModel: string | undefined, requireSelfTest: boolean) {
    this._enabled = enabled;
    this._deviceModel = deviceModel;
    this._requireSelfTest = requireSelfTest;
  }
}

/**
 * The node disk cache given as `nodeDiskCache`, checked, or the default: `NodeDiskCache.instanceStore()` when the node
 * type has NVMe instance store (`nvmeInstanceStore`), else `NodeDiskCache.none()`. From JavaScript, which has no types,
 * anything else is refused, a boolean included (the message names the factory to give instead).
 */
export function resolveNodeDiskCache(scope: IConstruct, given: NodeDiskCache | undefined, nvmeInstanceStore: boolean): NodeDiskCache {
  if (given === undefined || given === null) return nvmeInstanceStore ? NodeDiskCache.instanceStore() : NodeDiskCache.none();
  if (typeof given === 'boolean') {
    throw propError(scope, 'nodeDiskCache', `is no longer a boolean in 0.2: give nodeDiskCache: ${given ? 'NodeDiskCache.instanceStore()' : 'NodeDiskCache.none()'}.`);
  }
  if (!(given instanceof NodeDiskCache)) {
    const got = typeof given === 'object' ? 'an object of another kind' : describeValue(given, scope);
    throw propError(scope, 'nodeDiskCache', `must be NodeDiskCache.instanceStore() or NodeDiskCache.none(), got ${got}.`);
  }
  if (given._deviceModel !== undefined) checkDeviceModel(scope, 'nodeDiskCache.deviceModel', given._deviceModel);
  return given;
}

/** The defaults of `NodeDiskCacheOptions` (test/defaults.test.ts). */
export const NODE_DISK_CACHE_DEFAULTS = {
  requireSelfTest: false,
} as const;
