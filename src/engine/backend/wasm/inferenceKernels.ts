/**
 * The wasm kernels of the fused decoding ops (backend/inferenceOps.ts, which names them and runs
 * them), over the native addon (native/blas.c linear, native/ops.c logSoftmax, greedyPick,
 * addLayerNorm, attendOne): each reads and writes the wasm heap in place.
 */
import type * as tf from '@tensorflow/tfjs-core';
import {
  ADD_LAYER_NORM,
  ATTEND_ONE,
  GATHER_APPEND,
  GREEDY_PICK,
  LINEAR,
  LINEAR_SPLIT,
  linearRows,
  LOG_SOFTMAX,
} from '../inferenceOps';
import { addKernel, f32, type KernelFunc, product, type WasmBackend } from '../kernels';

export interface InferenceAddon {
  linear(
    x: Float32Array,
    w: Float32Array,
    b: Float32Array,
    y: Float32Array,
    n: number,
    inDim: number,
    outDim: number,
    relu: boolean,
  ): void;
  logSoftmax(x: Float32Array, y: Float32Array, n: number, v: number): void;
  greedyPick(x: Float32Array, out: Float32Array, n: number, v: number, bos: number, pad: number, eos: number): void;
  addLayerNorm(
    x: Float32Array,
    r: Float32Array,
    gain: Float32Array,
    bias: Float32Array,
    y: Float32Array,
    n: number,
    d: number,
    eps: number,
    residual: boolean,
    rate: number,
    seed: number,
  ): void;
  attendOne(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    mask: Float32Array,
    out: Float32Array,
    bh: number,
    heads: number,
    s: number,
    dk: number,
    scale: number,
    masked: boolean,
  ): void;
}

/**
 * x [..., in], w [out, in], b [out] → [..., out]; attrs.relu; attrs.rows [from, count] (count > 0):
 * rows from … from + count − 1 of w and b alone (W^Q, W^K or W^V of the stacked [3d, d], [3d]: a
 * view of contiguous rows, where a tfjs slice copied them, ~0.5 ms a matrix on wasm).
 */
function linearKernel(ops: InferenceAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x, w, b } = inputs as Record<'x' | 'w' | 'b', tf.TensorInfo>;
    const { relu, rows } = attrs as { relu: boolean; rows: [number, number] };
    const inDim = x.shape[x.shape.length - 1]!;
    const [from, outDim] = linearRows(w, b, rows);
    const be = backend as WasmBackend;
    const y = be.makeOutput([...x.shape.slice(0, -1), outDim], 'float32');
    const n = product(x.shape.slice(0, -1));
    const wv = f32(be, w).subarray(from * inDim, (from + outDim) * inDim);
    ops.linear(f32(be, x), wv, f32(be, b).subarray(from, from + outDim), f32(be, y), n, inDim, outDim, relu);
    return y;
  };
}

/**
 * x [..., in], w [parts·out, in], b [parts·out] → parts × [..., out]: one product (W^Q, W^K, W^V
 * stacked, as PyTorch's in_proj_weight), its columns then copied into one output per part.
 */
function linearSplitKernel(ops: InferenceAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x, w, b } = inputs as Record<'x' | 'w' | 'b', tf.TensorInfo>;
    const parts = (attrs as { parts: number }).parts;
    const inDim = x.shape[x.shape.length - 1]!;
    const all = w.shape[0]!;
    const outDim = all / parts;
    const be = backend as WasmBackend;
    const n = product(x.shape.slice(0, -1));
    const tmp = be.makeOutput([n, all], 'float32');
    const outs = Array.from({ length: parts }, () => be.makeOutput([...x.shape.slice(0, -1), outDim], 'float32'));
    const y = f32(be, tmp); // views after every makeOutput (the heap may grow)
    ops.linear(f32(be, x), f32(be, w), f32(be, b), y, n, inDim, all, false);
    outs.forEach((o, p) => {
      const dst = f32(be, o);
      for (let i = 0; i < n; i++) dst.set(y.subarray(i * all + p * outDim, i * all + (p + 1) * outDim), i * outDim);
    });
    be.disposeData(tmp.dataId);
    return outs;
  };
}

/** logits [N, V] → [N, 3]: per row greedy's token (argmax of log softmax, BOS and PAD excluded, lowest id on ties), its log-prob, EOS's log-prob */
function greedyPickKernel(ops: InferenceAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x } = inputs as { x: tf.TensorInfo };
    const { bos, pad, eos } = attrs as { bos: number; pad: number; eos: number };
    const be = backend as WasmBackend;
    const [n, v] = x.shape as [number, number];
    const out = be.makeOutput([n, 3], 'float32');
    ops.greedyPick(f32(be, x), f32(be, out), n, v, bos, pad, eos);
    return out;
  };
}

