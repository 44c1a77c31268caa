/**
 * Opt-in multithreaded wasm backend under Node (a prototype; see bench/README.md for its numbers).
 *
 * tfjs-backend-wasm 4.x ships `tfjs-backend-wasm-threaded-simd.wasm` (XNNPACK over a pthreadpool)
 * but never uses it under Node, for three reasons, each handled here:
 * 1. Its flag WASM_HAS_MULTITHREAD_SUPPORT answers false whenever IS_NODE (tfjs issue #3830). We
 *    set the flag to true, which makes `init()` pick the threaded factory and binary.
 * 2. Emscripten creates its pthread workers with `new Worker(locateFile('…worker.js'))`, and
 *    tfjs's locateFile answers with `URL.createObjectURL(new Blob([workerSource]))`: a blob: URL,
 *    which Node's worker_threads refuse (they take a file path, or an ES-module data: URL, and
 *    this worker is CommonJS: it calls require). We write the worker source to a file and make
 *    URL.createObjectURL answer that file's path for exactly that Blob (same type and size).
 * 3. Each worker then loads the main script from `mainScriptUrlOrBlob`, which tfjs sets to a Blob
 *    of the factory's source; the worker would import it through another blob: URL. Our worker
 *    file loads the factory from wasm-out/tfjs-backend-wasm-threaded-simd.js on disk instead (the
 *    same source; it defines the global WasmBackendModuleThreadedSimd the worker calls).
 * 4. The threads count goes to XNNPACK's pthreadpool through the package's own setThreadsCount,
 *    but its C side (backend.cc, init_with_threads_count) caps it at num_cores = logical CPUs / 2
 *    ("many x86-64 processors have 2 threads per core"), read once when the module starts from
 *    Emscripten's emscripten_num_logical_cores, which under Node is require('os').cpus().length.
 *    On a 2-CPU machine that cap is 1 thread. While the wasm backend's factory runs (and only
 *    then) we make os.cpus() list at least 2 × count entries, so the cap is count.
 * Emscripten also keeps a pool of 8 pre-spawned workers (its PTHREAD_POOL_SIZE), whatever the count.
 *
 * It loads tfjs-backend-wasm (whose import registers the flag and the backend) and points it at its
 * binaries, as backend/index.ts's loadWasm does; it must run before the wasm backend initialises
 * (tf.setBackend('wasm'), or any tensor op while no backend is active).
 */
import * as tf from '@tensorflow/tfjs-core';
import { createHash } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os, { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Threads for the wasm backend: unset or 0 leaves it single-threaded (tfjs's Node default). */
export const WASM_THREADS_ENV = 'ATTENTION_DEBUGGER_WASM_THREADS';

const WORKER = 'tfjs-backend-wasm-threaded-simd.worker.js';
const FACTORY = 'tfjs-backend-wasm-threaded-simd.js';
// How the worker loads the main script: by URL string, or from a Blob through a blob: URL.
const LOAD_MAIN = 'if(typeof e.data.urlOrBlob=="string"){importScripts(e.data.urlOrBlob)}else{var objectUrl=URL.createObjectURL(e.data.urlOrBlob);importScripts(objectUrl);URL.revokeObjectURL(objectUrl)}';
// A module with a shared memory and an atomic instruction (wasm-feature-detect's threads test).
const THREADS_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 5, 4, 1, 3, 1, 1, 10, 11, 1, 9, 0, 65, 0, 254, 16, 2, 0, 26, 11]);

let enabled: { count: number; workerPath: string } | null = null;

/** The parts of Emscripten's PThread object (library_pthread.js) and Node's Worker we touch. */
interface NodeWorker {
  ref?(): unknown;
  unref?(): unknown;
}
interface PThreadPool {
  runningWorkers: NodeWorker[];
  unusedWorkers: NodeWorker[];
  allocateUnusedWorker(): void;
}

/** The worker file for this package's worker source (written once per content, atomically). */
function writeWorker(source: string, factoryPath: string): string {
  if (!source.includes(LOAD_MAIN)) throw new Error(`${WORKER}: unexpected worker source (this tfjs-backend-wasm version is not supported by enableWasmThreads)`);
  const code = source.replace(LOAD_MAIN, `importScripts(${JSON.stringify(factoryPath)});`);
  const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
  const path = join(tmpdir(), `attention-debugger-wasm-${hash}.worker.cjs`); // .cjs: the worker uses require
  if (!existsSync(path)) {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, path);
  }
  return path;
}

