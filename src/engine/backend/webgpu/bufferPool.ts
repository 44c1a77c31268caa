/**
 * tfjs's pool of GPU buffers, trimmed to what a step uses (issue 28). tfjs-backend-webgpu's
 * BufferManager keeps every buffer a tensor freed, on a free list of its exact size and usage, for
 * a later tensor of that size, and destroys none until the backend is disposed. Where sizes change
 * from step to step (each batch has its own shape: [B, T] and the [B·T, V] logits), the pool keeps
 * the buffers of every shape it has ever seen, and grows step after step.
 *
 * Trimmed here: trimBufferPool(), at the end of each training step, destroys the free buffers that
 * no request took during that step (they were free before it began and still are). A step whose
 * sizes repeat the previous step's finds all its buffers on their free lists as before and creates
 * none; a buffer of a shape no longer asked for is given back one step later. (Destroying free
 * buffers whenever a request misses its free list, tried first, made the pool no larger than the
 * bytes in use, 3 to 10% below tfjs's, but created some 800 buffers a step on a tiny model, each
 * cleared by Dawn before its first use: slower, for little.) Free buffers were submitted with
 * their last work (tfjs releases a buffer only once the command using it is submitted), and
 * destroying one waits for that work (WebGPU).
 */
import * as tf from '@tensorflow/tfjs-core';

interface Buffer {
  readonly size: number;
  readonly usage: number;
  destroy(): void;
}
/** tfjs-backend-webgpu 4.x's BufferManager, the parts used here. */
interface BufferManager {
  freeBuffers: Map<string, Buffer[]>;
  numFreeBuffers: number;
  numBytesAllocated: number;
  acquireBuffer(size: number, usage: number, mappedAtCreation?: boolean, reuse?: boolean): Buffer;
  releaseBuffer(buffer: Buffer, reuse?: boolean): void;
}

/** Set to `tfjs` to leave tfjs's pool as tfjs keeps it, untrimmed (bench/gpu-memory.mjs measures both). */
export const POOL_ENV = 'ATTENTION_DEBUGGER_GPU_POOL';

interface Trim {
  /** Free buffers, with the trim count when each was freed. */
  free: Map<Buffer, number>;
  trims: number;
  pool: BufferManager;
}
const trims = new WeakMap<object, Trim>();

/** Starts watching the backend's buffer pool (once per buffer manager; a backend without one is left alone). */
export function watchBufferPool(backend: { bufferManager?: BufferManager }): void {
  const pool = backend.bufferManager;
  if (!pool || trims.has(pool) || !(pool.freeBuffers instanceof Map)) return;
  const trim: Trim = { free: new Map(), trims: 0, pool };
  trims.set(backend, trim);
  trims.set(pool, trim);
  const acquire = pool.acquireBuffer.bind(pool);
  const release = pool.releaseBuffer.bind(pool);
  pool.acquireBuffer = (size, usage, mappedAtCreation = false, reuse = true) => {
    const buffer = acquire(size, usage, mappedAtCreation, reuse);
    trim.free.delete(buffer);
    return buffer;
  };
  pool.releaseBuffer = (buffer, reuse = true) => {
    release(buffer, reuse);
    const list = pool.freeBuffers.get(key(buffer.size, buffer.usage));
    if (reuse && list && list[list.length - 1] === buffer) trim.free.set(buffer, trim.trims);
  };
}

const key = (size: number, usage: number) => `${size}_${usage}`; // BufferManager's getBufferKey

/**
 * Destroys the free buffers of the backend's pool that no request took since the last trim; the
 * bytes given back. Off a watched pool, nothing.
 */
export function trimBufferPool(backend: object): number {
  const trim = trims.get(backend);
  if (!trim) return 0;
  const { pool, free } = trim;
  let given = 0;
  for (const [buffer, since] of free) {
    if (since >= trim.trims) continue; // freed during this step
    free.delete(buffer);
    const list = pool.freeBuffers.get(key(buffer.size, buffer.usage));
    const at = list ? list.indexOf(buffer) : -1;
    if (at < 0) continue;
    list!.splice(at, 1);
    pool.numFreeBuffers--;
    pool.numBytesAllocated -= buffer.size;
    buffer.destroy();
    given += buffer.size;
  }
  trim.trims++;
  return given;
}

/** trimBufferPool on the active webgpu backend, after a training step (train/step.ts); off webgpu nothing. */
export function trimGpuPool(): number {
  return tf.getBackend() === 'webgpu' ? trimBufferPool(tf.backend()) : 0;
}
