import { Duration, Size, SizeRoundingBehavior } from 'aws-cdk-lib';

/**
 * An error about one prop, worded so the user sees which prop to change: `Invalid <prop>: <why>`.
 */
export function propError(prop: string, why: string): Error {
  return new Error(`Invalid ${prop}: ${why}`);
}

/** Throws `Invalid <prop>` unless `size` (when given) is whole GiB from `min` to `max` (an EBS volume size). */
export function wholeGib(prop: string, size: Size | undefined, min: number, max: number): void {
  if (size === undefined) return;
  const gib = size.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (!Number.isInteger(gib) || gib < min || gib > max) throw propError(prop, `must be whole GiB from ${min} to ${max}, got ${gib} GiB.`);
}

/** Throws `Invalid <prop>` unless `d` (when given) is whole seconds from `min` to `max` (named `range` in the message). */
export function wholeSeconds(prop: string, d: Duration | undefined, min: number, max: number, range: string): void {
  if (d === undefined) return;
  const s = d.toSeconds({ integral: false });
  if (!Number.isInteger(s) || s < min || s > max) throw propError(prop, `must be whole seconds from ${range}, got ${d.toHumanString()}.`);
}
