/**
 * Kernels of native/ops.c for the wasm backend, where a profiled training step of the issue's
 * config (d 256, 2+2 layers, V 8000, 32×32 tokens) spent ~1.5 s outside matMul: Sum over leading
 * axes (bias gradients; wasm transposes first) ~430 ms, two Exp over [1024, 8000] ~260 ms, copies by
 * Identity ~160 ms, the ~15 passes of the label-smoothed loss, Adam's ~12 kernels per parameter.
 *
 * Overrides (same results, faster): Sum over a contiguous block of axes; GatherV2 of rows; Identity
 * shares the input's buffer (as tfjs's cpu backend does) instead of copying it.
 * Fused kernels, registered here for wasm and in webgpu/ (loss.ts, adamUpdate.ts) for webgpu
 * (train/loss.ts and train/adam.ts use them when the active backend has them, and tfjs ops
 * otherwise): SmoothedCrossEntropy and AdamUpdate.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ADAM_UPDATE, SMOOTHED_CROSS_ENTROPY } from '../fusedKernels';
import { addKernel, f32, type KernelFunc, overrideKernel, product, type WasmBackend } from '../kernels';

export interface OpsAddon {
  sum(x: Float32Array, out: Float32Array, outer: number, mid: number, inner: number): void;
  gatherRows(table: Float32Array, ids: Int32Array, out: Float32Array, width: number): void;
  smoothedXent(
    logits: Float32Array,
    targets: Int32Array,
    rowLoss: Float32Array,
    rowNll: Float32Array,
    grad: Float32Array,
    pad: number,
    confidence: number,
    spread: number,
    entropy: number,
    scale: number,
    n: number,
    v: number,
  ): void;
  adam(
    p: Float32Array,
    g: Float32Array,
    m: Float32Array,
    v: Float32Array,
    pOut: Float32Array,
    mOut: Float32Array,
    vOut: Float32Array,
    lr: number,
    beta1: number,
    beta2: number,
    epsilon: number,
    c1: number,
    c2: number,
    size: number,
  ): void;
}

/** Sum: x [outer, mid, inner] summed over mid, when the reduced axes are one contiguous block. */
function sum(ops: OpsAddon, fallback: KernelFunc): KernelFunc {
  return (args) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { axis, keepDims } = args.attrs as { axis: number | number[]; keepDims: boolean };
    if (x.dtype !== 'float32' || x.shape.length === 0) return fallback(args);
    const axes = tf.util.parseAxisParam(axis, x.shape).sort((a, b) => a - b);
    if (axes.length === 0 || axes.some((a, i) => i > 0 && a !== axes[i - 1] + 1)) return fallback(args);
    const first = axes[0];
    const last = axes[axes.length - 1];
    const backend = args.backend as WasmBackend;
    const shape = keepDims
      ? x.shape.map((d, i) => (i >= first && i <= last ? 1 : d))
      : x.shape.filter((_, i) => i < first || i > last);
    const out = backend.makeOutput(shape, 'float32');
    const y = backend.typedArrayFromHeap(out) as Float32Array; // views after makeOutput (the heap may grow)
    ops.sum(
      backend.typedArrayFromHeap(x) as Float32Array,
      y,
      product(x.shape.slice(0, first)),
      product(x.shape.slice(first, last + 1)),
      product(x.shape.slice(last + 1)),
    );
    return out;
  };
}

