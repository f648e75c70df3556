import * as net from 'net';
import { sleep } from './proc';

/** A QEMU machine protocol command QEMU refused. */
export class QmpError extends Error {}

/**
 * Client of QEMU's machine protocol (QMP) on a host unix socket: how the harness saves a template VM's state, waits
 * for a restore to finish and plugs disks into a running VM. One command at a time; events are ignored.
 */
export class Qmp {
  /** Connects (retrying until QEMU has opened its socket) and leaves capabilities negotiation mode. */
  static async connect(socketPath: string, timeoutMs = 30_000): Promise<Qmp> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const socket = await new Promise<net.Socket>((resolve, reject) => {
          const s = net.createConnection(socketPath);
          s.once('connect', () => resolve(s));
          s.once('error', reject);
        });
        const qmp = new Qmp(socket);
        await qmp.next((m) => 'QMP' in m, 10_000, 'greeting');
        await qmp.execute('qmp_capabilities');
        return qmp;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`qmp ${socketPath}: ${(e as Error).message}`);
        await sleep(200);
      }
    }
  }

  private buffer = '';
  private readonly messages: Record<string, unknown>[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl).trim();
        this.buffer = this.buffer.slice(nl + 1);
        if (line) this.messages.push(JSON.parse(line) as Record<string, unknown>);
      }
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  /** Runs one command and returns its "return" value; throws QmpError with QEMU's description when it refuses. */
  async execute<T = unknown>(command: string, args?: Record<string, unknown>, timeoutMs = 60_000): Promise<T> {
    this.socket.write(JSON.stringify(args ? { execute: command, arguments: args } : { execute: command }) + '\n');
    const reply = await this.next((m) => 'return' in m || 'error' in m, timeoutMs, command);
    if ('error' in reply) {
      const e = reply.error as { class?: string; desc?: string };
      throw new QmpError(`${command}: ${e.class ?? 'error'}: ${e.desc ?? JSON.stringify(e)}`);
    }
    return reply.return as T;
  }

  close(): void {
    this.socket.destroy();
  }

  private async next(accept: (m: Record<string, unknown>) => boolean, timeoutMs: number, what: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.messages.findIndex(accept);
      if (i >= 0) {
        const [m] = this.messages.splice(0, i + 1).slice(-1);
        return m;
      }
      if (this.closed) throw new QmpError(`qmp: connection closed waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new QmpError(`qmp: no reply to ${what} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1_000));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }
}
