/** The handlers and notifications of src/protocol/methods.ts over vscode-jsonrpc, validated on both ends. */
import { ErrorCodes, type MessageConnection, ResponseError } from 'vscode-jsonrpc/node';
import { type NotificationDef, type RequestDef, validate } from '../../protocol/rpc';
import { GpuError, gpuAdvice, guardGpu } from '../backend/webgpu/errors';
import { byPosition } from './framing';

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function handle<P, R>(conn: MessageConnection, def: RequestDef<P, R>, handler: (params: P) => Promise<R>): void {
  // vscode-jsonrpc calls a handler with (token) when there are no params, (params, token) when they
  // come by name and (...params, token) by position; this protocol sends none or one object.
  conn.onRequest(def.method, async (...args: unknown[]) => {
    if (args.length > 2) throw new ResponseError(ErrorCodes.InvalidParams, byPosition(def.method));
    const params = args.length === 2 ? args[0] : undefined;
    const badParams = validate(def.checkParams, params, def.method, 'params');
    if (badParams) throw new ResponseError(ErrorCodes.InvalidParams, badParams);
    let result: R;
    try {
      // On webgpu, a Dawn error during the request fails it (backend/webgpu/errors.ts) instead of
      // answering from invalid buffers; the engine goes on answering.
      result = await guardGpu(def.method, () => handler(params as P));
    } catch (err) {
      // The user reads this message: send it as it is (vscode-jsonrpc would prefix "Request … failed
      // with message:"), keeping a ResponseError's own code and data.
      if (err instanceof ResponseError) throw err;
      const message = err instanceof GpuError ? `${err.message}. ${gpuAdvice(err)}` : errorMessage(err);
      if (heapCorrupted(err)) {
        // Every later kernel would fail the same way: answer, then exit for the client to restart a clean engine.
        process.stderr.write(`[engine] the WebAssembly heap is corrupted (${message}); exiting to be restarted\n`);
        setTimeout(() => process.exit(HEAP_CORRUPTED_EXIT), 100);
        throw new ResponseError(
          ErrorCodes.InternalError,
          `${message}: the engine's WebAssembly memory is corrupted; it restarts (a run in progress resumes from its checkpoint)`,
        );
      }
      throw new ResponseError(ErrorCodes.InternalError, message);
    }
    const badResult = validate(def.checkResult, result, def.method, 'result');
    if (badResult) throw new ResponseError(ErrorCodes.InternalError, `engine bug: ${badResult}`);
    return result;
  });
}

/** WebAssembly.RuntimeError (the lib this project compiles against does not declare WebAssembly). */
const WASM_TRAP = (globalThis as unknown as { WebAssembly: { RuntimeError: new () => Error } }).WebAssembly
  .RuntimeError;

/** The engine's exit code when its WebAssembly heap is corrupted (EX_SOFTWARE): the client restarts it. */
export const HEAP_CORRUPTED_EXIT = 70;

/**
 * Whether an error means the WebAssembly heap can no longer be trusted: a trap of the wasm backend
 * (out-of-bounds access, an abort of Emscripten's runtime). After one, every later request failed
 * until a restart (a decode with beam 100,000 did it once).
 */
export function heapCorrupted(err: unknown): boolean {
  if (err instanceof WASM_TRAP) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /memory access out of bounds|^Aborted\(|table index is out of bounds|unreachable executed/.test(message);
}

export function notify<P>(conn: MessageConnection, def: NotificationDef<P>, params: P): void {
  try {
    void conn.sendNotification(def.method, params).catch(() => undefined);
  } catch {
    // The client is gone (the connection throws once closed); nobody is left to tell.
  }
}