/** GatherV2 along axis 0 without batch dims: x [R, ...row], indices [...I] → [...I, ...row] */
function gatherRows(ops: OpsAddon, fallback: KernelFunc): KernelFunc {
  return (args) => {
    const { x, indices } = args.inputs as { x: tf.TensorInfo; indices: tf.TensorInfo };
    const { axis, batchDims } = args.attrs as { axis: number; batchDims: number };
    if (x.dtype !== 'float32' || indices.dtype !== 'int32' || x.shape.length === 0 || (batchDims ?? 0) !== 0)
      return fallback(args);
    if (tf.util.parseAxisParam(axis, x.shape)[0] !== 0) return fallback(args);
    const backend = args.backend as WasmBackend;
    const ids = backend.typedArrayFromHeap(indices) as Int32Array;
    const rows = x.shape[0];
    for (let i = 0; i < ids.length; i++) if (ids[i] < 0 || ids[i] >= rows) return fallback(args); // tfjs's own error
    const out = backend.makeOutput([...indices.shape, ...x.shape.slice(1)], 'float32');
    const y = backend.typedArrayFromHeap(out) as Float32Array;
    ops.gatherRows(
      backend.typedArrayFromHeap(x) as Float32Array,
      backend.typedArrayFromHeap(indices) as Int32Array,
      y,
      product(x.shape.slice(1)),
    );
    return out;
  };
}

/** Identity without a copy: the output shares the input's buffer (reference-counted). */
const identity: KernelFunc = ({ inputs, backend }) => {
  const { x } = inputs as { x: tf.TensorInfo };
  (backend as WasmBackend).incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
};

/** logits [N, V], targets [N] int32 → rowLoss [N], rowNll [N], grad [N, V] (see native/ops.c) */
function smoothedCrossEntropy(ops: OpsAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { logits, targets } = inputs as { logits: tf.TensorInfo; targets: tf.TensorInfo };
    const a = attrs as { padId: number; confidence: number; spread: number; entropy: number; scale: number };
    const [n, v] = logits.shape;
    const b = backend as WasmBackend;
    const rowLoss = b.makeOutput([n], 'float32');
    const rowNll = b.makeOutput([n], 'float32');
    const grad = b.makeOutput([n, v], 'float32');
    const f = (t: tf.TensorInfo): Float32Array => f32(b, t);
    ops.smoothedXent(
      f(logits),
      b.typedArrayFromHeap(targets) as Int32Array,
      f(rowLoss),
      f(rowNll),
      f(grad),
      a.padId,
      a.confidence,
      a.spread,
      a.entropy,
      a.scale,
      n,
      v,
    );
    return [rowLoss, rowNll, grad];
  };
}

/**
 * p, g, m, v → p', m', v' (Adam's update, native/ops.c); with `ok` (a bool scalar), p, m, v as they
 * were where it is false: the gate of train/adam.ts, inside the kernel.
 */
function adamUpdate(ops: OpsAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { p, g, m, v, ok } = inputs as Record<'p' | 'g' | 'm' | 'v', tf.TensorInfo> & { ok?: tf.TensorInfo };
    const a = attrs as { lr: number; beta1: number; beta2: number; epsilon: number; c1: number; c2: number };
    const b = backend as WasmBackend;
    const outs = [p, m, v].map((t) => b.makeOutput(t.shape, 'float32'));
    const f = (t: tf.TensorInfo): Float32Array => f32(b, t);
    if (ok && b.typedArrayFromHeap(ok)[0] === 0) {
      outs.forEach((o, i) => f(o).set(f([p, m, v][i]!)));
      return outs;
    }
    ops.adam(
      f(p),
      f(g),
      f(m),
      f(v),
      f(outs[0]),
      f(outs[1]),
      f(outs[2]),
      a.lr,
      a.beta1,
      a.beta2,
      a.epsilon,
      a.c1,
      a.c2,
      product(p.shape),
    );
    return outs;
  };
}

/** Idempotent; after tfjs-backend-wasm is loaded. */
export function registerNativeOps(ops: OpsAddon): void {
  overrideKernel('Sum', 'wasm', 'native', (fallback) => sum(ops, fallback));
  overrideKernel('GatherV2', 'wasm', 'native', (fallback) => gatherRows(ops, fallback));
  overrideKernel('Identity', 'wasm', 'native', () => identity);
  addKernel(SMOOTHED_CROSS_ENTROPY, 'wasm', smoothedCrossEntropy(ops));
  addKernel(ADAM_UPDATE, 'wasm', adamUpdate(ops));
}
