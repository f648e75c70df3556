/** wrk's report, as the CMS bench (bench/cms.ts) reads it. */
import { CmsWrkRun } from './results';

/** wrk's figures: requests per second, the requests, latency percentiles (seconds), and errors. */
export type WrkRun = CmsWrkRun;

/** Parses wrk's report (`--latency`): `Requests/sec:`, `N requests in`, the 50 % and 99 % lines, errors. */
export function parseWrk(text: string): WrkRun {
  const unit = (v: string, u: string) => Number(v) * ({ us: 1e-6, ms: 1e-3, s: 1, m: 60 } as Record<string, number>)[u];
  const lat = (q: string) => {
    const m = new RegExp(`^\\s*${q}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(text);
    return m ? unit(m[1], m[2]) : NaN;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN),
    requests: Number(/(\d+) requests in /.exec(text)?.[1] ?? NaN),
    p50: lat('50'), p99: lat('99'),
    errors: non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  };
}
