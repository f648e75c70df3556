/** Checks of the local paths the constructs mount on or serve, shared by fleets, imported fleets and clients. */

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
