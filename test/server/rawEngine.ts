/** A `serve` process (dist/cli.js) spoken to in raw bytes, for the tests of what a client may send it. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO } from '../helpers';

export interface Reply {
  id: number | null;
  result?: unknown;
  error?: { code: number; message: string };
  method?: string;
  params?: { reason?: string; runDir?: string };
}

/** A serve process spoken to in raw bytes; its frames parsed as they come. */
export class RawEngine {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly messages: Reply[] = [];
  private buf = Buffer.alloc(0);
  /** The engine's exit code once it has exited (null for a signal); undefined while it runs. */
  exitCode: number | null | undefined;
  private nextId = 1;

  constructor() {
    this.proc = spawn(process.execPath, [join(REPO, 'dist', 'cli.js'), 'serve', '--backend', 'cpu']);
    this.proc.stdout.on('data', (d: Buffer) => this.read(d));
    this.proc.on('exit', (code) => (this.exitCode = code));
  }

  private read(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const n = Number(/Content-Length: (\d+)/.exec(this.buf.subarray(0, end).toString())![1]);
      if (this.buf.length < end + 4 + n) return;
      this.messages.push(JSON.parse(this.buf.subarray(end + 4, end + 4 + n).toString()) as Reply);
      this.buf = this.buf.subarray(end + 4 + n);
    }
  }

  raw(bytes: string): void {
    this.proc.stdin.write(bytes);
  }

  frame(body: string): void {
    this.raw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  async until<T>(what: string, find: () => T | undefined, ms = 30_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Sends a request; resolves with its reply; throws when the engine exits or gives none in `ms`. */
  async request(method: string, params?: unknown, ms = 120_000): Promise<Reply> {
    const id = this.nextId++;
    this.frame(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) }));
    return this.until(
      `${method}'s reply`,
      () => {
        const reply = this.messages.find((m) => m.id === id);
        if (!reply && this.exitCode !== undefined)
          throw new Error(`${method}: the engine died (exit ${this.exitCode})`);
        return reply;
      },
      ms,
    );
  }

  /** A request's error message or result, and how long its reply took (`request`'s throws stand). */
  async ask(method: string, params?: unknown, ms?: number): Promise<{ error?: string; result?: unknown; ms: number }> {
    const t0 = Date.now();
    const reply = await this.request(method, params, ms);
    const took = Date.now() - t0;
    return reply.error ? { error: reply.error.message, ms: took } : { result: reply.result, ms: took };
  }

  /** The parse errors (id null) received so far. */
  parseErrors(): string[] {
    return this.messages.filter((m) => m.id === null && m.error?.code === -32700).map((m) => m.error!.message);
  }
}
