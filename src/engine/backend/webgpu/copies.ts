/**
 * Tensors laid end to end in one vector (FLAT_GATHER) and such a vector cut back into new tensors
 * (FLAT_SCATTER) on webgpu, by the command encoder's buffer copies rather than by dispatches: the
 * flat Adam (train/flatAdam.ts) gathers every parameter and gradient and scatters the new parameters
 * each step, a copy command each, where tfjs's concat and slice would take a dispatch each. The copies
 * go into tfjs's own command encoder between its compute passes, so they run in order with its
 * programs; the tensors they read or write are marked as the queue's until it is submitted, as tfjs
 * marks a program's, so that one disposed meanwhile keeps its buffer until then.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { FLAT_GATHER, FLAT_SCATTER } from '../fusedKernels';
import { addKernel, product, type KernelFunc } from '../kernels';
import type { WebgpuBackend } from './program';

/** A GPUBuffer (Dawn's class, a global once backend/index.ts has loaded it). */
interface GpuBuffer {
  readonly size: number;
}
const isGpuBuffer = (x: unknown): x is GpuBuffer =>
  x instanceof (globalThis as unknown as { GPUBuffer: new () => GpuBuffer }).GPUBuffer;

/** What the copies use of tfjs-backend-webgpu's WebGPUBackend (dist/backend_webgpu.d.ts). */
type CopyingBackend = WebgpuBackend & {
  tensorMap: { get(dataId: tf.DataId): { resource?: unknown } | undefined };
  uploadToGPU(dataId: tf.DataId): void;
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  commandEncoder: {
    copyBufferToBuffer(src: GpuBuffer, srcOffset: number, dst: GpuBuffer, dstOffset: number, size: number): void;
  };
  commandQueueOwnedIds: WeakSet<tf.DataId>;
};

/** The GPU buffer of t (uploaded first if its values are still on the CPU), owned by the queue. */
function bufferOf(backend: CopyingBackend, t: tf.TensorInfo): GpuBuffer {
  backend.uploadToGPU(t.dataId);
  const resource = backend.tensorMap.get(t.dataId)?.resource;
  if (!isGpuBuffer(resource)) throw new Error('a flat copy reads and writes GPU buffers only');
  backend.commandQueueOwnedIds.add(t.dataId);
  return resource;
}

const float32 = (name: string, x: tf.TensorInfo): void => {
  if (x.dtype !== 'float32') throw new TypeError(`${name} copies float32 tensors, not ${x.dtype}`);
};

/** Copies `values` float32s from src at element `from` to dst at element `to`. */
function copy(backend: CopyingBackend, src: GpuBuffer, from: number, dst: GpuBuffer, to: number, values: number) {
  if (values > 0) backend.commandEncoder.copyBufferToBuffer(src, 4 * from, dst, 4 * to, 4 * values);
}

/** Copy commands go between compute passes: ends tfjs's open pass (its next program opens another). */
function beginCopies(backend: CopyingBackend): void {
  backend.ensureCommandEncoderReady();
  backend.endComputePassEncoder();
}

/**
 * Indices of `sizes` cut in order into runs of at most `most` values in all (a size larger than that
 * alone in its run): what one buffer binding holds of tensors laid end to end.
 */
export function runsWithin(sizes: readonly number[], most: number): number[][] {
  const runs: number[][] = [];
  let n = 0;
  sizes.forEach((size, i) => {
    if (runs.length === 0 || (n > 0 && n + size > most)) {
      runs.push([]);
      n = 0;
    }
    runs.at(-1)!.push(i);
    n += size;
  });
  return runs;
}

/** xs (float32, any shapes) → one new vector [Σ sizes], in their order, by copy commands. */
export function gatherFlat(be: WebgpuBackend, xs: tf.TensorInfo[]): tf.TensorInfo {
  const backend = be as CopyingBackend;
  xs.forEach((x) => float32(FLAT_GATHER, x));
  const sizes = xs.map((x) => product(x.shape));
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total === 0) return backend.makeTensorInfo([0], 'float32', new Float32Array(0));
  const out = backend.makeTensorInfo([total], 'float32');
  const dst = bufferOf(backend, out);
  beginCopies(backend);
  let at = 0;
  xs.forEach((x, i) => {
    if (sizes[i]! > 0) copy(backend, bufferOf(backend, x), 0, dst, at, sizes[i]!);
    at += sizes[i]!;
  });
  return out;
}

/** The inputs in any number (a map or an array) → one float32 vector [Σ sizes], in their order. */
const flatGatherKernel: KernelFunc = ({ inputs, backend }) =>
  gatherFlat(backend as WebgpuBackend, Object.values(inputs) as tf.TensorInfo[]);

/** x (float32, at least Σ sizes values) → new vectors [sizes[0]], [sizes[1]], … cut from its start. */
const flatScatterKernel: KernelFunc = ({ inputs, backend: be, attrs }) => {
  const backend = be as CopyingBackend;
  const { x } = inputs as { x: tf.TensorInfo };
  const sizes = (attrs as { sizes: number[] }).sizes;
  float32(FLAT_SCATTER, x);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total > product(x.shape))
    throw new RangeError(`${FLAT_SCATTER}: the pieces take ${total} values, the vector has ${product(x.shape)}`);
  const outs = sizes.map((n) => backend.makeTensorInfo([n], 'float32', n === 0 ? new Float32Array(0) : undefined));
  if (total === 0) return outs;
  const src = bufferOf(backend, x);
  const dsts = outs.map((o, i) => (sizes[i]! > 0 ? bufferOf(backend, o) : undefined));
  beginCopies(backend);
  let at = 0;
  outs.forEach((_, i) => {
    if (dsts[i]) copy(backend, src, at, dsts[i]!, 0, sizes[i]!);
    at += sizes[i]!;
  });
  return outs;
};

/** Idempotent; after tfjs-backend-webgpu is loaded. */
export function registerWebgpuCopies(): void {
  addKernel(FLAT_GATHER, 'webgpu', flatGatherKernel);
  addKernel(FLAT_SCATTER, 'webgpu', flatScatterKernel);
}
