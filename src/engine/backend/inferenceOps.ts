/**
 * Fused kernels for decoding on wasm (native/blas.c linear, native/ops.c logSoftmax, greedyPick,
 * addLayerNorm, attendOne). One incremental decoder step of `small` (3 layers, 32 rows) ran ~300 tfjs kernels, most
 * of them tiny: a linear map was reshape + matMul + add + reshape, a LayerNorm ~11 kernels (moments,
 * casts, rsqrt…), one query's attention matMul + mul + add + softmax + matMul, and log-softmax over
 * [rows, V] four passes with wasm's scalar Exp. Each of these is one kernel here.
 *
 * Inference only: they have no gradients, so only a ForwardContext with `fused` (IncrementalModel,
 * ops/decoding.ts) reaches them, never training. Their wasm kernels: wasm/inferenceKernels.ts. The ops below run tfjs's own kernels when the active
 * backend lacks these (cpu, webgpu, wasm without the addon), so their callers need no second path.
 */
import * as tf from '@tensorflow/tfjs-core';

export const LINEAR = 'AttentionDebuggerLinear';
export const LOG_SOFTMAX = 'AttentionDebuggerLogSoftmax';
export const ADD_LAYER_NORM = 'AttentionDebuggerAddLayerNorm';
export const ATTEND_ONE = 'AttentionDebuggerAttendOne';
export const GATHER_APPEND = 'AttentionDebuggerGatherAppend';
export const LINEAR_SPLIT = 'AttentionDebuggerLinearSplit';
export const GREEDY_PICK = 'AttentionDebuggerGreedyPick';

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
