import { Size, SizeRoundingBehavior } from 'aws-cdk-lib';

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
