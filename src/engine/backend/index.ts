/**
 * Picks the tfjs backend, in this order: webgpu (Dawn, when a hardware GPU adapter is found) →
 * tensorflow (tfjs-node-gpu / tfjs-node, only if the user installed them) → wasm → cpu.
 * `--backend` or the environment variable ATTENTION_DEBUGGER_BACKEND forces one; a forced backend
 * that cannot load is an error.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { describeAdapter, probeGpu, whyNotAutoWebgpu } from './gpuProbe';
import { nativeBlasStatus, registerNativeKernels } from './wasm/native';
import { registerWasmFixes } from './wasm/wasmFixes';
import { registerWebgpuTrainingOps } from './webgpu';
import { noteAdapter } from './webgpu/errors';
import { countGpuAllocations } from './webgpu/allocations';
import { noteAdapterMemory } from './webgpu/memorySize';
import { POOL_ENV, watchBufferPool } from './webgpu/bufferPool';
import { gemmFromEnv } from './webgpu/gemmSwitch';

export const BACKENDS = ['webgpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKENDS)[number];

export const BACKEND_ENV = 'ATTENTION_DEBUGGER_BACKEND';

// Kept out of tsc's and esbuild's reach so that ESM-only packages (webgpu) load from CommonJS.
const importEsm = new Function('specifier', 'return import(specifier)') as (
  s: string,
) => Promise<Record<string, unknown>>;

const loaded = new Map<BackendName, string | null>(); // backend → null when registered, else why it failed

async function loadWebgpu(): Promise<void> {
  gemmFromEnv(); // ATTENTION_DEBUGGER_GEMM: a bad value fails webgpu's load, naming the variable
  const webgpu = (await importEsm('webgpu')) as {
    create(flags: string[]): { requestAdapter(): Promise<unknown> };
    globals: object;
  };
  Object.assign(globalThis, webgpu.globals);
  countGpuAllocations(webgpu.globals as Parameters<typeof countGpuAllocations>[0]); // before tfjs's first buffer
  const gpu = webgpu.create([]);
  const adapter = await gpu.requestAdapter();
  if (!adapter)
    throw new Error(
      'Dawn found no GPU adapter (no Vulkan/Metal/D3D12 device; for CPU-only machines install Mesa lavapipe ≥ 25 and set VK_ICD_FILENAMES)',
    );
  noteAdapter((adapter as { info?: Record<string, string> }).info ?? {});
  noteAdapterMemory((adapter as { info?: Parameters<typeof noteAdapterMemory>[0] }).info ?? {});
  Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  require('@tensorflow/tfjs-backend-webgpu');
  registerWebgpuTrainingOps();
}

/**
 * Runs `load` with tfjs's notices off (its production mode, which does nothing else), for what
 * repeats a registration another copy of tfjs made. tfjs-node brings its own @tensorflow/tfjs
 * (CommonJS): its tfjs-core sets the node platform again on the engine that all copies share
 * ("Platform node has already been set", on every run that tries the tensorflow backend), and its
 * cpu backend registers the cpu kernels that this bundle's cpu backend registers again. The two
 * copies cannot be made one: tfjs-node's backend is compiled to ES5 functions, which cannot extend
 * this bundle's classes (`Class constructor KernelBackend cannot be invoked without 'new'`).
 */
function withoutTfjsNotices<T>(load: () => T): T {
  const prod = tf.env().getBool('PROD');
  tf.env().set('PROD', true);
  try {
    return load();
  } finally {
    tf.env().set('PROD', prod);
  }
}

