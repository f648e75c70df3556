import { Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { MIRROR_ROOT, underMirrorRoot } from '../cache-fleet/mirror-paths';
import { describeValue, propError } from '../private/errors';
import { DIR_RE, DOT_SEGMENT_RE, nesting } from '../private/paths';
import { mirrorExportOf, mirrorMountOptions, nconnectOptions } from './fleet-mount';
import { FLEET_SOURCE_DEFAULTS, MountSource } from './mount-source';
import { FS_CACHE_CLIENT_DEFAULTS, FsCacheClientOptions } from './options';

/**
 * `EFSC_MIRROR_MOUNTS` (the mirrors' export paths, `/mirror/<path>`, space-separated; the server is the fleet's),
 * `EFSC_MIRROR_MOUNT_POINT` (each mirror is mounted there plus its path under /mirror, which the instance computes:
 * an export path may be a token) and their options: NFSv4.1, read-only, hard, no fsc (the page cache holds what a
 * delegation covers), default attribute caching, on the mirrors' own port (`NFS_MIRROR_PORT`), with the source's
 * `nconnect` when it gives one. Mount paths that
 * are known here are checked here: none may be another's directory or lie inside it (the fsc mount, the cache
 * directory, the other mirrors); the instance checks them again at boot, with the tokens resolved.
 */
export function clientMirrorParameters(scope: IConstruct, source: MountSource, o: FsCacheClientOptions): {
  parameters: Record<string, string>; mounts: { mirrors: string[]; mirrorRoot?: string };
} {
  const paths = source.mirrorPaths;
  const root = source.mirrorMountPoint ?? FLEET_SOURCE_DEFAULTS.mirrorMountPoint;
  const pathsProp = 'source.mirrorPaths';
  const rootProp = 'source.mirrorMountPoint';
  if (source.mirrorMountPoint !== undefined && paths.length === 0) throw propError(scope, rootProp, 'needs mirrorPaths: there is nothing to mount.');
  // Only a fleet has mirrors: MountSource.fileSystem takes none.
  const fleet = source.fleet;
  if (paths.length === 0 || !fleet) return { parameters: { EFSC_MIRROR_MOUNTS: '', EFSC_MIRROR_ROOT: MIRROR_ROOT }, mounts: { mirrors: [] } };
  if (!DIR_RE.test(root) || DOT_SEGMENT_RE.test(root)) throw propError(scope, rootProp, `must be an absolute path other than /, got ${describeValue(root, scope)}.`);
  const twice = paths.find((p, i) => paths.indexOf(p) !== i);
  if (twice !== undefined) throw propError(scope, pathsProp, `lists '${twice}' twice: each mirror is mounted once.`);
  const mirrors = paths.map((p) => mirrorExportOf(scope, pathsProp, fleet, p));
  // Where each mirror lands, for those whose export path is known here (the rest are checked at boot).
  const known = mirrors.flatMap((m, i) => (Token.isUnresolved(m.exportPath) ? [] : [{ path: paths[i], at: `${root}${underMirrorRoot(m.exportPath)}` }]));
  const others: [string, string][] = [['mountPoint', o.mountPoint ?? FS_CACHE_CLIENT_DEFAULTS.mountPoint], ['cacheDirectory', o.cacheDirectory ?? FS_CACHE_CLIENT_DEFAULTS.cacheDirectory]];
  for (const m of known) {
    for (const [name, dir] of others) {
      const how = nesting(m.at, dir);
      if (!how) continue;
      const where = { same: 'on the very directory of', inside: 'inside', around: 'over' }[how];
      const apart = ['/mnt/mirror', '/srv/mirror', '/opt/mirror'].find((x) => x !== root && others.every(([, d]) => !nesting(x, d)));
      throw propError(scope, rootProp, `the mirror '${m.path}' would be mounted at '${m.at}', ${where} ${name} '${dir}' ` +
        `(${name === 'mountPoint' ? 'the fsc mount of the fleet\'s export' : 'cachefilesd\'s cache'}): choose a ${rootProp} ` +
        `apart from it${apart ? `, e.g. '${apart}'` : ''}, or another ${name}.`);
    }
  }
  known.forEach((m, i) => known.slice(0, i).forEach((n) => {
    const how = nesting(m.at, n.at);
    if (how === 'same') {
      throw propError(scope, pathsProp, `'${n.path}' and '${m.path}' would both be mounted at '${m.at}': mount one of them.`);
    }
    if (how) {
      const [inner, outer] = how === 'inside' ? [m, n] : [n, m];
      throw propError(scope, pathsProp, `the mirror '${inner.path}' would be mounted at '${inner.at}', inside the mount of '${outer.path}' ` +
        `at '${outer.at}': mount one of them.`);
    }
  }));
  return {
    parameters: {
      EFSC_MIRROR_MOUNTS: mirrors.map((m) => m.exportPath).join(' '),
      EFSC_MIRROR_ROOT: MIRROR_ROOT,
      EFSC_MIRROR_MOUNT_POINT: root,
      EFSC_MIRROR_MOUNT_OPTIONS: [...mirrorMountOptions(), ...nconnectOptions(scope, 'source.nconnect', source.nconnect)].join(','),
    },
    // What warming may read: the mirrors whose mount points are known, and their root when some are not.
    mounts: { mirrors: known.map((m) => m.at), mirrorRoot: known.length < mirrors.length ? root : undefined },
  };
}
