import * as net from 'net';
import { sleep } from './proc';

/** A QEMU guest agent reply we did not expect, or a command the agent rejected. */
export class GuestAgentError extends Error {}

interface Pending {
  readonly accept: (reply: Record<string, unknown>) => boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Client of the QEMU guest agent on a host unix socket (virtio-serial port org.qemu.guest_agent.0).
 *
 * The agent speaks one JSON command at a time. The channel survives guest reboots and agent restarts but may then
 * hold stale replies, so every first use, and every use after a timeout, resynchronizes with guest-sync-delimited
 * (a 0xFF byte flushes the agent's parser; the reply carries our random id).
 */
export class GuestAgent {
  private socket: net.Socket | undefined;
  private buffer = '';
  private pending: Pending | undefined;
  private inSync = false;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly socketPath: string) {}

  /** Drops the connection (QEMU restarted, or the lab is done). */
  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
    this.inSync = false;
    this.buffer = '';
    this.failPending(new GuestAgentError('guest agent connection closed'));
  }

  /**
   * Waits until the agent answers guest-sync, retrying until the deadline.
   * @returns false when the deadline passed first
   */
  async waitUntilReady(timeoutMs: number, isRunning: () => boolean = () => true): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!isRunning()) return false;
      try {
        await this.serialize(() => this.sync(Math.min(3000, Math.max(500, deadline - Date.now()))));
        return true;
      } catch {
        await sleep(500);
      }
    }
    return false;
  }

  /** Runs one agent command and returns its "return" value. */
  call<T = unknown>(command: string, args?: Record<string, unknown>, timeoutMs = 30_000): Promise<T> {
    return this.serialize(async () => {
      if (!this.inSync) await this.sync(timeoutMs);
      return (await this.request(command, args, timeoutMs)) as T;
    });
  }

  /** Sends a command that does not reply on success (guest-shutdown). */
  send(command: string, args?: Record<string, unknown>): Promise<void> {
    return this.serialize(async () => {
      if (!this.inSync) await this.sync(10_000);
      await this.ensureSocket();
      this.socket!.write(JSON.stringify(args ? { execute: command, arguments: args } : { execute: command }) + '\n');
      this.inSync = false;
    });
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async sync(timeoutMs: number): Promise<void> {
    await this.ensureSocket();
    const id = Math.floor(Math.random() * 2 ** 31);
    this.buffer = '';
    const reply = this.expect((r) => r.return === id, timeoutMs, 'guest-sync-delimited');
    this.socket!.write(Buffer.concat([Buffer.from([0xff]), Buffer.from(JSON.stringify({ execute: 'guest-sync-delimited', arguments: { id } }) + '\n')]));
    await reply;
    this.inSync = true;
  }

  private async request(command: string, args: Record<string, unknown> | undefined, timeoutMs: number): Promise<unknown> {
    await this.ensureSocket();
    const reply = this.expect((r) => 'return' in r || 'error' in r, timeoutMs, command) as Promise<Record<string, unknown>>;
    this.socket!.write(JSON.stringify(args ? { execute: command, arguments: args } : { execute: command }) + '\n');
    const r = await reply;
    if ('error' in r) {
      const e = r.error as { class?: string; desc?: string };
      throw new GuestAgentError(`${command}: ${e.class ?? 'error'}: ${e.desc ?? JSON.stringify(e)}`);
    }
    return r.return;
  }

  private expect(accept: (reply: Record<string, unknown>) => boolean, timeoutMs: number, what: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        this.inSync = false;
        reject(new GuestAgentError(`guest agent: no reply to ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending = { accept, resolve, reject, timer };
    });
  }

  private failPending(error: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    p.reject(error);
  }

  private ensureSocket(): Promise<void> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(this.socketPath);
      socket.once('connect', () => {
        this.socket = socket;
        this.buffer = '';
        this.inSync = false;
        resolve();
      });
      socket.once('error', (e) => {
        if (this.socket === socket) this.close();
        reject(new GuestAgentError(`guest agent socket ${this.socketPath}: ${e.message}`));
      });
      socket.on('close', () => {
        if (this.socket === socket) this.close();
      });
      socket.on('data', (data: Buffer) => this.onData(data));
    });
  }

  private onData(data: Buffer): void {
    // 0xFF only ever appears as the delimiter of guest-sync-delimited replies.
    this.buffer += data.toString('latin1').replace(/\xff/g, '');
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (!line) continue;
      let reply: Record<string, unknown>;
      try {
        reply = JSON.parse(Buffer.from(line, 'latin1').toString('utf8'));
      } catch {
        continue;
      }
      const p = this.pending;
      if (p && p.accept(reply)) {
        this.pending = undefined;
        clearTimeout(p.timer);
        p.resolve(reply);
      }
    }
  }
}
