/** Statistics shared by the bench's measuring (bench/metadata.ts) and rendering (bench/render/). */

/** Median of `v` (the mean of the two middle values for an even count); `v` is left unsorted. */
export function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
