/**
 * The wire's framing (`Content-Length: N\r\n\r\n` + N bytes of JSON), read so that a bad frame
 * costs one message and never the connection. vscode-jsonrpc's own reader waits forever for a
 * body shorter than its header says, swallowing the frames after it, and drops malformed JSON
 * without a reply. This one answers each bad frame with a parse error (−32700, id null, as
 * JSON-RPC 2.0 says) naming what was wrong, and finds the next frame by its header.
 */
import type { Readable } from 'node:stream';
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc/node';

/** Larger frames are refused: no request of this protocol comes near (docs/ARCHITECTURE.md). */
export const MAX_FRAME_BYTES = 64 << 20;
/** A body still short after this long never comes whole: its frame is dropped. */
export const PARTIAL_FRAME_MS = 2000;

const HEADER = Buffer.from('Content-Length:', 'ascii');
const END_OF_HEADERS = Buffer.from('\r\n\r\n', 'ascii');

export class FramedReader extends AbstractMessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  /** Chunks of a long body not yet joined to `buffer` (joined once the body is whole: no quadratic copying). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes `buffer` must hold for the frame at its start to be whole (0: unknown). */
  private need = 0;
  private callback: DataCallback | undefined;
  private partialTimer: NodeJS.Timeout | undefined;

  /** `badFrame` hears every frame that was dropped, in words. */
  constructor(
    private readonly input: Readable,
    private readonly badFrame: (why: string) => void,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer): void => this.onData(chunk);
    const onEnd = (): void => this.fireClose();
    const onError = (err: Error): void => this.fireError(err);
    this.input.on('data', onData);
    this.input.on('end', onEnd);
    this.input.on('close', onEnd);
    this.input.on('error', onError);
    return {
      dispose: () => {
        this.input.off('data', onData);
        this.input.off('end', onEnd);
        this.input.off('close', onEnd);
        this.input.off('error', onError);
        clearTimeout(this.partialTimer);
      },
    };
  }

  private onData(chunk: Buffer): void {
    clearTimeout(this.partialTimer);
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Waiting for a long body: join only when it is whole, or when a chunk may hold the next header.
    const waiting = this.need > 0 && this.buffer.length + this.pendingBytes < this.need;
    if (!waiting || chunk.includes(HEADER)) {
      this.buffer = Buffer.concat([this.buffer, ...this.pending]);
      this.pending = [];
      this.pendingBytes = 0;
      this.need = 0;
      this.drain();
    }
    if (this.buffer.length + this.pendingBytes)
      this.partialTimer = setTimeout(() => this.dropPartial(), PARTIAL_FRAME_MS);
  }

  /** Reads every whole frame in the buffer. */
  private drain(): void {
    for (;;) {
      const end = this.buffer.indexOf(END_OF_HEADERS);
      if (end < 0) {
        if (this.buffer.length > 8192) this.skip('a header block longer than 8 KB');
        return;
      }
      const headers = this.buffer.subarray(0, end).toString('ascii');
      const length = /^Content-Length: *(\d+) *$/im.exec(headers)?.[1];
      if (length === undefined) {
        this.skip(`a header block without Content-Length (${JSON.stringify(headers.slice(0, 80))})`);
        continue;
      }
      const n = Number(length);
      if (n > MAX_FRAME_BYTES) {
        this.skip(`a frame of ${n} bytes, more than the ${MAX_FRAME_BYTES} this engine reads`);
        continue;
      }
      const start = end + END_OF_HEADERS.length;
      // A header inside the body: the body was shorter than its Content-Length said.
      const next = this.nextHeader(start);
      if (next >= 0 && next < start + n) {
        this.badFrame(`a body of ${next - start} bytes where Content-Length said ${n}`);
        this.buffer = this.buffer.subarray(next);
        continue;
      }
      if (this.buffer.length < start + n) {
        this.need = start + n; // the rest is on its way
        return;
      }
      const body = this.buffer.subarray(start, start + n).toString('utf8');
      this.buffer = this.buffer.subarray(start + n);
      this.deliver(body);
    }
  }

  private deliver(body: string): void {
    let message: unknown;
    try {
      message = JSON.parse(body);
    } catch (err) {
      this.badFrame(`malformed JSON (${(err as Error).message})`);
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.badFrame(`a message that is not a JSON object (${body.slice(0, 40)})`);
      return;
    }
    this.callback?.(message as Message);
  }

  /**
   * Where the next header starts at or after `from` (-1: none yet): `Content-Length: N` and a raw
   * CR LF, which valid JSON cannot hold after such text (strings escape control characters).
   */
  private nextHeader(from: number): number {
    for (let at = this.buffer.indexOf(HEADER, from); at >= 0; at = this.buffer.indexOf(HEADER, at + 1)) {
      const line = this.buffer.subarray(at, at + 40).toString('latin1');
      if (/^Content-Length: *\d+ *\r\n/.test(line)) return at;
    }
    return -1;
  }

  /** Drops what is before the next header (or everything), saying why. */
  private skip(why: string): void {
    this.badFrame(why);
    const next = this.nextHeader(1);
    this.buffer = next >= 0 ? this.buffer.subarray(next) : Buffer.alloc(0);
  }

  private dropPartial(): void {
    const n = this.buffer.length + this.pendingBytes;
    if (!n) return;
    this.buffer = Buffer.alloc(0);
    this.pending = [];
    this.pendingBytes = 0;
    this.need = 0;
    this.badFrame(`an incomplete frame (${n} bytes, nothing more for ${PARTIAL_FRAME_MS / 1000} s)`);
  }
}
