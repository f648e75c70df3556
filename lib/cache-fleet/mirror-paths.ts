import * as crypto from 'crypto';
import { DOT_SEGMENT_RE, PATH_RE } from '../private/paths';

/**
 * The root under which every node exports its mirrors (`MIRROR_ROOT/<path under exportPath>`). The nodes' and the
 * clients' scripts take it as `EFSC_MIRROR_ROOT`.
 */
export const MIRROR_ROOT = '/mirror';

/** The network namespace of the mirrors' own nfsd on a node, which the node's script takes as `EFSC_MIRROR_NAMESPACE`. */
export const MIRROR_NAMESPACE = 'efs-cache-mirror';

/** The path clients mount a mirror from: `/mirror/<path under exportPath>`, as `mirrorExportPath` makes it. */
export const MIRROR_EXPORT_RE = new RegExp(`^${MIRROR_ROOT}/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$`);

/** The fsid of a mirror, as `mirrorFsid` makes it and the nodes' check (assets/lib/mirror.sh) takes it: a UUID, lowercase. */
export const MIRROR_FSID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether `p` may be a mirror's node path: absolute (letters, digits, . _ - /), no trailing / or //, no . or ..
 * segment (`/efs//app` would be a second name of `/efs/app`, mirrored twice into one directory).
 */
export function isMirrorPath(p: string): boolean {
  return PATH_RE.test(p) && !p.endsWith('/') && !p.includes('//') && !DOT_SEGMENT_RE.test(p);
}

/** Whether `p` may be the path clients mount a mirror from: `/mirror/<path>`, no trailing / or //, no . or .. segment. */
export function isMirrorExportPath(p: string): boolean {
  return MIRROR_EXPORT_RE.test(p) && !p.includes('//') && !DOT_SEGMENT_RE.test(p);
}

/** Where clients mount a mirror of node path `path` (under `exportPath`): `/mirror/<path under exportPath>`. */
export function mirrorExportPath(exportPath: string, path: string): string {
  return `${MIRROR_ROOT}${path.slice(exportPath.length)}`;
}

/** The part of a mirror's export path (`/mirror/app`, one `isMirrorExportPath` accepts) under the root: `/app`. */
export function underMirrorRoot(mirrorExport: string): string {
  return mirrorExport.slice(MIRROR_ROOT.length);
}

/** The fsid of one mirror: a UUID from the fleet's construct path and the mirror's path, the same on every node. */
export function mirrorFsid(constructPath: string, path: string): string {
  const h = crypto.createHash('sha256').update(`cdk-efs-cache:mirror-fsid:${constructPath}:${path}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Whether `m` may be a change marker (`mirroring.changeMarker`): a relative path of letters, digits, . _ - and /, not
 * empty, no leading or trailing /, no empty, . or .. component (the nodes' check, assets/lib/mirror.sh, takes the same).
 */
export function isChangeMarker(m: string): boolean {
  return /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(m) && !m.split('/').some((c) => c === '.' || c === '..');
}
