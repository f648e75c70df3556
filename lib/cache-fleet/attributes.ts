import { Duration, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct, IConstruct } from 'constructs';
import { isEndpoint } from '../nfs/endpoint';
import { NfsVersion } from '../nfs/nfs-version';
import { NFS_PORT } from '../nfs/ports';
import { propError } from '../private/errors';
import { DOT_SEGMENT_RE } from '../private/paths';
import { REMOVED_FLEET_ATTRIBUTES, refuseRemovedProps } from '../private/removed-props';
import { isMirrorExportPath, isMirrorPath, MIRROR_FSID_RE, MIRROR_ROOT, mirrorExportPath, mirrorFsid } from './mirror-paths';
import { CACHE_FLEET_DEFAULTS, CacheFleetAttributes, ICacheFleet, MirrorExport } from './options';
import { checkClientNfsVersion, checkExportPath } from './validation';

/**
 * A fleet defined elsewhere, known by its attributes (`CacheFleet.fromCacheFleetAttributes`): checked with a
 * fleet's own rules, and what the attributes leave out is what a `CacheFleet` defaults to (`CACHE_FLEET_DEFAULTS`).
 */
export class ImportedCacheFleet extends Construct implements ICacheFleet {
  public readonly endpoint: string;
  public readonly exportPath: string;
  public readonly attributeCacheTimeout: Duration;
  public readonly directoryCacheTimeout: Duration;
  public readonly mirrorExports: MirrorExport[];
  public readonly clientNfsVersion: NfsVersion;
  public readonly enaExpress: boolean;
  public readonly connections: ec2.Connections;

  constructor(scope: Construct, id: string, attrs: CacheFleetAttributes) {
    super(scope, id);
    refuseRemovedProps(this, attrs, REMOVED_FLEET_ATTRIBUTES);
    validateCacheFleetAttributes(this, attrs);
    this.endpoint = attrs.endpoint;
    this.exportPath = attrs.exportPath ?? CACHE_FLEET_DEFAULTS.exportPath;
    this.attributeCacheTimeout = attrs.attributeCacheTimeout ?? CACHE_FLEET_DEFAULTS.attributeCacheTimeout;
    this.directoryCacheTimeout = attrs.directoryCacheTimeout ?? CACHE_FLEET_DEFAULTS.directoryCacheTimeout;
    this.mirrorExports = attrs.mirrorExports ?? [];
    this.clientNfsVersion = attrs.clientNfsVersion ?? CACHE_FLEET_DEFAULTS.clientNfsVersion;
    this.enaExpress = attrs.enaExpress ?? CACHE_FLEET_DEFAULTS.enaExpress;
    this.connections = new ec2.Connections({ securityGroups: [attrs.securityGroup], defaultPort: ec2.Port.tcp(NFS_PORT) });
  }
}

/**
 * Checks the attributes of a fleet defined elsewhere (`CacheFleet.fromCacheFleetAttributes`) with the rules a
 * `CacheFleet` applies to its own values: what is concrete is checked here (`Invalid <attribute>: ...`), tokens are
 * left to the clients' boot checks.
 */
export function validateCacheFleetAttributes(scope: IConstruct, attrs: CacheFleetAttributes): void {
  const concrete = (v: string) => !Token.isUnresolved(v);
  if (concrete(attrs.endpoint) && !isEndpoint(attrs.endpoint)) {
    throw propError(scope, 'endpoint', `must be the fleet's endpoint, a DNS name (such as 'cache.efs-cache.internal') ` +
      `or an IPv4 address, got '${attrs.endpoint}'.`);
  }
  const exportPath = attrs.exportPath ?? CACHE_FLEET_DEFAULTS.exportPath;
  if (concrete(exportPath)) checkExportPath(scope, exportPath);
  for (const [name, d] of [['attributeCacheTimeout', attrs.attributeCacheTimeout], ['directoryCacheTimeout', attrs.directoryCacheTimeout]] as const) {
    if (d && !Token.isUnresolved(d.toSeconds()) && (d.toSeconds() < 0 || d.toSeconds() > 3600)) {
      throw propError(scope, name, `must be between 0 and 60 minutes, as the fleet's own, got ${d.toHumanString()}.`);
    }
  }
  checkClientNfsVersion(scope, attrs.clientNfsVersion);
  validateImportedMirrors(scope, attrs, exportPath);
}