async function loadTensorflow(): Promise<void> {
  // Never a declared dependency: its install downloads libtensorflow. Use it when the user has it.
  const errors: string[] = [];
  for (const pkg of ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node']) {
    try {
      withoutTfjsNotices(() => require(pkg));
      return;
    } catch (err) {
      errors.push(`${pkg}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new Error(`neither tfjs-node-gpu nor tfjs-node is installed (${errors.join('; ')})`);
}

async function loadWasm(): Promise<void> {
  const wasm = require('@tensorflow/tfjs-backend-wasm') as typeof import('@tensorflow/tfjs-backend-wasm');
  const dir = require('node:path').join(
    require('node:path').dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')),
    'dist',
  );
  wasm.setWasmPaths(`${dir}/`);
  registerWasmFixes();
  registerNativeKernels(); // over the fixed kernels, which stay their fallbacks
}

async function loadCpu(): Promise<void> {
  // When tfjs-node's tfjs registered a cpu backend first, this bundle's kernels replace its kernels.
  if (tf.findBackendFactory('cpu')) withoutTfjsNotices(() => require('@tensorflow/tfjs-backend-cpu'));
  else require('@tensorflow/tfjs-backend-cpu');
}

const loaders: Record<BackendName, () => Promise<void>> = {
  webgpu: loadWebgpu,
  tensorflow: loadTensorflow,
  wasm: loadWasm,
  cpu: loadCpu,
};

/** Tries to make `name` the active backend; returns null on success, else the reason it failed. */
async function tryBackend(name: BackendName): Promise<string | null> {
  if (!loaded.has(name)) {
    try {
      await loaders[name]();
      loaded.set(name, null);
    } catch (err) {
      loaded.set(name, (err as Error).message);
    }
  }
  const why = loaded.get(name);
  if (why) return why;
  try {
    const ok = await tf.setBackend(name);
    await tf.ready();
    // tfjs's pool, trimmed after each step (bufferPool.ts); POOL_ENV=tfjs keeps tfjs's own (a bench's 'before').
    if (ok && name === 'webgpu' && process.env[POOL_ENV] !== 'tfjs') watchBufferPool(tf.backend() as never);
    return ok ? null : `tfjs could not initialise the ${name} backend`;
  } catch (err) {
    return (err as Error).message;
  }
}

export function parseBackend(value: string, source: string): BackendName {
  if ((BACKENDS as readonly string[]).includes(value)) return value as BackendName;
  throw new Error(`${source}: unknown backend "${value}" (expected one of ${BACKENDS.join(', ')})`);
}

/**
 * Makes a backend active and returns its name. With `requested` (or the environment variable) set,
 * that backend or an error; otherwise the first of BACKENDS that loads. `order` overrides the
 * automatic order (the CLI and tests use it to skip the slow software GPU path).
 */
export async function initBackend(requested?: string, order: readonly BackendName[] = BACKENDS): Promise<BackendName> {
  const forced = requested ?? process.env[BACKEND_ENV] ?? '';
  if (forced) {
    const name = parseBackend(forced, requested ? '--backend' : BACKEND_ENV);
    const why = await tryBackend(name);
    if (why) throw new Error(`backend "${name}" is not available: ${why}`);
    return name;
  }
  const reasons: string[] = [];
  for (const name of order) {
    const why = (name === 'webgpu' ? whyNotAutoWebgpu(probeGpu()) : null) ?? (await tryBackend(name));
    if (!why) return name;
    reasons.push(`${name}: ${why}`);
  }
  throw new Error(`no tfjs backend could be loaded (${reasons.join('; ')})`);
}

/**
 * Backends that load on this machine (tries each; leaves the active backend as it was). webgpu
 * counts when Dawn finds an adapter, asked apart (gpuProbe.ts) unless it is loaded already.
 */
export async function availableBackends(): Promise<BackendName[]> {
  const before = tf.engine().backendName as BackendName | null;
  const ok: BackendName[] = [];
  for (const name of BACKENDS) {
    const usable = name === 'webgpu' && !loaded.has('webgpu') ? probeGpu().adapter !== null : !(await tryBackend(name));
    if (usable) ok.push(name);
  }
  if (before) await tf.setBackend(before);
  return ok;
}

/** The GPU adapter Dawn finds (vendor, architecture, description), or why there is none. */
export function gpuAdapter(): string {
  return describeAdapter(probeGpu());
}

/** How the active backend multiplies matrices (wasm: through OpenBLAS and native kernels, or why not). */
export function matMulDetail(name: string = tf.getBackend()): string {
  if (name !== 'wasm') return `${name} kernels`;
  const status = nativeBlasStatus();
  return status.startsWith('lib')
    ? `OpenBLAS, and native kernels for sum, gather, loss, Adam and the training blocks (${status})`
    : `XNNPACK on wasm, 1 thread (native kernels ${status})`;
}

/** The active backend's name. */
export function currentBackend(): string {
  return tf.getBackend();
}
