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
  private nextId = 1;

  constructor() {
    this.proc = spawn(process.execPath, [join(REPO, 'dist', 'cli.js'), 'serve', '--backend', 'cpu']);
    this.proc.stdout.on('data', (d: Buffer) => this.read(d));
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

  /** Sends a request; resolves with its reply. */
  async request(method: string, params?: unknown): Promise<Reply> {
    const id = this.nextId++;
    this.frame(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) }));
    return this.until(method, () => this.messages.find((m) => m.id === id), 120_000);
  }

  /** The parse errors (id null) received so far. */
  parseErrors(): string[] {
    return this.messages.filter((m) => m.id === null && m.error?.code === -32700).map((m) => m.error!.message);
  }
}
