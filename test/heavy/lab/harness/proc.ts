import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Resolve with the result instead of throwing when the command exits non-zero. */
  readonly allowFail?: boolean;
  readonly timeoutMs?: number;
  readonly input?: string;
}

/** Runs a host command to completion and collects its output. */
export function run(cmd: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    if (options.timeoutMs) {
      timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    }
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(new Error(`${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      const result = {
        code: code ?? 128,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      };
      if (result.code !== 0 && !options.allowFail) {
        const why = signal ? `signal ${signal}` : `exit ${result.code}`;
        reject(new Error(`${cmd} ${args.join(' ')} failed (${why}): ${result.stderr.trim() || result.stdout.trim()}`));
      } else {
        resolve(result);
      }
    });
    if (options.input !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(options.input);
    }
  });
}

/** Synchronous variant for exit handlers, where no promise will ever settle. Never throws. */
export function runSync(cmd: string, args: readonly string[]): RunResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 10_000 });
  return { code: r.status ?? 128, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? r.error.message : '') };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The CPU time a live process has used (user and system, all its threads), in seconds, from /proc/PID/stat; undefined
 * once it is gone. Linux reports it in clock ticks of 1/100 s (USER_HZ) on every architecture the lab runs on.
 */
export function cpuSeconds(pid: number): number | undefined {
  try {
    // After the command's closing parenthesis: state is the first field, utime the 12th, stime the 13th.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** True while a process with this id exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
