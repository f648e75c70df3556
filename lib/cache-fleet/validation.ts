import { Annotations, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { InstanceTypeFacts, instanceTypeFacts } from '../instance/instance-types';
import { NfsVersion } from '../nfs/nfs-version';
import { NFS_MOUNTD_PORT, NFS_PORT } from '../nfs/ports';
import { checkClientCidrs } from '../private/cidr';
import { describeValue, knownAtSynth, propError, wholeSeconds } from '../private/errors';
import { checkNotSystemDirectory, DOT_SEGMENT_RE, PATH_RE } from '../private/paths';
import { Capacity, resolveCapacity } from './capacity';
import { validateElastic } from './elastic';
import { FanOut, resolveFanOut } from './fan-out';
import { hasMirrors } from './mirror';
import { MIRROR_ROOT } from './mirror-paths';
import { checkMirrorSizeFits } from './mirror-size';
import { validateMirrorOptions } from './mirror-validation';
import { NodeDiskCache, resolveNodeDiskCache } from './node-disk-cache';
import { CACHE_FLEET_DEFAULTS, CacheFleetOptions, WarmingOptions } from './options';

/** The fleet's default node type. */
/** Where each node mounts its disk cache (`nodeDiskCache`). */
export const NODE_CACHE_DIR = '/var/cache/fscache';

/**
 * Checks fleet options; throws `Invalid <prop>` for contradictions, warns for what may be intended. Returns the nodes'
 * disk cache in force (`nodeDiskCache`, given or by default), resolved once here.
 */
export function validateCacheFleetOptions(
  scope: Construct, o: CacheFleetOptions, facts = instanceTypeFacts(o.instanceType ?? new ec2.InstanceType(CACHE_FLEET_DEFAULTS.instanceType)),
): NodeDiskCache {
  const int = (name: string, v: number | undefined, min: number, max: number) => {
    if (v === undefined || Token.isUnresolved(v)) return;
    if (!Number.isInteger(v) || v < min || v > max) throw propError(scope, name, `must be a whole number from ${min} to ${max}, got ${v}.`);
  };
  const capacity = resolveCapacity(scope, o.capacity, CACHE_FLEET_DEFAULTS.capacity);
  const tuning = o.tuning ?? {};
  const warming = o.warming;
  int('tuning.nfsdThreads', tuning.nfsdThreads, 1, 4096);
  int('tuning.sunrpcSlotTableEntries', tuning.sunrpcSlotTableEntries, 2, 65536);
  int('tuning.vfsCachePressure', tuning.vfsCachePressure, 0, 1000);
  int('warming.workers', warming?.workers, 1, 512);
  const exportPath = o.exportPath ?? CACHE_FLEET_DEFAULTS.exportPath;
  knownAtSynth(scope, 'exportPath', exportPath, 'mirror and warm paths are checked against it');
  knownAtSynth(scope, 'originPath', o.originPath, 'the fleet\'s file system id is derived from it');
  checkExportPath(scope, exportPath);
  if (o.originPath !== undefined && (!PATH_RE.test(o.originPath) || DOT_SEGMENT_RE.test(o.originPath))) {
    throw propError(scope, 'originPath', `must be an absolute path in the file system, got '${o.originPath}'.`);
  }
  checkClientNfsVersion(scope, o.clientNfsVersion);
  const fanOut = resolveFanOut(scope, o.fanOut, defaultFanOut(capacity));
  validateElastic(scope, capacity._elastic, { nlb: fanOut._networkLoadBalancer !== undefined, signalTimeout: o.signalTimeout });
  if (o.clientNfsVersion === NfsVersion.NFS_V3 && fanOut._networkLoadBalancer) {
    throw propError(scope, 'clientNfsVersion', 'NfsVersion.NFS_V3 needs fanOut: FanOut.route53(): an NFSv3 client asks ' +
      `mountd (TCP ${NFS_MOUNTD_PORT}) for the export before NFS (TCP ${NFS_PORT}), and the load balancer has no listener for mountd.` +
      (capacity._elastic ? ' An elastic fleet (Capacity.elastic()) is always behind the load balancer: give Capacity.nodes(n) for NFSv3.' : ''));
  }
  const nodeDiskCache = resolvedNodeDiskCache(scope, o, facts);
  validateDiskCache(scope, o, facts, nodeDiskCache);
  const diskCache = nodeDiskCache._enabled;
  validateMirrorOptions(scope, o, exportPath, diskCache);
  checkNodePaths(scope, exportPath, hasMirrors(o), diskCache);
  checkMirrorSizeFits(scope, o, diskCache, facts, String(o.instanceType ?? CACHE_FLEET_DEFAULTS.instanceType));
  if (warming) validateWarming(scope, warming, exportPath);
  checkTimersAndLimits(scope, o);
  checkWorkingSetSize(scope, o, facts);
  return nodeDiskCache;
}

/** The cache timers, `mountTimeout`, `clientCidrs`, `signalTimeout` and `tuning.readAhead`, each within its range. */
function checkTimersAndLimits(scope: Construct, o: CacheFleetOptions): void {
  const tuning = o.tuning ?? {};
  for (const [name, d] of [['attributeCacheTimeout', o.attributeCacheTimeout], ['directoryCacheTimeout', o.directoryCacheTimeout]] as const) {
    knownAtSynth(scope, name, d);
    if (d && (d.toSeconds() < 0 || d.toSeconds() > 3600)) throw propError(scope, name, `must be between 0 and 60 minutes, got ${d.toHumanString()}.`);
  }
  knownAtSynth(scope, 'mountTimeout', o.mountTimeout);
  if (o.mountTimeout && (o.mountTimeout.toSeconds() < 10 || o.mountTimeout.toSeconds() > 3600)) {
    throw propError(scope, 'mountTimeout', `must be between 10 seconds and 60 minutes, got ${o.mountTimeout.toHumanString()}.`);
  }
  if (o.clientCidrs && o.clientCidrs.length === 0) throw propError(scope, 'clientCidrs', 'is empty: no client could mount the export.');
  checkClientCidrs(scope, 'clientCidrs', o.clientCidrs ?? []);
  // CloudFormation waits at most 12 hours for a signal; a node installs packages, mounts, and may warm first.
  wholeSeconds(scope, 'signalTimeout', o.signalTimeout, 300, 43200, '5 minutes to 12 hours');
  if (tuning.readAhead) {
    knownAtSynth(scope, 'tuning.readAhead', tuning.readAhead);
    const kib = tuning.readAhead.toKibibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(kib) || kib < 0 || kib > 1048576) throw propError(scope, 'tuning.readAhead', `must be whole KiB from 0 to 1 GiB, got ${kib} KiB.`);
  }
}

