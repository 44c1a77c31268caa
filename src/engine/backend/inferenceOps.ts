/**
 * Fused kernels for decoding on wasm (native/blas.c linear, native/ops.c logSoftmax, greedyPick,
 * addLayerNorm, attendOne). One incremental decoder step of `small` (3 layers, 32 rows) ran ~300 tfjs kernels, most
 * of them tiny: a linear map was reshape + matMul + add + reshape, a LayerNorm ~11 kernels (moments,
 * casts, rsqrt…), one query's attention matMul + mul + add + softmax + matMul, and log-softmax over
 * [rows, V] four passes with wasm's scalar Exp. Each of these is one kernel here.
 *
 * Inference only: they have no gradients, so only a ForwardContext with `fused` (IncrementalModel,
 * model/stacks.ts) reaches them, never training. The ops below run tfjs's own kernels when the active
 * backend lacks these (cpu, webgpu, wasm without the addon), so their callers need no second path.
 */
import * as tf from '@tensorflow/tfjs-core';
import { addKernel, f32, type KernelFunc, product, type WasmBackend } from './kernels';

export const LINEAR = 'AttentionDebuggerLinear';
export const LOG_SOFTMAX = 'AttentionDebuggerLogSoftmax';
export const ADD_LAYER_NORM = 'AttentionDebuggerAddLayerNorm';
export const ATTEND_ONE = 'AttentionDebuggerAttendOne';
export const GATHER_APPEND = 'AttentionDebuggerGatherAppend';
export const LINEAR_SPLIT = 'AttentionDebuggerLinearSplit';
export const GREEDY_PICK = 'AttentionDebuggerGreedyPick';

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
 * The rows of w (and b) a LINEAR or its gradient uses, [from, count]: attrs.rows when its count is
 * positive, else all of them; checked against w's and b's sizes.
 */
