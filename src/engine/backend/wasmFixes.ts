/**
 * Fixes for three defects of tfjs-backend-wasm 4.x, applied at the kernel level so that every
 * caller benefits, autodiff's generated gradients included:
 * 1. It has no `UnsortedSegmentSum` kernel, and the gradient of `gather` (embedding lookup) is an
 *    unsorted segment sum: without a kernel the embedding cannot be trained. We register one.
 * 2. `BatchMatMul` with transposeA/transposeB leaves XNNPACK's fast path (A·Bᵀ ~9–14× and Aᵀ·B
 *    ~14–60× slower than A·B, measured on this project's 2-core machine). matMul's gradients use
 *    exactly those flags. We wrap the kernel: transpose the operand explicitly (a cheap copy),
 *    then multiply with both flags off.
 * 3. `OneHot` writes int32 bits whatever its dtype: a float32 one-hot holds 1.4e-45 (the float
 *    whose bits are int 1) instead of 1. We make float32 one-hots ourselves.
 */
import * as tf from '@tensorflow/tfjs-core';
import { addKernel, type KernelFunc, overrideKernel, product, type WasmBackend } from './kernels';

/** out[segmentIds[i], …] += x[i, …]; x: [N, …inner], segmentIds: [N] → [numSegments, …inner] */
const unsortedSegmentSum: KernelFunc = ({ inputs, backend, attrs }) => {
  const wasm = backend as WasmBackend;
  const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const numSegments = (attrs as { numSegments: number }).numSegments;
  const rows = product(segmentIds.shape);
  const inner = x.shape.slice(segmentIds.shape.length);
  const width = product(inner);
  const out = wasm.makeOutput([numSegments, ...inner], x.dtype);
  // Views are taken after makeOutput: allocating may grow (and so detach) the wasm heap.
  const dst = wasm.typedArrayFromHeap(out);
  const src = wasm.typedArrayFromHeap(x);
  const ids = wasm.typedArrayFromHeap(segmentIds);
  dst.fill(0);
  for (let i = 0; i < rows; i++) {
    const s = ids[i];
    if (s < 0 || s >= numSegments) continue; // TensorFlow drops out-of-range ids
    const from = i * width;
    const to = s * width;
    for (let j = 0; j < width; j++) dst[to + j] += src[from + j];
  }
  return out;
};

/** OneHot: indices [...] → [..., depth]; float32 here, other dtypes by wasm's own kernel. */
function floatOneHot(inner: KernelFunc): KernelFunc {
  return (args) => {
    const { indices } = args.inputs as { indices: tf.TensorInfo };
    const { dtype, depth, onValue, offValue } = args.attrs as {
      dtype: tf.DataType;
      depth: number;
      onValue: number;
      offValue: number;
    };
    if (dtype !== 'float32') return inner(args);
    const wasm = args.backend as WasmBackend;
    const out = wasm.makeOutput([...indices.shape, depth], 'float32');
    const dst = wasm.typedArrayFromHeap(out); // after makeOutput: allocating may grow the heap
    const ids = wasm.typedArrayFromHeap(indices);
    dst.fill(offValue);
    for (let i = 0; i < ids.length; i++) if (ids[i] >= 0 && ids[i] < depth) dst[i * depth + ids[i]] = onValue;
    return out;
  };
}

/** Wraps a (Batch|_Fused)MatMul kernel so that it never sees a transpose flag. */
function withoutTransposeFlags(inner: KernelFunc, transpose: KernelFunc): KernelFunc {
  const swapLast = (t: tf.TensorInfo, backend: tf.KernelBackend): tf.TensorInfo => {
    const perm = t.shape.map((_, i) => i);
    const r = perm.length;
    [perm[r - 2], perm[r - 1]] = [perm[r - 1], perm[r - 2]];
    return transpose({ inputs: { x: t }, backend, attrs: { perm } }) as tf.TensorInfo;
  };
  return (args) => {
    const attrs = args.attrs as { transposeA: boolean; transposeB: boolean };
    if (!attrs.transposeA && !attrs.transposeB) return inner(args);
    const inputs = { ...args.inputs } as Record<string, tf.TensorInfo>;
    const temps: tf.TensorInfo[] = [];
    if (attrs.transposeA) temps.push((inputs.a = swapLast(inputs.a, args.backend as tf.KernelBackend)));
    if (attrs.transposeB) temps.push((inputs.b = swapLast(inputs.b, args.backend as tf.KernelBackend)));
    const out = inner({ ...args, inputs, attrs: { ...args.attrs, transposeA: false, transposeB: false } });
    for (const t of temps) (args.backend as WasmBackend).disposeData(t.dataId);
    return out;
  };
}

/** Idempotent; call after tfjs-backend-wasm is loaded. */
export function registerWasmFixes(): void {
  addKernel('UnsortedSegmentSum', 'wasm', unsortedSegmentSum);
  overrideKernel('OneHot', 'wasm', 'float-one-hot', floatOneHot);
  const transpose = tf.getKernel('Transpose', 'wasm');
  if (!transpose) throw new Error('tfjs-backend-wasm has no Transpose kernel: unexpected tfjs version');
  for (const kernelName of ['BatchMatMul', '_FusedMatMul'])
    overrideKernel(kernelName, 'wasm', 'no-transpose-flags', (inner) =>
      withoutTransposeFlags(inner, transpose.kernelFunc),
    );
}
