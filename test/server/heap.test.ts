/** Which errors mean the WebAssembly heap is corrupted (the engine then exits to be restarted). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heapCorrupted } from '../../src/engine/server/rpc';

/** The part of the WebAssembly API used here (the lib this project compiles against does not declare it). */
interface WasmApi {
  instantiate(bytes: Uint8Array): Promise<{ instance: { exports: Record<string, unknown> } }>;
  RuntimeError: new () => Error;
}

test('wasm traps and Emscripten aborts corrupt the heap; ordinary errors do not', async () => {
  // A real trap: a module whose only function executes `unreachable` (bytes worked from the wasm spec).
  const bytes = new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // magic, version 1
    0x01,
    0x04,
    0x01,
    0x60,
    0x00,
    0x00, // type section: () -> ()
    0x03,
    0x02,
    0x01,
    0x00, // function section: one function of type 0
    0x07,
    0x05,
    0x01,
    0x01,
    0x66,
    0x00,
    0x00, // export "f" = function 0
    0x0a,
    0x05,
    0x01,
    0x03,
    0x00,
    0x00,
    0x0b, // code: unreachable, end
  ]);
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const { instance } = await wasm.instantiate(bytes);
  let trap: unknown;
  try {
    (instance.exports['f'] as () => void)();
  } catch (err) {
    trap = err;
  }
  assert.ok(trap instanceof wasm.RuntimeError, 'the module traps');
  assert.equal(heapCorrupted(trap), true);
  assert.equal(heapCorrupted(new Error('Aborted(). Build with -sASSERTIONS for more info.')), true);
  assert.equal(heapCorrupted(new RangeError('memory access out of bounds')), true);
  assert.equal(heapCorrupted(new Error('vocab.json: not found')), false);
  assert.equal(heapCorrupted(new Error('the source sentence is empty')), false);
});