/** The rules of a fleet's `mirrorExports`, for mirrors given as attributes: concrete paths, export paths and fsids. */
function validateImportedMirrors(scope: IConstruct, attrs: CacheFleetAttributes, exportPath: string): void {
  const mirrors = attrs.mirrorExports ?? [];
  const concrete = (v: string) => !Token.isUnresolved(v);
  const example = concrete(exportPath) && !DOT_SEGMENT_RE.test(exportPath) ? exportPath : CACHE_FLEET_DEFAULTS.exportPath;
  mirrors.forEach((m, i) => {
    const at = `mirrorExports[${i}]`;
    // An S3 mirror (Mirror.s3) has no node path: its path is its export path, under /mirror.
    if (concrete(m.path) && m.path === m.exportPath && isMirrorExportPath(m.path)) {
      if (m.fsid !== undefined && concrete(m.fsid) && !MIRROR_FSID_RE.test(m.fsid)) {
        throw propError(scope, 'mirrorExports', `${at}.fsid '${m.fsid}' is not a UUID in lowercase hex: give the fleet's mirrorExports[].fsid.`);
      }
      return;
    }
    if (concrete(m.path) && !isMirrorPath(m.path)) {
      throw propError(scope, 'mirrorExports', `${at}.path '${m.path}' is not an absolute path (letters, digits, . _ - /, no trailing / ` +
        `or //, no . or .. segment): give the fleet's mirror path, e.g. '${example}/app'.`);
    }
    if (concrete(m.path) && concrete(exportPath) && !m.path.startsWith(`${exportPath}/`)) {
      throw propError(scope, 'mirrorExports', `${at}.path '${m.path}' is not under the fleet's exportPath '${exportPath}': a fleet ` +
        `mirrors node paths below its export, e.g. '${exportPath}/app'.`);
    }
    if (concrete(m.exportPath) && !isMirrorExportPath(m.exportPath)) {
      throw propError(scope, 'mirrorExports', `${at}.exportPath '${m.exportPath}' is not a path under ${MIRROR_ROOT} (letters, digits, . _ - /, ` +
        `no trailing / or //, no . or .. segment): give the fleet's mirrorExports[].exportPath, e.g. '${MIRROR_ROOT}/app'.`);
    }
    if (concrete(m.path) && concrete(exportPath) && concrete(m.exportPath) && m.exportPath !== mirrorExportPath(exportPath, m.path)) {
      throw propError(scope, 'mirrorExports', `${at}.exportPath '${m.exportPath}' is not where the fleet exports '${m.path}': a fleet with ` +
        `exportPath '${exportPath}' serves it at '${mirrorExportPath(exportPath, m.path)}'.`);
    }
    if (m.fsid !== undefined && concrete(m.fsid) && !MIRROR_FSID_RE.test(m.fsid)) {
      throw propError(scope, 'mirrorExports', `${at}.fsid '${m.fsid}' is not a UUID in lowercase hex: give the fleet's mirrorExports[].fsid, ` +
        `e.g. '${mirrorFsid('Stack/Fleet', `${example}/app`)}'.`);
    }
  });
  // Between the mirrors, as a fleet has them: each tree once, none inside another, one fsid and one export each.
  const fields = [
    ['path', 'a tree is mirrored once'],
    ['exportPath', 'a fleet serves each mirror at a path of its own, and clients mount them side by side'],
    ['fsid', 'each mirror of a fleet has its own'],
  ] as const;
  for (const [field, why] of fields) {
    mirrors.forEach((m, i) => {
      const v = m[field];
      if (v === undefined || !concrete(v)) return;
      mirrors.forEach((o, j) => {
        const w = o[field];
        if (j >= i || w === undefined || !concrete(w)) return;
        if (v === w) throw propError(scope, 'mirrorExports', `mirrorExports[${j}] and mirrorExports[${i}] have the same ${field} '${v}': ${why}.`);
        if (field !== 'fsid' && (v.startsWith(`${w}/`) || w.startsWith(`${v}/`))) {
          const [inner, outer] = v.startsWith(`${w}/`) ? [v, w] : [w, v];
          throw propError(scope, 'mirrorExports', `the ${field} '${inner}' is inside '${outer}' (mirrorExports[${j}] and mirrorExports[${i}]): ${why}.`);
        }
      });
    });
  }
}
