import { SizeRoundingBehavior } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { describeValue, knownAtSynth, propError, wholeSeconds } from '../private/errors';
import { DOT_SEGMENT_RE, S3_PREFIX_RE } from '../private/paths';
import { Mirror, MirroringOptions, MirrorKind, MirrorOptions, MIRRORING_DEFAULTS, MirrorStorage, pathMirrors, s3Mirrors } from './mirror';
import { isChangeMarker, isMirrorPath, mirrorExportPath } from './mirror-paths';

/** Throws `Invalid <prop>` for mirror options that cannot work (`diskCache`: the fleet's `nodeDiskCache`, resolved). */
export function validateMirrorOptions(scope: IConstruct, o: MirrorOptions, exportPath: string, diskCache: boolean): void {
  checkMirrorsMade(scope, o);
  checkPathMirrors(scope, o, exportPath);
  validateS3Mirrors(scope, o, exportPath);
  checkMirroringNeedsMirrors(scope, o);
  checkChangeMarker(scope, o.mirroring ?? {});
  checkMirroringValues(scope, o.mirroring ?? {}, diskCache);
}

/** Each of `mirrors` made by `Mirror.path` or `Mirror.s3` (from JavaScript, anything may come). */
function checkMirrorsMade(scope: IConstruct, o: MirrorOptions): void {
  (o.mirrors ?? []).forEach((given, i) => {
    if (typeof given !== 'object' || given === null || !Object.values(MirrorKind).includes((given as Mirror)._kind)) {
      throw propError(scope, 'mirrors', `mirrors[${i}] must be made by Mirror.path(path) or Mirror.s3(bucket, prefix), got ` +
        `${describeValue(given, scope)}.`);
    }
  });
}

/** The path mirrors: literal absolute paths under the export, none inside another, none twice. */
function checkPathMirrors(scope: IConstruct, o: MirrorOptions, exportPath: string): void {
  const paths = pathMirrors(o);
  for (const p of paths) {
    knownAtSynth(scope, 'mirrors', p, 'each mirror is an export of its own');
    if (!isMirrorPath(p)) {
      throw propError(scope, 'mirrors', `'${p}' is not an absolute path (letters, digits, . _ - /, no trailing / or //, no . or .. segment).`);
    }
    if (!p.startsWith(`${exportPath}/`)) {
      throw propError(scope, 'mirrors', `'${p}' is not under the export (exportPath '${exportPath}'); mirror paths are node paths below it, e.g. '${exportPath}/app'.`);
    }
    const outer = paths.find((q) => q !== p && p.startsWith(`${q}/`));
    if (outer) throw propError(scope, 'mirrors', `'${p}' is inside '${outer}': a tree is mirrored once.`);
  }
  if (new Set(paths).size !== paths.length) throw propError(scope, 'mirrors', 'lists a path twice.');
}

/** `mirroring`'s settings need a mirror to apply to; the change marker, a path mirror. */
function checkMirroringNeedsMirrors(scope: IConstruct, o: MirrorOptions): void {
  const paths = pathMirrors(o);
  const sources = s3Mirrors(o);
  const m = o.mirroring ?? {};
  const needsPaths = (name: keyof MirroringOptions, given: unknown) => {
    if (given !== undefined && paths.length === 0 && sources.length === 0) {
      throw propError(scope, `mirroring.${name}`, 'needs mirrors: there is nothing to mirror.');
    }
  };
  needsPaths('interval', m.interval);
  needsPaths('size', m.size);
  needsPaths('storage', m.storage);
  needsPaths('syncTimeout', m.syncTimeout);
  needsPaths('syncWorkers', m.syncWorkers);
  if (m.changeMarker !== undefined && paths.length === 0 && sources.length > 0) {
    throw propError(scope, 'mirroring.changeMarker', 'needs a path mirror (Mirror.path): the marker is a file of the origin\'s mirrored trees, ' +
      'and S3 mirrors are listed at every sync.');
  }
  needsPaths('changeMarker', m.changeMarker);
  needsPaths('fullSyncInterval', m.fullSyncInterval);
}

/** `mirroring.changeMarker`, a relative path; `fullSyncInterval` only with it. */
function checkChangeMarker(scope: IConstruct, m: MirroringOptions): void {
  const marker = m.changeMarker;
  if (marker !== undefined) {
    knownAtSynth(scope, 'mirroring.changeMarker', marker);
    if (!isChangeMarker(marker)) {
      throw propError(scope, 'mirroring.changeMarker', `'${marker}' is not a path relative to each mirror's root (letters, digits, . _ - /, ` +
        'not empty, no leading or trailing /, no empty, . or .. component), e.g. \'.published\'.');
    }
  }
  if (m.fullSyncInterval !== undefined && marker === undefined) {
    throw propError(scope, 'mirroring.fullSyncInterval', 'applies only with mirroring.changeMarker: without a marker every sync walks every mirror.');
  }
}

