import { Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { propError } from './errors';

/**
 * Directories of the operating system that a mount (the nodes' origin mount at `exportPath`, a client's `mountPoint`
 * or `cacheDirectory`) must never cover: a file system mounted on one hides what the system keeps there (programs,
 * libraries, configuration, logs, nfsd's state, the homes of Session Manager users) until it is unmounted, and the
 * instance breaks in ways far from the mount. /bin, /sbin, /lib and /lib64 are links into /usr on current images: a
 * mount there covers /usr/bin and its kin. /opt holds the CloudWatch agent, /snap Ubuntu's SSM agent. Parents of these
 * (/, /usr, /var) are refused with them.
 */
export const SYSTEM_DIRECTORIES: readonly string[] = [
  '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib64', '/opt', '/proc', '/root', '/run', '/sbin', '/snap', '/sys',
  '/tmp', '/usr', '/usr/bin', '/usr/include', '/usr/lib', '/usr/lib64', '/usr/libexec', '/usr/local', '/usr/sbin',
  '/usr/share', '/var', '/var/cache', '/var/lib', '/var/lib/nfs', '/var/lock', '/var/log', '/var/run', '/var/spool', '/var/tmp',
];

/**
 * Trees that nothing may be mounted anywhere inside: kernel and runtime file systems (/proc, /sys, /dev, /run and its
 * old names /var/run and /var/lock), the configuration (/etc), the boot loader's files (/boot), and nfsd's and the
 * NFS client's state (/var/lib/nfs, where rpc_pipefs is mounted).
 */
export const SYSTEM_TREES: readonly string[] = ['/boot', '/dev', '/etc', '/proc', '/run', '/sys', '/var/lib/nfs', '/var/lock', '/var/run'];

/** The system directory `path` is, contains or lies in (per `SYSTEM_DIRECTORIES` and `SYSTEM_TREES`), if any. */
export function systemDirectoryOf(path: string): { dir: string; how: 'is' | 'contains' | 'inside' } | undefined {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const exact = SYSTEM_DIRECTORIES.find((d) => d === p);
  if (exact) return { dir: exact, how: 'is' };
  const inner = SYSTEM_DIRECTORIES.find((d) => d.startsWith(p === '/' ? '/' : `${p}/`));
  if (inner) return { dir: inner, how: 'contains' };
  const tree = SYSTEM_TREES.find((t) => p.startsWith(`${t}/`));
  return tree ? { dir: tree, how: 'inside' } : undefined;
}

/**
 * Throws `Invalid <prop>` when `path` (where something is mounted; `what` says what, for the message) is a system
 * directory, a parent of one, or inside a system tree. A token passes: the instance checks what it can at boot.
 */
export function checkNotSystemDirectory(scope: IConstruct, prop: string, path: string | undefined, what: string): void {
  if (path === undefined || Token.isUnresolved(path)) return;
  const hit = systemDirectoryOf(path);
  if (!hit) return;
  const where = hit.how === 'is' ? `is the system directory ${hit.dir}`
    : hit.how === 'contains' ? `contains the system directory ${hit.dir}` : `is inside ${hit.dir}`;
  throw propError(scope, prop, `'${path}' ${where}: ${what} would hide or break what the system keeps there. ` +
    'Choose a directory of its own, for example under /mnt or /srv.');
}

// Checks of the local paths the constructs mount on or serve, shared by fleets, imported fleets and clients.

/** An absolute path of letters, digits and `. _ - /` (`/` itself included). */
export const PATH_RE = /^\/[A-Za-z0-9._/-]*$/;

/**
 * An S3 key prefix as the scripts take it (after `normalS3Prefix`): '' (the whole bucket) or segments of letters,
 * digits and . _ = + -, each ending in `/` (no empty segment). The seeder's rule and the S3 mirrors'.
 */
export const S3_PREFIX_RE = /^([A-Za-z0-9._=+-]+\/)*$/;

/** A prefix as given, without leading `/` and with a trailing `/` unless it is '' (`datasets/images` -> `datasets/images/`). */
export function normalS3Prefix(given: string): string {
  const p = given.replace(/^\/+/, '');
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

/** A `.` or `..` segment anywhere in a path. */
export const DOT_SEGMENT_RE = /(^|\/)\.\.?(\/|$)/;

/** An absolute path of letters, digits and `. _ - /`, other than `/`, without a trailing `/`. */
export const DIR_RE = /^\/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$/;

/** A path with each run of `/` written once (`/mnt//a` is the directory `/mnt/a`). */
export function squeeze(path: string): string {
  return path.replace(/\/+/g, '/');
}

/**
 * How directory `a` lies to directory `b`: `'same'`, `'inside'` (a is below b), `'around'` (b is below a), or
 * undefined when neither holds. Paths are absolute, without `.` or `..` segments.
 */
export function nesting(a: string, b: string): 'same' | 'inside' | 'around' | undefined {
  const x = squeeze(`${a}/`);
  const y = squeeze(`${b}/`);
  if (x === y) return 'same';
  if (x.startsWith(y)) return 'inside';
  if (y.startsWith(x)) return 'around';
  return undefined;
}

/** `nesting` in words, for an error: "'/mnt/efs/app' is inside mountPoint '/mnt/efs'". */
export function nestingInWords(a: string, how: 'same' | 'inside' | 'around', bName: string, b: string): string {
  if (how === 'same') return `'${a}' is the directory of ${bName} '${b}'`;
  if (how === 'inside') return `'${a}' is inside ${bName} '${b}'`;
  return `'${a}' contains ${bName} '${b}'`;
}
