import { Duration, Size, SizeRoundingBehavior } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/**
 * An invalid prop, bound to the construct that was given it: the message reads `Invalid <prop>: <why> (at <path>)`,
 * so the user sees which prop to change and on which construct, like aws-cdk's own validation errors (whose class is
 * internal to aws-cdk-lib). `constructPath` carries the path on its own.
 */
export class PropError extends Error {
  /** The path of the construct whose prop is invalid; undefined before there is one (a `SeedSource` factory). */
  public readonly constructPath?: string;

  constructor(scope: IConstruct | undefined, prop: string, why: string) {
    super(`Invalid ${prop}: ${why}${scope ? ` (at ${scope.node.path})` : ''}`);
    this.name = 'ValidationError';
    this.constructPath = scope?.node.path;
  }
}

/**
 * An error about one prop of `scope`, worded so the user sees which prop to change: `Invalid <prop>: <why>`, then the
 * construct's path.
 */
export function propError(scope: IConstruct | undefined, prop: string, why: string): Error {
  return new PropError(scope, prop, why);
}

/** Throws `Invalid <prop>` unless `size` (when given) is whole GiB from `min` to `max` (an EBS volume size). */
export function wholeGib(scope: IConstruct, prop: string, size: Size | undefined, min: number, max: number): void {
  if (size === undefined) return;
  const gib = size.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (!Number.isInteger(gib) || gib < min || gib > max) throw propError(scope, prop, `must be whole GiB from ${min} to ${max}, got ${gib} GiB.`);
}

/** Throws `Invalid <prop>` unless `d` (when given) is whole seconds from `min` to `max` (named `range` in the message). */
export function wholeSeconds(scope: IConstruct, prop: string, d: Duration | undefined, min: number, max: number, range: string): void {
  if (d === undefined) return;
  const s = d.toSeconds({ integral: false });
  if (!Number.isInteger(s) || s < min || s > max) throw propError(scope, prop, `must be whole seconds from ${range}, got ${d.toHumanString()}.`);
}