/** x [..., V] → log softmax over the last axis */
function logSoftmaxKernel(ops: InferenceAddon): KernelFunc {
  return ({ inputs, backend }) => {
    const { x } = inputs as { x: tf.TensorInfo };
    const be = backend as WasmBackend;
    const y = be.makeOutput(x.shape, 'float32');
    const v = x.shape[x.shape.length - 1]!;
    ops.logSoftmax(f32(be, x), f32(be, y), product(x.shape) / v, v);
    return y;
  };
}

/**
 * x [..., d] (+ r, same shape), gain [d], bias [d] → LayerNorm(x + r); attrs.eps, and attrs.rate
 * and attrs.seed: dropout on r (trainingOps.ts DROPOUT_ADD_NORM; native/norm.c).
 */
export function addLayerNormKernel(ops: InferenceAddon): KernelFunc {
  return ({ inputs, backend, attrs }) => {
    const { x, r, gain, bias } = inputs as Record<'x' | 'gain' | 'bias', tf.TensorInfo> & { r?: tf.TensorInfo };
    const be = backend as WasmBackend;
    const y = be.makeOutput(x.shape, 'float32');
    const d = x.shape[x.shape.length - 1]!;
    const xv = f32(be, x);
    const { eps, rate = 0, seed = 0 } = attrs as { eps: number; rate?: number; seed?: number };
    ops.addLayerNorm(
      xv,
      r ? f32(be, r) : xv,
      f32(be, gain),
      f32(be, bias),
      f32(be, y),
      product(x.shape) / d,
      d,
      eps,
      !!r,
      rate,
      seed,
    );
    return y;
  };
}

/** q [B, h, 1, dk], k, v [B, h, S, dk], mask [B, 1, 1, S] (optional) → [B, h, 1, dk] */
function attendOneKernel(ops: InferenceAddon): KernelFunc {
  return ({ inputs, backend }) => {
    const { q, k, v, mask } = inputs as Record<'q' | 'k' | 'v', tf.TensorInfo> & { mask?: tf.TensorInfo };
    const [b, h, , dk] = q.shape as [number, number, number, number];
    const s = k.shape[2]!;
    const be = backend as WasmBackend;
    const out = be.makeOutput(q.shape, 'float32');
    const qv = f32(be, q);
    const scale = Math.fround(1 / Math.sqrt(dk)); // as tfjs's scalar 1/√dk in scaledDotProductAttention
    ops.attendOne(qv, f32(be, k), f32(be, v), mask ? f32(be, mask) : qv, f32(be, out), b * h, h, s, dk, scale, !!mask);
    return out;
  };
}

/**
 * past [B0, h, t, dk], next [B, h, 1, dk], rows [B] int32 → [B, h, t + 1, dk]: row b is past's row
 * rows[b] with next's position b appended (a beam's reordered key/value cache, copied once).
 */
const gatherAppendKernel: KernelFunc = ({ inputs, backend }) => {
  const { past, next, rows } = inputs as Record<'past' | 'next' | 'rows', tf.TensorInfo>;
  const [b0, h, t, dk] = past.shape as [number, number, number, number];
  const b = next.shape[0]!;
  const be = backend as WasmBackend;
  const ids = be.typedArrayFromHeap(rows) as Int32Array;
  for (let i = 0; i < b; i++)
    if (!(ids[i]! >= 0 && ids[i]! < b0)) throw new RangeError(`row ${ids[i]} is outside the cache's ${b0} rows`);
  const out = be.makeOutput([b, h, t + 1, dk], 'float32');
  const [y, p, x] = [f32(be, out), f32(be, past), f32(be, next)]; // views after makeOutput (the heap may grow)
  const from = be.typedArrayFromHeap(rows) as Int32Array;
  const block = t * dk;
  for (let i = 0; i < b; i++)
    for (let j = 0; j < h; j++) {
      const o = (i * h + j) * (block + dk);
      const src = (from[i]! * h + j) * block;
      y.set(p.subarray(src, src + block), o);
      y.set(x.subarray((i * h + j) * dk, (i * h + j + 1) * dk), o + block);
    }
  return out;
};

/** Idempotent; after tfjs-backend-wasm is loaded. */
export function registerInferenceKernels(ops: InferenceAddon): void {
  addKernel(LINEAR, 'wasm', linearKernel(ops));
  addKernel(LOG_SOFTMAX, 'wasm', logSoftmaxKernel(ops));
  addKernel(LINEAR_SPLIT, 'wasm', linearSplitKernel(ops));
  addKernel(GREEDY_PICK, 'wasm', greedyPickKernel(ops));
  addKernel(ADD_LAYER_NORM, 'wasm', addLayerNormKernel(ops));
  addKernel(ATTEND_ONE, 'wasm', attendOneKernel(ops));
  addKernel(GATHER_APPEND, 'wasm', gatherAppendKernel);
}