/** `workingSetSize`, more than nothing, and a warning when it does not fit in the nodes' memory. */
function checkWorkingSetSize(scope: Construct, o: CacheFleetOptions, facts: InstanceTypeFacts): void {
  knownAtSynth(scope, 'workingSetSize', o.workingSetSize, 'it is compared with the nodes\' memory');
  if (o.workingSetSize && o.workingSetSize.toBytes({ rounding: SizeRoundingBehavior.NONE }) <= 0) {
    throw propError(scope, 'workingSetSize', 'must be more than 0 bytes.');
  }
  if (o.workingSetSize && facts.memoryGiB !== undefined) {
    const ws = o.workingSetSize.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
    if (ws > facts.memoryGiB) {
      Annotations.of(scope).addWarningV2('cdk-efs-cache:workingSetExceedsMemory',
        `workingSetSize: ${ws} GiB does not fit in the page cache of ${o.instanceType ?? CACHE_FLEET_DEFAULTS.instanceType} ` +
        `(${facts.memoryGiB} GiB): reads beyond it go to EFS. Choose a larger instanceType or more memory-heavy family.`);
    }
  }
}

/** The fan-out of a fleet that gives none: the load balancer for an elastic fleet, which it adds and drains. */
export function defaultFanOut(capacity: Capacity): FanOut {
  return capacity._elastic ? CACHE_FLEET_DEFAULTS.elasticFanOut : CACHE_FLEET_DEFAULTS.fanOut;
}

/** Throws `Invalid warming.<option>` for warming that cannot work: no path, a path outside the export, a short interval. */
function validateWarming(scope: Construct, w: WarmingOptions, exportPath: string): void {
  if (!w.paths?.length) throw propError(scope, 'warming.paths', 'is empty: there is nothing to warm. Leave warming out for no warming.');
  for (const p of w.paths) {
    knownAtSynth(scope, 'warming.paths', p, 'each is checked against exportPath');
    if (!PATH_RE.test(p) || DOT_SEGMENT_RE.test(p)) throw propError(scope, 'warming.paths', `'${p}' is not an absolute path.`);
    if (p !== exportPath && !p.startsWith(`${exportPath}/`)) {
      throw propError(scope, 'warming.paths', `'${p}' is outside the export (exportPath '${exportPath}'); warm paths are node paths under it, e.g. '${exportPath}/data'.`);
    }
  }
  if (w.rewarmInterval) {
    knownAtSynth(scope, 'warming.rewarmInterval', w.rewarmInterval);
    const minutes = w.rewarmInterval.toMinutes({ integral: false });
    if (!Number.isInteger(minutes) || minutes < 5) {
      throw propError(scope, 'warming.rewarmInterval', `must be whole minutes, at least 5, got ${w.rewarmInterval.toHumanString()}.`);
    }
  }
}

