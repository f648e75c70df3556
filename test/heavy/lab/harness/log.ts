import * as path from 'path';

/**
 * Progress lines for long lab runs: straight to stderr (jest does not buffer it), with seconds since load and the lab
 * file that wrote them (test/heavy/lab/run.sh runs two files at once, whose lines interleave).
 */
const started = Date.now();

export function elapsed(sinceMs: number = started): string {
  return `${((Date.now() - sinceMs) / 1000).toFixed(1)}s`;
}

/** The lab file running in this process, as jest knows it ('' outside jest). */
function labFile(): string {
  const state = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.();
  return state?.testPath ? ` ${path.basename(state.testPath).replace(/\.lab\.ts$/, '')}` : '';
}

export function progress(message: string): void {
  process.stderr.write(`[lab ${elapsed().padStart(7)}${labFile()}] ${message}\n`);
}
