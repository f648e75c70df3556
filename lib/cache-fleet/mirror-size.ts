import { Annotations, SizeRoundingBehavior } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { InstanceTypeFacts } from '../instance/instance-types';
import { propError } from '../private/errors';
import { hasMirrors, MirrorOptions, MIRRORING_DEFAULTS, mirrorStorageOf, MirrorStorage } from './mirror';

/**
 * The part of the instance store a node's file system loses to ext4 (inode tables: 1/64 of it; the journal, up to
 * 1 GiB; the RAID's metadata), at most: the boot check compares `mirroring.size` with half of the file system, which is
 * this much smaller than the disks AWS lists.
 */
const EXT4_OVERHEAD = 0.03;

/**
 * Checks `mirroring.size` (or its default) against the node type, where its name tells the memory or instance store
 * (`facts`): in memory (a tmpfs), refuses a size not below the type's RAM, which leaves nothing for the page cache
 * that is the cache (and the tmpfs, filled, would drive the node out of memory), and warns above half of it. On the
 * instance store, refuses what each node refuses at boot (assets/lib/mirror-storage.sh: more than half of the disk cache's
 * file system), where it is certain: more than half of the disks; and warns within `EXT4_OVERHEAD` of that.
 */
export function checkMirrorSizeFits(scope: IConstruct, o: MirrorOptions, diskCache: boolean, facts: InstanceTypeFacts, type: string): void {
  if (!hasMirrors(o)) return;
  const size = o.mirroring?.size ?? MIRRORING_DEFAULTS.size;
  const bytes = size.toBytes({ rounding: SizeRoundingBehavior.NONE });
  const gib = bytes / 2 ** 30;
  const shown = `${o.mirroring?.size ? '' : 'the default '}${+gib.toFixed(3)} GiB`;
  if (mirrorStorageOf(o, diskCache) === MirrorStorage.MEMORY) {
    if (facts.memoryGiB === undefined) return;
    if (gib >= facts.memoryGiB) {
      throw propError(scope, 'mirroring.size', `${shown} in memory (MirrorStorage.MEMORY) is not less than the ${facts.memoryGiB} GiB ` +
        `of RAM of ${type}: a tmpfs that size leaves nothing for the page cache, which is the cache, and filled it drives ` +
        `the node out of memory. Choose at most ${facts.memoryGiB / 2} GiB (half the RAM), a type with more memory, or ` +
        'MirrorStorage.INSTANCE_STORE on a type with NVMe instance store.');
    }
    if (gib > facts.memoryGiB / 2) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:mirrorSizeOverHalfMemory', `mirroring.size: ${shown} in memory is more than ` +
        `half of the ${facts.memoryGiB} GiB of RAM of ${type}: filled, the mirrors leave less than half of it to the page ` +
        'cache that serves everything else. Choose a type with more memory, or MirrorStorage.INSTANCE_STORE on a type ' +
        'with NVMe instance store.');
    }
    return;
  }
  if (facts.instanceStoreGB === undefined) return;
  const store = facts.instanceStoreGB * 1e9;
  const most = Math.floor((store * (1 - EXT4_OVERHEAD)) / 2 / 2 ** 30);
  if (2 * bytes > store) {
    throw propError(scope, 'mirroring.size', `${shown} on the instance store (MirrorStorage.INSTANCE_STORE) is more than half of ` +
      `the ${facts.instanceStoreGB} GB of ${type}: every node would refuse to serve at boot (the mirrors may take at most ` +
      `half of the disk cache's file system; the rest stays the disk cache). Choose at most ${most} GiB, or a type with ` +
      'more instance store.');
  }
  if (2 * bytes > store * (1 - EXT4_OVERHEAD)) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:mirrorSizeNearHalfInstanceStore', `mirroring.size: ${shown} is within ` +
      `${EXT4_OVERHEAD * 100}% of half of the ${facts.instanceStoreGB} GB instance store of ${type}, and the disk cache's ` +
      'file system is up to that much smaller than the disks (ext4\'s inode tables and journal): a node whose mirrors ' +
      `take more than half of it refuses to serve at boot. Choose at most ${most} GiB.`);
  }
}
