/**
 * An error about one prop, worded so the user sees which prop to change: `Invalid <prop>: <why>`.
 */
export function propError(prop: string, why: string): Error {
  return new Error(`Invalid ${prop}: ${why}`);
}