/** Re-registers the wasm backend's factory so that, while it runs, os.cpus() lists ≥ 2·count CPUs. */
function liftCoreCap(count: number): void {
  const factory = tf.findBackendFactory('wasm');
  if (!factory) throw new Error('enableWasmThreads: the wasm backend is not registered (load @tensorflow/tfjs-backend-wasm first)');
  if (tf.findBackend('wasm')) throw new Error('enableWasmThreads: the wasm backend is already initialised');
  const priority = (tf.engine().registryFactory as Record<string, { priority: number }>)['wasm']?.priority ?? 2;
  tf.removeBackend('wasm');
  tf.registerBackend('wasm', async () => {
    const cpus = os.cpus;
    const real = cpus();
    os.cpus = () => (real.length >= 2 * count ? real : Array.from({ length: 2 * count }, (_, i) => real[i % real.length]!));
    let backend: tf.KernelBackend | { success: boolean };
    try {
      backend = await factory();
    } finally {
      os.cpus = cpus;
    }
    // XNNPACK's pool threads live as long as the process; Emscripten ref()s a worker while it runs
    // a thread, which keeps Node from exiting when the program is done. Unref every worker, now
    // and when Emscripten allocates more, and make their ref() a no-op.
    const pthread = (backend as { wasm?: { PThread?: PThreadPool } }).wasm?.PThread;
    if (pthread) {
      const detach = (w: NodeWorker): void => {
        w.unref?.();
        w.ref = () => w;
      };
      for (const w of [...pthread.runningWorkers, ...pthread.unusedWorkers]) detach(w);
      const allocate = pthread.allocateUnusedWorker.bind(pthread);
      pthread.allocateUnusedWorker = () => {
        allocate();
        detach(pthread.unusedWorkers[pthread.unusedWorkers.length - 1]!);
      };
    }
    return backend;
  }, priority);
}

/**
 * Makes the wasm backend run XNNPACK with `count` threads (the main thread included). Returns
 * false, changing nothing, where this Node has no wasm threads or SharedArrayBuffer.
 */
export function enableWasmThreads(count: number): boolean {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`wasm threads: expected a positive integer, got ${count}`);
  if (enabled) {
    if (enabled.count !== count) throw new Error(`wasm threads already enabled with ${enabled.count} threads`);
    return true;
  }
  if (typeof SharedArrayBuffer !== 'function' || !(globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly.validate(THREADS_PROBE)) return false;
  const pkg = require.resolve('@tensorflow/tfjs-backend-wasm/package.json');
  const wasm = require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(`${join(dirname(pkg), 'dist')}/`);
  const wasmOut = join(dirname(pkg), 'wasm-out');
  const { wasmWorkerContents } = createRequire(pkg)(join(wasmOut, WORKER)) as { wasmWorkerContents: string };
  // The template literal turned the source's "\n" escapes into newlines; tfjs escapes them back
  // before making its Blob (whose size identifies it below), and so do we.
  const source = wasmWorkerContents.replace(/\n/g, '\\n');
  const workerPath = writeWorker(source, join(wasmOut, FACTORY));
  const workerBlobSize = Buffer.byteLength(source);
  const createObjectURL = URL.createObjectURL.bind(URL);
  URL.createObjectURL = (obj: Blob): string => (obj instanceof Blob && obj.type === 'application/javascript' && obj.size === workerBlobSize ? workerPath : createObjectURL(obj));
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
  wasm.setThreadsCount(count);
  liftCoreCap(count);
  enabled = { count, workerPath };
  return true;
}

/** enableWasmThreads(ATTENTION_DEBUGGER_WASM_THREADS) when the variable is set and not 0. */
export function enableWasmThreadsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WASM_THREADS_ENV]?.trim();
  if (!raw || raw === '0') return 1;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1) throw new Error(`${WASM_THREADS_ENV}: expected a positive integer, got "${raw}"`);
  return enableWasmThreads(count) ? count : 1;
}

/** The threads XNNPACK actually uses, once the wasm backend is initialised (1 before). */
export function wasmThreadsInUse(): number {
  try {
    return (require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm')).getThreadsCount();
  } catch {
    return 1;
  }
}
