import { Annotations, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct, IConstruct } from 'constructs';
import { checkDiskCache, DiskCache } from '../fscache/disk-cache';
import { checkCacheDevicesFindable, instanceTypeFacts } from '../instance/instance-types';
import { MountHelper } from '../nfs/mount';
import { describeValue, inUnitOf, knownAtSynth, propError } from '../private/errors';
import { checkNotSystemDirectory, DIR_RE, DOT_SEGMENT_RE, nesting, nestingInWords } from '../private/paths';
import { MountSource } from './mount-source';
import { CULL_LIMITS_DEFAULTS, FS_CACHE_CLIENT_DEFAULTS, FsCacheClientLaunchTemplateProps, FsCacheClientOptions } from './options';

/**
 * Checks client options: throws `Invalid <prop>` for contradictions, warns for risky choices. Returns the disk cache,
 * `DiskCache.instanceStore()` when not given.
 */
export function validateClientOptions(scope: Construct, o: FsCacheClientOptions, instanceType: ec2.InstanceType, viaFleet: boolean): DiskCache {
  const diskCache = checkClientDiskCache(scope, o, instanceType);
  checkClientPaths(scope, o);
  checkCullLimits(scope, o);
  checkMountOptions(scope, o);
  checkMountOfSource(scope, o, viaFleet);
  return diskCache;
}

/** The disk cache, given or by default, checked against the instance type: its instance store, when it is the cache's. */
function checkClientDiskCache(scope: Construct, o: FsCacheClientOptions, instanceType: ec2.InstanceType): DiskCache {
  const diskCache = checkDiskCache(scope, 'diskCache', o.diskCache, FS_CACHE_CLIENT_DEFAULTS.diskCache);
  const facts = instanceTypeFacts(instanceType);
  checkCacheDevicesFindable(scope, instanceType, facts, diskCache._ebs);
  if (!diskCache._ebs) {
    if (facts.instanceStore === false) {
      throw propError(scope, 'instanceType', `${instanceType} has no instance store to hold the cache; choose a type with ` +
        'NVMe instance store (for example m6id, c6gd, i4i) or set diskCache: DiskCache.ebs().');
    }
    if (facts.instanceStore === undefined) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:unknownInstanceStore',
        `instanceType: whether ${describeValue(instanceType, scope, false)} has NVMe instance store is not known here` +
        `${facts.parsed ? '' : ' (the name does not read as family, generation and size, e.g. m6id.xlarge)'}; if it ` +
        'has none, the bootstrap fails. Set diskCache: DiskCache.ebs() for Nitro types without it.');
    }
  }
  return diskCache;
}

/** `mountTimeout`, and the cache directory, mount point and cache tag: each well formed, the two directories apart. */
function checkClientPaths(scope: Construct, o: FsCacheClientOptions): void {
  if (o.mountTimeout) inUnitOf(scope, 'mountTimeout', () => o.mountTimeout!.toSeconds());
  knownAtSynth(scope, 'cacheDirectory', o.cacheDirectory, 'it is compared with mountPoint');
  knownAtSynth(scope, 'mountPoint', o.mountPoint, 'it is compared with cacheDirectory');
  knownAtSynth(scope, 'cacheTag', o.cacheTag);
  if (o.cacheDirectory !== undefined && (!DIR_RE.test(o.cacheDirectory) || DOT_SEGMENT_RE.test(o.cacheDirectory))) {
    throw propError(scope, 'cacheDirectory', `must be an absolute path other than /, got '${o.cacheDirectory}'.`);
  }
  if (o.mountPoint !== undefined && (!DIR_RE.test(o.mountPoint) || DOT_SEGMENT_RE.test(o.mountPoint))) {
    throw propError(scope, 'mountPoint', `must be an absolute path other than /, got '${o.mountPoint}'.`);
  }
  checkNotSystemDirectory(scope, 'cacheDirectory', o.cacheDirectory, 'the cache file system mounted there');
  checkNotSystemDirectory(scope, 'mountPoint', o.mountPoint, 'the mount of the file system');
  const mountPoint = o.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint;
  const cacheDir = o.cacheDirectory ?? FS_CACHE_CLIENT_DEFAULTS.cacheDirectory;
  const how = nesting(mountPoint, cacheDir);
  if (how === 'same') throw propError(scope, 'mountPoint', 'must differ from cacheDirectory.');
  if (how) {
    throw propError(scope, 'mountPoint', `${nestingInWords(mountPoint, how, 'cacheDirectory', cacheDir)}: the file system would be ` +
      `mounted ${how === 'inside' ? 'inside the cache file system, where cachefilesd culls' : 'over the cache file system'}. ` +
      'Choose a mountPoint and a cacheDirectory apart, e.g. \'/mnt/efs\' and \'/var/cache/fscache\'.');
  }
  if (o.cacheTag !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(o.cacheTag)) {
    throw propError(scope, 'cacheTag', `must be 1-32 letters, digits, _ or -, got '${o.cacheTag}'.`);
  }
}

