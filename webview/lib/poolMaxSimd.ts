/**
 * poolMax (attention.ts) on WebAssembly SIMD (poolMax.wat, compiled into poolMaxWasm.ts): the same
 * cells, bit for bit, about three times faster than the scalar loop (bench/README.md, issue 34). The
 * map is copied into the module's memory (a 512 × 512 map: 1 MiB, ~0.1 ms) and pooled there; the
 * cells are returned in place, a view of that memory which the next call overwrites (copying them
 * out cost a third of the time: ~20 of 60 ms for 144 maps of 512 × 512 in Chromium). Null where the page cannot compile the module (no WebAssembly, or a Content
 * Security Policy without 'wasm-unsafe-eval') or the map passes MAX_BYTES: the caller then pools in
 * JavaScript.
 */
import { POOL_MAX_WASM } from './poolMaxWasm';

/** The module's memory never shrinks: maps past this (a 4,096² map) are pooled in JavaScript. */
const MAX_BYTES = 64 * 1024 * 1024;
const PAGE = 65536;

interface Module {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  poolMax: (...offsetsAndSizes: number[]) => void;
}

/** The part of the WebAssembly API used here (typed locally: Node's types, which the tests use, lack it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

let module: Module | null | undefined; // undefined: not tried yet; null: cannot compile here

function compiled(): Module | null {
  if (module !== undefined) return module;
  try {
    const bytes = Uint8Array.from(atob(POOL_MAX_WASM), (c) => c.charCodeAt(0));
    const wasm = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
    if (!wasm) return (module = null);
    const { exports } = new wasm.Instance(new wasm.Module(bytes), {});
    module = exports as unknown as Module;
  } catch {
    module = null;
  }
  return module;
}

/** Whether poolMax runs on WebAssembly here (the Chromium tests ask under the panels' own CSP). */
export const poolsWithSimd = (): boolean => compiled() !== null;

const align16 = (bytes: number): number => (bytes + 15) & ~15;

export function poolMaxSimd(
  src: ArrayLike<number>,
  rows: number,
  cols: number,
  outRows: number,
  outCols: number,
): Float32Array | null {
  const acc = align16(rows * cols * 4); // [cols]: a row block's column maxima
  const out = align16(acc + cols * 4); // [outRows, outCols]
  const end = out + outRows * outCols * 4;
  const m = end <= MAX_BYTES ? compiled() : null;
  if (!m) return null;
  if (m.memory.buffer.byteLength < end) m.memory.grow(Math.ceil((end - m.memory.buffer.byteLength) / PAGE));
  new Float32Array(m.memory.buffer, 0, rows * cols).set(src);
  m.poolMax(0, rows, cols, outRows, outCols, acc, out);
  return new Float32Array(m.memory.buffer, out, outRows * outCols);
}
