/**
 * GPU memory counted the way the adapter allocates it (issue 28): every buffer a device creates is
 * added at its size, and taken off when it is destroyed. tfjs's buffer pool is included: a buffer
 * it keeps on its free lists is still allocated on the GPU, although tfjs's own `numBytesUsed` no
 * longer counts it. This is what the memory estimate (run/gpuMemory.ts) is checked against
 * (test/engine/webgpu-memory.test.ts, bench/gpu-memory.mjs).
 *
 * The count is kept from the moment the webgpu package is loaded (backend/index.ts installs it on
 * GPUDevice's and GPUBuffer's prototypes, before tfjs creates its device), so the weights and every
 * buffer after them are in it. Textures are not counted: the engine creates none.
 */
import * as tf from '@tensorflow/tfjs-core';

/** The part of the webgpu package's globals counted here. */
interface WebgpuClasses {
  GPUDevice: { prototype: { createBuffer(d: { size: number }): GpuBuffer } };
  GPUBuffer: { prototype: { destroy(): void } };
}
interface GpuBuffer {
  readonly size: number;
  destroy(): void;
}
interface DeviceLike {
  readonly limits?: { maxBufferSize: number };
}

/** One device's buffers: bytes allocated now, the most at any time since the peak was last reset, and how many. */
export interface GpuAllocations {
  current: number;
  peak: number;
  buffers: number;
  /** Buffers created since the count began (a step that creates none reuses tfjs's pool). */
  created: number;
}

const counts = new WeakMap<object, GpuAllocations>();
const owners = new WeakMap<object, { count: GpuAllocations; size: number }>();
let installed = false;

function countOf(device: object): GpuAllocations {
  let c = counts.get(device);
  if (!c) counts.set(device, (c = { current: 0, peak: 0, buffers: 0, created: 0 }));
  return c;
}

/** Counts every buffer created and destroyed from now on (once; later calls do nothing). */
export function countGpuAllocations(classes: WebgpuClasses): void {
  if (installed) return;
  installed = true;
  const device = classes.GPUDevice.prototype;
  const buffer = classes.GPUBuffer.prototype;
  const create = device.createBuffer;
  const destroy = buffer.destroy;
  device.createBuffer = function (this: DeviceLike, descriptor: { size: number }): GpuBuffer {
    const made = create.call(this, descriptor);
    // A buffer past the device's limit is an error buffer (a validation error): it holds no memory.
    const limit = this.limits?.maxBufferSize ?? Infinity;
    if (descriptor.size <= limit) {
      const count = countOf(this);
      count.current += made.size;
      count.buffers++;
      count.created++;
      count.peak = Math.max(count.peak, count.current);
      owners.set(made, { count, size: made.size });
    }
    return made;
  };
  buffer.destroy = function (this: GpuBuffer): void {
    const owner = owners.get(this);
    if (owner) {
      owners.delete(this);
      owner.count.current -= owner.size;
      owner.count.buffers--;
    }
    destroy.call(this);
  };
}

/** The device's buffers now and at their peak; undefined when the count is not installed. */
export function allocationsOf(device: object): GpuAllocations | undefined {
  return installed ? { ...countOf(device) } : undefined;
}

/** Starts the device's peak again from what is allocated now (a bench or test measuring one step). */
export function resetAllocationPeak(device: object): void {
  const c = countOf(device);
  c.peak = c.current;
}

/** The active webgpu backend's device, or undefined off webgpu. */
function activeDevice(): object | undefined {
  if (tf.getBackend() !== 'webgpu') return undefined;
  return (tf.backend() as unknown as { device: object }).device;
}

/** The active webgpu device's buffers now and at their peak; undefined off webgpu. */
export function gpuAllocations(): GpuAllocations | undefined {
  const device = activeDevice();
  return device && allocationsOf(device);
}

/** Starts the active webgpu device's peak again from what is allocated now. */
export function resetGpuAllocationPeak(): void {
  const device = activeDevice();
  if (device) resetAllocationPeak(device);
}
