/**
 * The native addon (native/*.c, built to dist/native/blas.node): BatchMatMul on the wasm backend
 * through OpenBLAS, the kernels of nativeOps.ts, the decoding kernels of inferenceKernels.ts and the
 * training kernels of trainingKernels.ts.
 * wasm keeps every tensor in its heap; the kernel hands OpenBLAS views of that heap, so nothing is
 * copied, and transposes become BLAS flags instead of copies.
 * Used when the addon loads; ATTENTION_DEBUGGER_NATIVE=0 turns it off (the plain wasm path,
 * with the transpose wrapper of wasmFixes.ts, is then what runs).
 */
import type * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type KernelFunc, overrideKernel, product, type WasmBackend } from '../kernels';
import { type InferenceAddon, registerInferenceKernels } from './inferenceKernels';
import { type OpsAddon, registerNativeOps } from './nativeOps';
import { registerTrainingKernels, type TrainingAddon } from './trainingKernels';

export const NATIVE_ENV = 'ATTENTION_DEBUGGER_NATIVE';
/**
 * OpenBLAS threads (default: one per CPU). Measured on 2 CPUs: 2 threads make the issue-config step
 * ~18% faster on an idle machine, but with one CPU busy elsewhere 1 thread is ~35% faster (a
 * product split in two waits for its slower half).
 */
export const BLAS_THREADS_ENV = 'ATTENTION_DEBUGGER_BLAS_THREADS';

interface BlasAddon extends OpsAddon, InferenceAddon, TrainingAddon {
  matmul(
    a: Float32Array,
    b: Float32Array,
    c: Float32Array,
    batch: number,
    m: number,
    n: number,
    k: number,
    transA: boolean,
    transB: boolean,
    strideA: number,
    strideB: number,
  ): void;
  info(): { library: string; config: string; threads: number };
  setThreads(n: number): void;
}

let addon: BlasAddon | null = null;
let status = 'not loaded';

/** dist/native/blas.node, found from the running bundle (dist/, out/test/…) upwards. */
function addonPath(): string | undefined {
  for (let dir = __dirname, i = 0; i < 6; dir = dirname(dir), i++) {
    for (const p of [join(dir, 'native', 'blas.node'), join(dir, 'dist', 'native', 'blas.node')])
      if (existsSync(p)) return p;
  }
  return undefined;
}

function loadAddon(): BlasAddon | null {
  if (addon) return addon;
  const off = process.env[NATIVE_ENV];
  if (off === '0' || off === 'off' || off === 'false') {
    status = `off (${NATIVE_ENV}=${off})`;
    return null;
  }
  const file = addonPath();
  if (!file) {
    // A source checkout can build it; an installed extension for a platform without a prebuilt addon cannot.
    status = sourceCheckout()
      ? 'not built (node scripts/build-native.mjs)'
      : `not included for ${process.platform}-${process.arch}: plain wasm (same results, slower)`;
    return null;
  }
  try {
    const m = { exports: {} as BlasAddon };
    process.dlopen(m, file);
    addon = m.exports;
    const threads = process.env[BLAS_THREADS_ENV];
    if (threads) {
      const n = Number(threads);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`${BLAS_THREADS_ENV} must be a positive integer, got "${threads}"`);
      addon.setThreads(n);
    }
    const i = addon.info();
    status = `${i.library}, ${i.threads} thread${i.threads === 1 ? '' : 's'} (${i.config})`;
  } catch (err) {
    addon = null;
    status =
      (err as { code?: string }).code === OPENBLAS_NOT_FOUND
        ? `off: ${(err as Error).message}, so plain wasm (same results, slower). ${OPENBLAS_FIX}`
        : `failed to load: ${(err as Error).message}`;
  }
  return addon;
}

/** The error code native/blas.c throws when dlopen finds no OpenBLAS. */
const OPENBLAS_NOT_FOUND = 'OPENBLAS_NOT_FOUND';
/** What to do about it (Debian and Ubuntu; the package's name elsewhere is close). */
export const OPENBLAS_FIX = 'To train faster, install OpenBLAS: sudo apt-get install libopenblas0-pthread';

/** Whether native/blas.c lies beside the running bundle, as in the repository (not in an installed extension). */
function sourceCheckout(): boolean {
  for (let dir = __dirname, i = 0; i < 6; dir = dirname(dir), i++)
    if (existsSync(join(dir, 'native', 'blas.c'))) return true;
  return false;
}

/** OpenBLAS's thread count from now on (benchmarks pick each side's best); false without the addon. */
export function setBlasThreads(n: number): boolean {
  loadAddon()?.setThreads(n);
  return addon !== null;
}

/** How matMul runs on wasm: OpenBLAS and its configuration, or why not. */
export function nativeBlasStatus(): string {
  return status;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** BatchMatMul: a [...batchA, m, k] (or [..., k, m] when transposeA), b [...batchB, k, n] (or [..., n, k]) → [...batch, m, n] */
function nativeBatchMatMul(blas: BlasAddon, fallback: KernelFunc): KernelFunc {
  return (args) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
    if (a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2)
      return fallback(args);
    const ra = a.shape.length;
    const rb = b.shape.length;
    const [m, k] = transposeA ? [a.shape[ra - 1], a.shape[ra - 2]] : [a.shape[ra - 2], a.shape[ra - 1]];
    const [kb, n] = transposeB ? [b.shape[rb - 1], b.shape[rb - 2]] : [b.shape[rb - 2], b.shape[rb - 1]];
    if (k !== kb) return fallback(args); // tfjs's kernel throws its own message
    const outerA = a.shape.slice(0, -2);
    const outerB = b.shape.slice(0, -2);
    const batchA = product(outerA);
    const batchB = product(outerB);
    // One of the two is a single matrix (broadcast), or both have the same batch shape; other
    // broadcasts go to tfjs.
    let outer: number[];
    if (batchA === 1 && outerA.length <= outerB.length) outer = outerB;
    else if (batchB === 1 && outerB.length <= outerA.length) outer = outerA;
    else if (sameShape(outerA, outerB)) outer = outerA;
    else return fallback(args);
    const backend = args.backend as WasmBackend;
    const out = backend.makeOutput([...outer, m, n], 'float32');
    // Views after makeOutput: allocating may grow (and so detach) the wasm heap.
    const c = backend.typedArrayFromHeap(out) as Float32Array;
    const av = backend.typedArrayFromHeap(a) as Float32Array;
    const bv = backend.typedArrayFromHeap(b) as Float32Array;
    blas.matmul(
      av,
      bv,
      c,
      product(outer),
      m,
      n,
      k,
      transposeA,
      transposeB,
      batchA === 1 ? 0 : m * k,
      batchB === 1 ? 0 : k * n,
    );
    return out;
  };
}

/**
 * Registers the OpenBLAS BatchMatMul and the kernels of nativeOps.ts for wasm if the addon loads;
 * returns whether it did. Idempotent.
 */
export function registerNativeKernels(): boolean {
  const blas = loadAddon();
  if (!blas) return false;
  registerNativeOps(blas);
  registerInferenceKernels(blas);
  registerTrainingKernels(blas);
  overrideKernel('BatchMatMul', 'wasm', 'native', (fallback) => nativeBatchMatMul(blas, fallback));
  return true;
}