/**
 * The nodes' own directories that the origin mount at `exportPath` must stay clear of: the mirrors' root (/mirror,
 * with `mirrors`) and the disk cache (/var/cache/fscache, with `nodeDiskCache`), which are mounted there too.
 */
function checkNodePaths(scope: Construct, exportPath: string, mirrors: boolean, diskCache: boolean): void {
  const own = [
    ...(mirrors ? [{ dir: MIRROR_ROOT, what: 'the root of the mirrors (mirrors)' }] : []),
    ...(diskCache ? [{ dir: NODE_CACHE_DIR, what: 'the disk cache (nodeDiskCache)' }] : []),
  ];
  for (const { dir, what } of own) {
    if (exportPath === dir || exportPath.startsWith(`${dir}/`) || dir.startsWith(`${exportPath}/`)) {
      throw propError(scope, 'exportPath', `'${exportPath}' ${exportPath === dir ? 'is' : exportPath.startsWith(dir) ? 'is inside' : 'contains'} ` +
        `${dir}, where each node mounts ${what}: the two mounts would cover each other. Choose another path, e.g. '/efs'.`);
    }
  }
}

/**
 * Throws `Invalid exportPath` unless `exportPath` is an absolute path other than / (letters, digits, . _ - /, without
 * a trailing / or a . or .. segment) and not a system directory: the rule of a fleet's own `exportPath`, and of an
 * imported fleet's.
 */
export function checkExportPath(scope: Construct, exportPath: string): void {
  if (!PATH_RE.test(exportPath) || exportPath === '/' || exportPath.endsWith('/') || DOT_SEGMENT_RE.test(exportPath)) {
    throw propError(scope, 'exportPath', `must be an absolute path other than / (letters, digits, . _ - /), got '${exportPath}'.`);
  }
  checkNotSystemDirectory(scope, 'exportPath', exportPath, 'the nodes\' mount of the origin');
}

/**
 * Throws `Invalid clientNfsVersion` unless it is NFSv4.1 or NFSv3, the versions the nodes serve to clients (NFSv4.2 is
 * a version the nodes may mount an NFS server origin with, not one they serve): the rule of a fleet's own
 * `clientNfsVersion`, and of an imported fleet's.
 */
export function checkClientNfsVersion(scope: Construct, v: NfsVersion | undefined): void {
  if (v === undefined || v === NfsVersion.NFS_V4_1 || v === NfsVersion.NFS_V3) return;
  const member = Object.entries(NfsVersion).find(([, value]) => value === v)?.[0];
  throw propError(scope, 'clientNfsVersion', 'must be NfsVersion.NFS_V4_1 or NfsVersion.NFS_V3: the nodes serve NFSv3 and NFSv4.1 ' +
    `to clients, got ${member ? `NfsVersion.${member}` : `'${v}'`}${member ? ' (NFSv4.2 is for an NFS server origin, ' +
    'CacheOrigin.nfsServer({ nfsVersion }), which the nodes re-export in the client version)' : ''}.`);
}

/** The nodes' disk cache (`nodeDiskCache`), given or by default: on for node types with NVMe instance store. */
export function resolvedNodeDiskCache(scope: Construct, o: CacheFleetOptions, facts: ReturnType<typeof instanceTypeFacts>): NodeDiskCache {
  return resolveNodeDiskCache(scope, o.nodeDiskCache, facts.instanceStore === true && facts.nvmeInstanceStore === true);
}

/** The nodes' second cache level (`nodeDiskCache`) needs NVMe instance store the bootstrap can find by its model. */
function validateDiskCache(scope: Construct, o: CacheFleetOptions, facts: ReturnType<typeof instanceTypeFacts>, cache: NodeDiskCache): void {
  const type = describeValue(o.instanceType ?? CACHE_FLEET_DEFAULTS.instanceType, scope, false);
  if (!cache._enabled) return;
  if (facts.instanceStore === false || (facts.instanceStore === true && facts.nvmeInstanceStore === false)) {
    throw propError(scope, 'nodeDiskCache', `${type} has no NVMe instance store to hold the disk cache; choose a node type ` +
      'with it (for example c7gd, c6gd, m6id, i4i), or give nodeDiskCache: NodeDiskCache.none().');
  }
  if (facts.instanceStore === undefined && cache._deviceModel === undefined) {
    Annotations.of(scope).addWarningV2('cdk-efs-cache:unknownNodeInstanceStore',
      `nodeDiskCache: whether ${type} has NVMe instance store is not known here; if it has none, every node fails ` +
      'its bootstrap and does not serve.');
  }
}
