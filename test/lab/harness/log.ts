/** Progress lines for long lab runs: straight to stderr (jest does not buffer it), with seconds since load. */
const started = Date.now();

export function elapsed(sinceMs: number = started): string {
  return `${((Date.now() - sinceMs) / 1000).toFixed(1)}s`;
}

export function progress(message: string): void {
  process.stderr.write(`[lab ${elapsed().padStart(7)}] ${message}\n`);
}
