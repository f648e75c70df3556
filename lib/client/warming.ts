import { Duration, Size, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { knownAtSynth, propError, wholeSeconds } from '../private/errors';
import { DOT_SEGMENT_RE, nesting, PATH_RE, squeeze } from '../private/paths';

/**
 * Warming of a client (`FsCacheClientOptions.warming`): trees its first boot reads before it counts as ready.
 * The page cache (and FS-Cache, through the `fsc` mount) then holds them.
 *
 * @see https://github.com/cdk-efs-cache/cdk-efs-cache/blob/main/docs/fs-cache-clients.md#warming-web-servers-that-start-warm
 */
export interface ClientWarmingOptions {
  /**
   * Absolute paths read through: `mountPoint` or a path under it, or a mirror's mount point or a path under it.
   * Every file under each is read once, in parallel.
   */
  readonly paths: string[];

  /**
   * Parallel readers.
   *
   * @default 16
   */
  readonly workers?: number;

  /**
   * Longest time warming may take, in whole seconds from 10 seconds to 60 minutes. Past it the bootstrap logs a warning
   * and goes on: a slow warm delays an instance, it never fails its boot.
   *
   * @default Duration.minutes(5)
   */
  readonly timeout?: Duration;

  /**
   * Most bytes read, in whole MiB. The files found after it are left unread, and a warning says how many.
   *
   * @default Size.gibibytes(2)
   */
  readonly maxSize?: Size;
}

/** The defaults of `ClientWarmingOptions`. */
export const CLIENT_WARMING_DEFAULTS = {
  workers: 16,
  timeout: Duration.minutes(5),
  maxSize: Size.gibibytes(2),
} as const;

/** Where the client mounts what it may warm: the fsc mount, and each mirror whose mount point is known at synth. */
export interface WarmableMounts {
  readonly mountPoint: string;
  /** The mirrors' mount points known at synth. */
  readonly mirrors: string[];
  /** The mirrors' root (`mirrorMountPoint`) when some mirror's mount point is only known at boot (a token export path). */
  readonly mirrorRoot?: string;
}

/**
 * `EFSC_WARM_*`: the paths (space-separated; empty: no warming), readers, seconds and MiB, checked here first. Throws
 * `Invalid warming.<option>` for warming that cannot work. Every value must be known at synth (paths are compared with
 * the mounts); the instance checks them again at boot, with each path's mount.
 */
export function clientWarmingParameters(scope: IConstruct, w: ClientWarmingOptions | undefined, mounts: WarmableMounts): Record<string, string> {
  const d = CLIENT_WARMING_DEFAULTS;
  if (w === undefined) {
    return { EFSC_WARM_PATHS: '', EFSC_WARM_WORKERS: String(d.workers), EFSC_WARM_TIMEOUT_SEC: String(d.timeout.toSeconds()), EFSC_WARM_MAX_MIB: mib(d.maxSize) };
  }
  knownAtSynth(scope, 'warming.workers', w.workers);
  if (w.workers !== undefined && (!Number.isInteger(w.workers) || w.workers < 1 || w.workers > 512)) {
    throw propError(scope, 'warming.workers', `must be a whole number from 1 to 512, got ${w.workers}.`);
  }
  wholeSeconds(scope, 'warming.timeout', w.timeout, 10, 3600, '10 seconds to 60 minutes');
  knownAtSynth(scope, 'warming.maxSize', w.maxSize);
  if (w.maxSize !== undefined) {
    const m = w.maxSize.toMebibytes({ rounding: SizeRoundingBehavior.NONE });
    if (!Number.isInteger(m) || m < 1 || m > 16 * 1024 * 1024) throw propError(scope, 'warming.maxSize', `must be whole MiB from 1 MiB to 16 TiB, got ${m} MiB.`);
  }
  if (!Array.isArray(w.paths) || w.paths.length === 0) {
    throw propError(scope, 'warming.paths', 'is empty: there is nothing to warm. Leave warming out for no warming.');
  }
  // A mount point itself or a path below it; below the mirrors' root only, where a mirror's mount point is not known.
  const targets: [string, string[]][] = [[mounts.mountPoint, ['same', 'inside']], ...mounts.mirrors.map((m): [string, string[]] => [m, ['same', 'inside']]),
    ...(mounts.mirrorRoot ? [[mounts.mirrorRoot, ['inside']] as [string, string[]]] : [])];
  const named = [`mountPoint '${mounts.mountPoint}'`, ...mounts.mirrors.map((m) => `the mirror at '${m}'`),
    ...(mounts.mirrorRoot ? [`a mirror under '${mounts.mirrorRoot}'`] : [])].join(', ');
  for (const p of w.paths) {
    knownAtSynth(scope, 'warming.paths', p, 'each is checked against the mounts');
    if (typeof p !== 'string' || !PATH_RE.test(p) || DOT_SEGMENT_RE.test(p)) {
      throw propError(scope, 'warming.paths', `'${p}' is not an absolute path without . or .. segments.`);
    }
    const under = targets.some(([t, ok]) => ok.includes(nesting(squeeze(p), t) ?? ''));
    if (!under) throw propError(scope, 'warming.paths', `'${p}' is not under what the client mounts (${named}): warming reads only through them.`);
  }
  const twice = w.paths.find((p, i) => w.paths.indexOf(p) !== i);
  if (twice !== undefined) throw propError(scope, 'warming.paths', `lists '${twice}' twice.`);
  return {
    EFSC_WARM_PATHS: w.paths.map(squeeze).join(' '),
    EFSC_WARM_WORKERS: String(w.workers ?? d.workers),
    EFSC_WARM_TIMEOUT_SEC: String((w.timeout ?? d.timeout).toSeconds()),
    EFSC_WARM_MAX_MIB: mib(w.maxSize ?? d.maxSize),
  };
}

function mib(s: Size): string {
  if (Token.isUnresolved(s)) throw new Error('unreachable: a token size');
  return String(s.toMebibytes({ rounding: SizeRoundingBehavior.NONE }));
}