/** `mirroring`'s durations, workers, storage and size, each within its range. */
function checkMirroringValues(scope: IConstruct, m: MirroringOptions, diskCache: boolean): void {
  const marker = m.changeMarker;
  wholeSeconds(scope, 'mirroring.fullSyncInterval', m.fullSyncInterval, 10, 7 * 86400, '10 seconds to 7 days');
  const w = m.syncWorkers;
  knownAtSynth(scope, 'mirroring.syncWorkers', w);
  if (w !== undefined && (!Number.isInteger(w) || w < 1 || w > 64)) {
    throw propError(scope, 'mirroring.syncWorkers', `must be a whole number from 1 to 64, got ${w}.`);
  }
  if (m.storage === MirrorStorage.INSTANCE_STORE && !diskCache) {
    throw propError(scope, 'mirroring.storage', 'INSTANCE_STORE needs the second cache level on the nodes (nodeDiskCache, on by ' +
      'default for types with NVMe instance store such as c7gd, c6gd, i4i): the mirrors live beside the disk cache.');
  }
  wholeSeconds(scope, 'mirroring.interval', m.interval, 10, 86400, '10 seconds to 24 hours');
  wholeSeconds(scope, 'mirroring.syncTimeout', m.syncTimeout, 10, 86400, '10 seconds to 24 hours');
  if (marker !== undefined) {
    const interval = m.interval ?? MIRRORING_DEFAULTS.interval;
    const full = m.fullSyncInterval ?? MIRRORING_DEFAULTS.fullSyncInterval;
    if (full.toSeconds() < interval.toSeconds()) {
      throw propError(scope, 'mirroring.fullSyncInterval', `must be at least mirroring.interval (${interval.toHumanString()}), got ${full.toHumanString()}.`);
    }
  }
  if (m.size) {
    knownAtSynth(scope, 'mirroring.size', m.size);
    const mib = m.size.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(mib) || mib < 1 || mib > 16 * 1024 * 1024) {
      throw propError(scope, 'mirroring.size', `must be whole MiB from 1 MiB to 16 TiB, got ${mib} MiB.`);
    }
  }
}

/**
 * Throws `Invalid mirrors` for S3 mirrors that cannot work: a prefix or name that is not a literal, a prefix
 * outside the seeder's rule or with a `.` or `..` component, a bad name, the whole bucket without a name, and export
 * paths that meet another mirror's (the same, or one inside the other: clients mount them side by side).
 */
function validateS3Mirrors(scope: IConstruct, o: MirrorOptions, exportPath: string): void {
  const exports = pathMirrors(o).map((p) => ({ at: mirrorExportPath(exportPath, p), what: `the mirror of '${p}'` }));
  (o.mirrors ?? []).forEach((given, i) => {
    if (given._kind !== MirrorKind.S3) return;
    const m = s3Mirrors({ mirrors: [given] })[0];
    const at = `mirrors[${i}]`;
    knownAtSynth(scope, 'mirrors', m.givenPrefix, `${at}.prefix: the nodes' role may read only under it`);
    if (!S3_PREFIX_RE.test(m.prefix) || DOT_SEGMENT_RE.test(m.prefix)) {
      throw propError(scope, 'mirrors', `${at}: the S3 prefix '${m.givenPrefix}' may hold only letters, digits and . _ = + - / ` +
        '(no empty, . or .. component), e.g. \'site/\'.');
    }
    // S3 keys are at most 1,024 bytes: under a longer listed prefix no object can exist, and the mirror would stay empty.
    if (m.prefix.length > 1023) {
      throw propError(scope, 'mirrors', `${at}: the S3 prefix is ${m.prefix.length} characters with its trailing /; S3 keys ` +
        'are at most 1,024, so no object can be under it. Use a prefix of at most 1,022 characters.');
    }
    if (m.givenName === undefined && m.prefix === '') {
      throw propError(scope, 'mirrors', `${at}: a mirror of the whole bucket needs a name (Mirror.s3(bucket, '', { name: 'site' })): ` +
        'it is exported at /mirror/<name>.');
    }
    knownAtSynth(scope, 'mirrors', m.name, `${at}.name: each mirror is an export of its own`);
    if (!isChangeMarker(m.name)) {
      throw propError(scope, 'mirrors', `${at}: the name '${m.name}' is not a relative path (letters, digits, . _ - /, not empty, ` +
        'no leading or trailing /, no empty, . or .. component), e.g. \'site\'.');
    }
    const mine = m.exportPath;
    for (const other of exports) {
      const how = mine === other.at ? 'is' : other.at.startsWith(`${mine}/`) ? 'contains' : mine.startsWith(`${other.at}/`) ? 'is inside' : undefined;
      if (how) {
        throw propError(scope, 'mirrors', `${at}: its export '${mine}' ${how} ${how === 'is' ? 'the export of' : 'that of'} ${other.what}, ` +
          `'${other.at}': each mirror is exported apart from the others; give it another name.`);
      }
    }
    exports.push({ at: mine, what: `mirrors[${i}]` });
  });
}
