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
 * 4. `Slice` reads its input with readSync, a copy of the whole input out of the heap, before taking
 *    the slice: one row of the [max_len, d] positional table cost ~0.35 ms (each decoding step's
 *    embedding), W^K of a [3d, d] stack as much. We copy the slice from a view of the heap.
 */
import * as tf from '@tensorflow/tfjs-core';
import { addKernel, type KernelFunc, overrideKernel, product, type WasmBackend } from '../kernels';

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

/** Slice from a view of the heap (no readSync copy of the whole input); strings by wasm's own kernel. */
function heapSlice(inner: KernelFunc): KernelFunc {
  return (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (x.dtype === 'string') return inner(args);
    const { begin, size } = args.attrs as { begin: number | number[]; size: number | number[] };
    const [from, sizes] = tf.slice_util.parseSliceParams(x as tf.Tensor, begin, size);
    const wasm = args.backend as WasmBackend;
    const out = wasm.makeOutput(sizes, x.dtype);
    const n = product(sizes);
    if (n === 0) return out;
    const dst = wasm.typedArrayFromHeap(out); // after makeOutput: allocating may grow the heap
    const src = wasm.typedArrayFromHeap(x);
    const strides = tf.util.computeStrides(x.shape);
    if (tf.slice_util.isSliceContinous(x.shape, from, sizes)) {
      const at = tf.slice_util.computeFlatOffset(from, strides);
      dst.set(src.subarray(at, at + n));
      return out;
    }
    // Row by row of the last axis: idx counts over the leading axes of the slice.
    const r = sizes.length;
    const row = sizes[r - 1]!;
    const idx = new Array<number>(r - 1).fill(0);
    for (let o = 0; o < n; o += row) {
      let at = from[r - 1]!;
      for (let a = 0; a < r - 1; a++) at += (from[a]! + idx[a]!) * strides[a]!;
      dst.set(src.subarray(at, at + row), o);
      for (let a = r - 2; a >= 0 && ++idx[a]! === sizes[a]; a--) idx[a] = 0;
    }
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
  overrideKernel('Slice', 'wasm', 'heap-view-slice', heapSlice);
  const transpose = tf.getKernel('Transpose', 'wasm');
  if (!transpose) throw new Error('tfjs-backend-wasm has no Transpose kernel: unexpected tfjs version');
  for (const kernelName of ['BatchMatMul', '_FusedMatMul'])
    overrideKernel(kernelName, 'wasm', 'no-transpose-flags', (inner) =>
      withoutTransposeFlags(inner, transpose.kernelFunc),
    );
}