/** cachefilesd's culling limits: whole percentages, `stop < cull < run` for blocks and for files. */
function checkCullLimits(scope: Construct, o: FsCacheClientOptions): void {
  const c = o.cullLimits ?? {};
  for (const kind of ['blocks', 'files'] as const) {
    const run = c[`${kind}Run`] ?? CULL_LIMITS_DEFAULTS[`${kind}Run`];
    const cull = c[`${kind}Cull`] ?? CULL_LIMITS_DEFAULTS[`${kind}Cull`];
    const stop = c[`${kind}Stop`] ?? CULL_LIMITS_DEFAULTS[`${kind}Stop`];
    for (const [name, v] of [[`${kind}Run`, run], [`${kind}Cull`, cull], [`${kind}Stop`, stop]] as const) {
      knownAtSynth(scope, `cullLimits.${name}`, v, 'the limits are compared with each other');
      if (!Number.isInteger(v) || v < 0 || v >= 100) throw propError(scope, `cullLimits.${name}`, `must be a whole percentage from 0 to 99, got ${v}.`);
    }
    if (!(stop < cull && cull < run)) {
      throw propError(scope, `cullLimits.${kind}Cull`, `needs 0 <= ${kind}Stop < ${kind}Cull < ${kind}Run < 100, got stop ${stop}, cull ${cull}, run ${run}.`);
    }
  }
}

/** `mountOptions`, when given: single options that include fsc, and a warning without hard. */
function checkMountOptions(scope: Construct, o: FsCacheClientOptions): void {
  if (o.mountOptions) {
    for (const opt of o.mountOptions) {
      knownAtSynth(scope, 'mountOptions', opt, 'the options are checked for fsc, hard and tls');
      if (!/^[A-Za-z0-9=._:/-]+$/.test(opt)) throw propError(scope, 'mountOptions', `'${opt}' is not a mount option (no spaces or commas inside one).`);
    }
    if (!o.mountOptions.includes('fsc')) throw propError(scope, 'mountOptions', 'must include fsc, which is what turns FS-Cache on.');
    if (!o.mountOptions.includes('hard')) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:softMount',
        'mountOptions: without hard, a slow or failed server returns I/O errors to applications, which can ' +
        'corrupt data they write. Keep hard unless the workload handles errors.');
    }
  }
}

/** The mount helper, `readOnly` and `tlsPort` against what is mounted: EFS with or without amazon-efs-utils, or a fleet. */
function checkMountOfSource(scope: Construct, o: FsCacheClientOptions, viaFleet: boolean): void {
  if (viaFleet && o.mountHelper === MountHelper.EFS_UTILS) {
    throw propError(scope, 'mountHelper', 'a cache fleet is mounted over plain NFS (NFSv4.1, or NFSv3 for an NFSv3 fleet); amazon-efs-utils only mounts EFS.');
  }
  if (viaFleet && o.readOnly === false) {
    throw propError(scope, 'readOnly', 'a cache fleet exports read-only; write to EFS directly.');
  }
  if (viaFleet && o.tlsPort !== undefined) throw propError(scope, 'tlsPort', 'applies only when mounting EFS with amazon-efs-utils.');
  if (o.mountHelper === MountHelper.NFS && o.tlsPort !== undefined) throw propError(scope, 'tlsPort', 'applies only with mountHelper: MountHelper.EFS_UTILS.');
  if (o.tlsPort !== undefined && !Token.isUnresolved(o.tlsPort) && (!Number.isInteger(o.tlsPort) || o.tlsPort < 1024 || o.tlsPort > 65535)) {
    throw propError(scope, 'tlsPort', `must be a port from 1024 to 65535, got ${o.tlsPort}.`);
  }
}

/**
 * The source of a template, checked: `Invalid source: is required` when it is missing (from JavaScript, which has no
 * types: a caller giving the removed `fileSystem` or `cacheFleet` instead). Its mirrors are checked in
 * `clientMirrorParameters`.
 */
export function checkSource(scope: IConstruct, props: FsCacheClientLaunchTemplateProps): MountSource {
  const source = props.source;
  if (source === undefined || source === null) {
    throw propError(scope, 'source', 'is required: MountSource.fileSystem(fileSystem) mounts EFS directly, ' +
      'MountSource.cacheFleet(fleet) mounts the cache tier.');
  }
  return source;
}
