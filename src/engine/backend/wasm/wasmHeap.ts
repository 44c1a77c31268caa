/**
 * What the wasm backend's heap holds at its highest: every tensor tfjs-backend-wasm allocates goes
 * through its module's `_malloc`, so the highest end of a block handed out is the heap a run needs
 * (freed blocks and the holes between them included). The heap's own size (its wasm memory) grows
 * in steps of up to 20% or 96 MiB past what is asked, and never shrinks: it is shown beside it.
 * The memory estimate (run/memory.ts) is checked against these (test/engine/memory-estimate.test.ts,
 * bench/memory.mjs).
 */
import * as tf from '@tensorflow/tfjs-core';

interface WasmModule {
  _malloc(bytes: number): number;
  _free(at: number): void;
  HEAPU8: Uint8Array;
}

const wasmModule = (): WasmModule => {
  const be = tf.backend() as unknown as { wasm?: WasmModule };
  if (tf.getBackend() !== 'wasm' || !be.wasm) throw new Error('the wasm backend is not the active backend');
  return be.wasm;
};

/** The wasm heap's size now: its memory, which only grows (so, after a run, its largest size). */
export const wasmHeapBytes = (): number => wasmModule().HEAPU8.length;

/**
 * Watches the active wasm backend's allocations from now until stop(): `highest()` is the highest
 * end of any block malloc has handed out meanwhile (or before, where a block is still in use there).
 */
export function watchWasmHeap(): { highest(): number; stop(): void } {
  const wasm = wasmModule();
  // Emscripten's first call of _malloc puts the module's own function in its place: made here first.
  wasm._free(wasm._malloc(1));
  const inner = wasm._malloc;
  let highest = 0;
  wasm._malloc = (bytes: number): number => {
    const at = inner(bytes);
    highest = Math.max(highest, (at >>> 0) + bytes);
    return at;
  };
  return {
    highest: () => highest,
    stop: () => {
      wasm._malloc = inner;
    },
  };
}
