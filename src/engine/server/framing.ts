/**
 * The wire's framing (`Content-Length: N\r\n\r\n` + N bytes of JSON), read so that a bad frame
 * costs one message and never the connection. vscode-jsonrpc's own reader waits forever for a
 * body shorter than its header says, swallowing the frames after it, and drops malformed JSON
 * without a reply. This one answers each bad frame with one error naming what was wrong, and
 * finds the next frame by its header: a parse error (−32700, id null, as JSON-RPC 2.0 says) for
 * bytes that are no message, Invalid Request (−32600, id null) for a message whose id is neither
 * a string, a number nor null (vscode-jsonrpc drops it unanswered), and Invalid Params (−32602,
 * with its id) for params sent as an array (this protocol names them: an object).
 *
 * A frame over MAX_FRAME_BYTES is refused once, when its header arrives, and its body is then
 * skipped as it streams in (its Content-Length bytes, or up to a header that comes sooner),
 * without buffering it and without a reply per chunk. Other bytes that hold no header are dropped
 * with one error until the next header: the client learns what was wrong once, and the frames
 * after it are answered as usual.
 */
import type { Readable } from 'node:stream';
import {
  AbstractMessageReader,
  type DataCallback,
  type Disposable,
  ErrorCodes,
  type Message,
} from 'vscode-jsonrpc/node';

/** The error a dropped frame is answered with: a JSON-RPC error code and the id it answers (null: none known). */
export interface FrameError {
  code: number;
  id: string | number | null;
}
const PARSE_ERROR: FrameError = { code: ErrorCodes.ParseError, id: null };

/** What a request whose params are an array is told: this protocol names its params (an object). */
export const byPosition = (method: string): string =>
  `${method} params must be sent by name (an object), not by position (an array)`;

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
  /** Body bytes of a refused frame still to skip as they arrive. */
  private discard = 0;
  /** Dropping bytes without a header, already reported: silent until the next header. */
  private skipping = false;

  /** `badFrame` hears every frame that was dropped, in words, with the error that answers it. */
  constructor(
    private readonly input: Readable,
    private readonly badFrame: (why: string, error: FrameError) => void,
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

  private onData(data: Buffer): void {
    clearTimeout(this.partialTimer);
    const chunk = this.skipped(data);
    if (!chunk.length) return;
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

  /**
   * What of a chunk is left once a refused frame's body (`discard`) or headerless bytes (`skipping`)
   * are dropped: from the first header in it, or after the refused body's end.
   */
  private skipped(chunk: Buffer): Buffer {
    if (!this.discard && !this.skipping) return chunk;
    const at = headerIn(chunk, 0);
    if (this.discard && (at < 0 || at >= this.discard) && chunk.length >= this.discard) {
      const rest = chunk.subarray(this.discard); // the refused body ends in this chunk
      this.discard = 0;
      return rest;
    }
    if (at < 0) {
      this.discard -= Math.min(this.discard, chunk.length);
      return Buffer.alloc(0);
    }
    this.discard = 0;
    this.skipping = false;
    return chunk.subarray(at);
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
      const start = end + END_OF_HEADERS.length;
      if (n > MAX_FRAME_BYTES) {
        // Refused now, once; the body is skipped as it comes (what of it is here, then `discard` more).
        this.badFrame(`a frame of ${n} bytes, more than the ${MAX_FRAME_BYTES} this engine reads`, PARSE_ERROR);
        const next = this.nextHeader(start);
        const here = (next >= 0 ? next : this.buffer.length) - start;
        if (next >= 0 && here < n) {
          this.buffer = this.buffer.subarray(next);
          continue;
        }
        this.discard = Math.max(0, n - (this.buffer.length - start));
        this.buffer = this.buffer.subarray(Math.min(this.buffer.length, start + n));
        if (this.discard) return;
        continue;
      }
      // A header inside the body: the body was shorter than its Content-Length said.
      const next = this.nextHeader(start);
      if (next >= 0 && next < start + n) {
        this.badFrame(`a body of ${next - start} bytes where Content-Length said ${n}`, PARSE_ERROR);
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
      this.badFrame(`malformed JSON (${(err as Error).message})`, PARSE_ERROR);
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.badFrame(`a message that is not a JSON object (${body.slice(0, 40)})`, PARSE_ERROR);
      return;
    }
    const m = message as { id?: unknown; method?: unknown; params?: unknown };
    if ('id' in m && !(typeof m.id === 'string' || typeof m.id === 'number' || m.id === null)) {
      const kind = Array.isArray(m.id) ? 'an array' : typeof m.id === 'object' ? 'an object' : typeof m.id;
      this.badFrame(`a message whose id is ${kind}: an id is a string, a number or null`, {
        code: ErrorCodes.InvalidRequest,
        id: null,
      });
      return;
    }
    if (typeof m.method === 'string' && Array.isArray(m.params) && m.params.length > 0) {
      const why = byPosition(m.method);
      // A notification (no id) gets no reply: only the log hears of it.
      this.badFrame(why, { code: ErrorCodes.InvalidParams, id: (m.id as string | number | undefined) ?? null });
      return;
    }
    this.callback?.(message as Message);
  }

  /**
   * Where the next header starts at or after `from` (-1: none yet): `Content-Length: N` and a raw
   * CR LF, which valid JSON cannot hold after such text (strings escape control characters).
   */
  private nextHeader(from: number): number {
    return headerIn(this.buffer, from);
  }

  /** Drops what is before the next header, saying why; without one, drops what comes until one does. */
  private skip(why: string): void {
    this.badFrame(why, PARSE_ERROR);
    const next = this.nextHeader(1);
    this.buffer = next >= 0 ? this.buffer.subarray(next) : Buffer.alloc(0);
    if (next < 0) this.skipping = true;
  }

  private dropPartial(): void {
    const n = this.buffer.length + this.pendingBytes;
    if (!n) return;
    this.buffer = Buffer.alloc(0);
    this.pending = [];
    this.pendingBytes = 0;
    this.need = 0;
    this.badFrame(`an incomplete frame (${n} bytes, nothing more for ${PARTIAL_FRAME_MS / 1000} s)`, PARSE_ERROR);
  }
}

/**
 * Where a header starts in `buffer` at or after `from` (-1: none): `Content-Length: N` and a raw
 * CR LF, which valid JSON cannot hold after such text (strings escape control characters).
 */
function headerIn(buffer: Buffer, from: number): number {
  for (let at = buffer.indexOf(HEADER, from); at >= 0; at = buffer.indexOf(HEADER, at + 1)) {
    const line = buffer.subarray(at, at + 40).toString('latin1');
    if (/^Content-Length: *\d+ *\r\n/.test(line)) return at;
  }
  return -1;
}