export function linearRows(w: tf.TensorInfo, b: tf.TensorInfo | undefined, rows: [number, number]): [number, number] {
  const all = w.shape[0]!;
  const [from, count] = rows[1] > 0 ? rows : [0, all];
  if (from < 0 || from + count > all || (b && b.shape[0] !== all))
    throw new RangeError(`rows ${from}…${from + count - 1} of a [${w.shape}] weight with a [${b?.shape}] bias`);
  return [from, count];
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
export function registerInferenceOps(ops: InferenceAddon): void {
  addKernel(LINEAR, 'wasm', linearKernel(ops));
  addKernel(LOG_SOFTMAX, 'wasm', logSoftmaxKernel(ops));
  addKernel(LINEAR_SPLIT, 'wasm', linearSplitKernel(ops));
  addKernel(GREEDY_PICK, 'wasm', greedyPickKernel(ops));
  addKernel(ADD_LAYER_NORM, 'wasm', addLayerNormKernel(ops));
  addKernel(ATTEND_ONE, 'wasm', attendOneKernel(ops));
  addKernel(GATHER_APPEND, 'wasm', gatherAppendKernel);
}

/** Whether the active backend has the fused decoding kernels. */
export function hasInferenceKernels(): boolean {
  return tf.getKernel(ATTEND_ONE, tf.getBackend()) !== undefined;
}

const has = (name: string): boolean => tf.getKernel(name, tf.getBackend()) !== undefined;

/** Whether fusedLinear runs as one kernel (rows of W as a view) on the active backend. */
export const hasLinearKernel = (): boolean => has(LINEAR);

/** Whether fusedGreedyPick runs on the active backend. */
export const hasGreedyPick = (): boolean => has(GREEDY_PICK);

/**
 * y = x·Wᵀ + b (then ReLU when `relu`), x [..., in], W [out, in] → [..., out], in one kernel when it
 * can. `rows` [from, count]: with rows from … from + count − 1 of W and b alone (no copy in the kernel).
 */
export function fusedLinear(
  x: tf.Tensor,
  w: tf.Tensor,
  b: tf.Tensor,
  relu = false,
  rows: [number, number] = [0, 0],
): tf.Tensor {
  if (has(LINEAR) && x.dtype === 'float32')
    return tf.engine().runKernel(LINEAR, { x, w, b }, { relu, rows }) as tf.Tensor;
  if (rows[1] > 0) {
    w = tf.slice(w, [rows[0], 0], [rows[1], w.shape[1]!]);
    b = tf.slice(b, [rows[0]], [rows[1]]);
  }
  const flat = tf.reshape(x, [-1, x.shape[x.shape.length - 1]!]);
  const y = tf.add(tf.matMul(flat, w, false, true), b);
  return tf.reshape(relu ? tf.relu(y) : y, [...x.shape.slice(0, -1), w.shape[0]!]);
}

/** fusedLinear's output split into `parts` equal blocks of its last axis (one product for W^Q, W^K, W^V). */
export function fusedLinearSplit(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor, parts: number): tf.Tensor[] {
  if (has(LINEAR_SPLIT) && x.dtype === 'float32' && w.shape[0]! % parts === 0)
    return tf.engine().runKernel(LINEAR_SPLIT, { x, w, b }, { parts }) as unknown as tf.Tensor[];
  return tf.split(fusedLinear(x, w, b), parts, -1);
}

/**
 * Greedy decoding's choice from logits [N, V] without reading back [N, V]: per row (token, its
 * log-prob, EOS's log-prob) as [N, 3] (token ids exact in float32 below 2^24), the log-probs those of
 * fusedLogSoftmax, with BOS and PAD at −∞ and ties going to the lowest id (decode/greedy.ts pickGreedy);
 * null where the backend lacks the kernel.
 */
export function fusedGreedyPick(logits: tf.Tensor2D, bos: number, pad: number, eos: number): tf.Tensor2D | null {
  if (!has(GREEDY_PICK) || logits.dtype !== 'float32' || logits.shape[1] >= 2 ** 24) return null;
  return tf.engine().runKernel(GREEDY_PICK, { x: logits }, { bos, pad, eos }) as tf.Tensor2D;
}

/** log softmax over the last axis. */
export function fusedLogSoftmax(x: tf.Tensor): tf.Tensor {
  return has(LOG_SOFTMAX) ? (tf.engine().runKernel(LOG_SOFTMAX, { x }, {}) as tf.Tensor) : tf.logSoftmax(x);
}

/** LayerNorm(x + r) over the last axis (LayerNorm(x) without r); the caller's layerNorm when the kernel is missing. */
export function fusedAddLayerNorm(
  x: tf.Tensor,
  r: tf.Tensor | undefined,
  gain: tf.Tensor,
  bias: tf.Tensor,
  eps: number,
  fallback: (z: tf.Tensor) => tf.Tensor,
): tf.Tensor {
  if (!has(ADD_LAYER_NORM)) return fallback(r ? tf.add(x, r) : x);
  const inputs: tf.NamedTensorMap = r ? { x, r, gain, bias } : { x, gain, bias };
  return tf.engine().runKernel(ADD_LAYER_NORM, inputs, { eps }) as tf.Tensor;
}

/** softmax(q·Kᵀ/√dk + mask)·V for one query position: q [B, h, 1, dk] → [B, h, 1, dk]; null without the kernel. */
export function fusedAttendOne(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask?: tf.Tensor): tf.Tensor | null {
  if (!has(ATTEND_ONE) || q.shape[2] !== 1) return null;
  if (mask && (mask.shape.length !== 4 || mask.shape[1] !== 1 || mask.shape[2] !== 1 || mask.shape[0] !== q.shape[0]))
    return null; // only a per-sentence key mask [B, 1, 1, S]
  return tf.engine().runKernel(ATTEND_ONE, mask ? { q, k, v, mask } : { q, k, v }, {}) as tf.Tensor;
}

/** concat([gather(past, rows), next], 2): past [B0, h, t, dk], next [B, h, 1, dk], rows [B] → [B, h, t + 1, dk] */
export function gatherAppend(past: tf.Tensor, next: tf.Tensor, rows: tf.Tensor1D): tf.Tensor {
  if (has(GATHER_APPEND) && past.dtype === 'float32' && next.shape[2] === 1)
    return tf.engine().runKernel(GATHER_APPEND, { past, next, rows }, {}) as tf.Tensor;
  return tf.concat([tf.gather(past, rows, 0), next], 2);
}
