/**
 * Whole-sequence kernels with gradients for training, backend-neutral: their names, the ops that run
 * them, and their gradients (in terms of the same kernels). wasm registers them in
 * wasm/trainingKernels.ts (native/attention.c, norm.c and blas.c's linear backward), webgpu in
 * webgpu/. On wasm a profiled step of the config spent ~220 of ~485 ms outside
 * matMul in small tfjs kernels (dropout's five, LayerNorm's ~11 each way, head transposes, the
 * attention's scale, mask and softmax) and their autodiff bookkeeping. Here each block is one kernel
 * each way:
 * - DROPOUT: x ⊙ m, the mask drawn again from the seed for the gradient;
 * - LINEAR (inferenceOps.ts) gets its gradient: dx, dW, db (through the ReLU) in one kernel;
 * - DROPOUT_ADD_NORM: LayerNorm(x + Dropout(r)) (ADD_LAYER_NORM's kernel, with dropout) and its
 *   gradient (post-LN); LAYER_NORM: LayerNorm(x) alone (pre-LN, and its final norms);
 * - SELF_ATTENTION and CROSS_ATTENTION: softmax(Q·Kᵀ/√dk + mask)·V for every head, reading heads in
 *   place from the projected rows (for self-attention the one product with the stacked W^Q, W^K,
 *   W^V), writing the heads concatenated, ready for W^O.
 * Results equal the unfused tfjs ops to float rounding (test/engine/block-kernels.test.ts), except
 * dropout's draws, which come from a counter-based generator (norm.c) instead of tfjs's.
 */
import * as tf from '@tensorflow/tfjs-core';
import { LINEAR } from './inferenceOps';
import { releaseConsumed } from './releaseConsumed';
import { tiledAttention, usesTiledAttention } from './tiledAttention';

export const LINEAR_GRAD = 'AttentionDebuggerLinearGrad';
/** x ⊙ m, m from a counter-based draw (native/norm.c): its gradient is the same kernel on dy. */
export const DROPOUT = 'AttentionDebuggerDropout';
/** LayerNorm(x + Dropout(r)): ADD_LAYER_NORM's kernel with r required, so that it can have a gradient. */
export const DROPOUT_ADD_NORM = 'AttentionDebuggerDropoutAddNorm';
/** dx, dgain, dbias (and dr, with r) of DROPOUT_ADD_NORM or LAYER_NORM. */
export const NORM_GRAD = 'AttentionDebuggerNormGrad';
/** LayerNorm(x): ADD_LAYER_NORM's kernel without r, under a name of its own for its gradient. */
export const LAYER_NORM = 'AttentionDebuggerLayerNorm';
export const SELF_ATTENTION = 'AttentionDebuggerSelfAttention';
export const CROSS_ATTENTION = 'AttentionDebuggerCrossAttention';
export const ATTENTION_GRAD = 'AttentionDebuggerAttentionGrad';
/** Σ over several tensors of Σ x² (the global gradient norm's square): webgpu/sumOfSquares.ts. */
export const SUM_OF_SQUARES = 'AttentionDebuggerSumOfSquares';

/**
 * The sizes of one attention call: q [B, T, qWidth] and kv [B, S, kvWidth] (self-attention: kv absent,
 * q holds Q, K, V side by side), the columns of K and V in kv's rows, and the additive mask
 * [Bm, 1, Tm, S] as strides (0 where it broadcasts). The native and the webgpu kernels read these.
 */
export function attentionSizes(q: tf.TensorInfo, kv: tf.TensorInfo | undefined, mask: tf.TensorInfo, heads: number) {
  const [b, t, qWidth] = q.shape as [number, number, number];
  const d = kv ? qWidth : qWidth / 3;
  const [s, kvWidth] = kv ? [kv.shape[1]!, kv.shape[2]!] : [t, qWidth];
  const [kOffset, vOffset] = kv ? [0, d] : [d, 2 * d];
  const maskB = mask.shape[0] !== 1 ? mask.shape[2]! * s : 0;
  const maskT = mask.shape[2] !== 1 ? s : 0;
  return { b, t, s, heads, dk: d / heads, d, qWidth, kvWidth, kOffset, vOffset, maskB, maskT };
}
export type AttentionSizes = ReturnType<typeof attentionSizes>;

const run = (name: string, inputs: tf.NamedTensorMap, attrs: object): tf.Tensor[] =>
  tf.engine().runKernel(name, inputs, attrs as tf.NamedAttrMap) as unknown as tf.Tensor[];

/**
 * The gradients of the kernels above, in terms of the kernels above: the same on every backend that
 * registers them (wasm/trainingKernels.ts, webgpu/). Each computes its input gradients when called
 * and, inside releasingConsumed, frees its dy and saved tensors then (releaseConsumed.ts). Idempotent.
 */
export function registerTrainingGradients(): void {
  if (tf.getGradient(LINEAR)) return; // the gradients below are registered once per process
  tf.registerGradient({
    kernelName: DROPOUT,
    gradFunc: (dy, _saved, attrs) => {
      const dx = run(DROPOUT, { x: dy as tf.Tensor }, attrs) as unknown as tf.Tensor;
      releaseConsumed(dy);
      return { x: () => dx };
    },
  });
  tf.registerGradient({
    kernelName: LINEAR,
    inputsToSave: ['x', 'w'],
    outputsToSave: [true],
    gradFunc: (dy, saved, attrs) => {
      const [x, w, y] = saved as tf.Tensor[];
      const [dx, dw, db] = run(LINEAR_GRAD, { dy: dy as tf.Tensor, x: x!, w: w!, y: y! }, attrs);
      releaseConsumed(dy, saved);
      return { x: () => dx!, w: () => dw!, b: () => db! };
    },
  });
  tf.registerGradient({
    kernelName: DROPOUT_ADD_NORM,
    inputsToSave: ['x', 'r', 'gain'],
    gradFunc: (dy, saved, attrs) => {
      const [x, r, gain] = saved as tf.Tensor[];
      const [dx, dgain, dbias, dr] = run(NORM_GRAD, { dy: dy as tf.Tensor, x: x!, r: r!, gain: gain! }, attrs);
      releaseConsumed(dy, saved);
      return { x: () => dx!, r: () => dr!, gain: () => dgain!, bias: () => dbias! };
    },
  });
  tf.registerGradient({
    kernelName: LAYER_NORM,
    inputsToSave: ['x', 'gain'],
    gradFunc: (dy, saved, attrs) => {
      const [x, gain] = saved as tf.Tensor[];
      const [dx, dgain, dbias] = run(NORM_GRAD, { dy: dy as tf.Tensor, x: x!, gain: gain! }, attrs);
      releaseConsumed(dy, saved);
      return { x: () => dx!, gain: () => dgain!, bias: () => dbias! };
    },
  });
  // The mask is held constant: its thunk below allocates nothing unless called, and tfjs's tape calls
  // an input's thunk only where that input is a function of the tensors differentiated (tape.ts prunes
  // the rest). The engine builds masks from token ids, never from a variable, so a training step makes
  // no zeros here. The tiled path (tiledAttention.ts) is a tf.customGrad, whose
  // gradients are returned eagerly, so there the mask is saved beside the inputs instead.
  const attentionGrad =
    (withKV: boolean): tf.GradConfig['gradFunc'] =>
    (dy, saved, attrs) => {
      const [q, kv, mask] = withKV ? (saved as tf.Tensor[]) : [saved[0], undefined, saved[1]];
      const [dq, dkv] = run(ATTENTION_GRAD, { dy: dy as tf.Tensor, q: q!, mask: mask!, ...(kv ? { kv } : {}) }, attrs);
      const [maskShape, maskDtype] = [mask!.shape, mask!.dtype];
      releaseConsumed(dy, saved);
      return { q: () => dq!, ...(kv ? { kv: () => dkv! } : {}), mask: () => tf.zeros(maskShape, maskDtype) };
    };
  tf.registerGradient({ kernelName: SELF_ATTENTION, inputsToSave: ['q', 'mask'], gradFunc: attentionGrad(false) });
  tf.registerGradient({
    kernelName: CROSS_ATTENTION,
    inputsToSave: ['q', 'kv', 'mask'],
    gradFunc: attentionGrad(true),
  });
}

/** Every kernel a block pass (ops/block.ts) runs, forward and backward. */
export const TRAINING_KERNELS = [
  LINEAR,
  LINEAR_GRAD,
  DROPOUT,
  DROPOUT_ADD_NORM,
  LAYER_NORM,
  NORM_GRAD,
  SELF_ATTENTION,
  CROSS_ATTENTION,
  ATTENTION_GRAD,
] as const;

/**
 * Whether the active backend has every kernel above (wasm with the native addon; webgpu). Tests that
 * compare them with tfjs's ops pass ForwardContext.ops (ops/index.ts) instead.
 */
export function hasTrainingKernels(): boolean {
  const backend = tf.getBackend();
  return TRAINING_KERNELS.every((name) => tf.getKernel(name, backend) !== undefined);
}

/**
 * softmax(Q·Kᵀ/√dk + mask)·V per head, the heads concatenated: self-attention from qkv [B, T, 3d]
 * (Q, K, V side by side), or cross-attention from q [B, T, d] and kv [B, S, 2d] (K, V side by side);
 * mask additive, [B or 1, 1, T or 1, S]. → [B, T, d]; null for a mask of another shape. Needs
 * hasTrainingKernels(). With the tiled kernels where the backend has them (tiledAttention.ts).
 */
export function blockAttention(
  q: tf.Tensor3D,
  kv: tf.Tensor3D | undefined,
  mask: tf.Tensor,
  heads: number,
): tf.Tensor3D | null {
  const [b, t] = q.shape;
  const s = kv ? kv.shape[1] : t;
  const [mb, one, mt, ms] = mask.shape;
  if (mask.rank !== 4 || (mb !== 1 && mb !== b) || one !== 1 || (mt !== 1 && mt !== t) || ms !== s) return null;
  if (usesTiledAttention((kv ? q.shape[2] : q.shape[2] / 3) / heads)) return tiledAttention(q, kv, mask, heads);
  const name = kv ? CROSS_ATTENTION : SELF_ATTENTION;
  return tf.engine().runKernel(name, kv ? { q, kv, mask } : { q, mask }, { heads, self: !kv }) as tf.Tensor3D;
}

/** Dropout of x at `rate`, drawn from `seed` (native/norm.c). Needs hasTrainingKernels(). */
export function blockDropout(x: tf.Tensor, rate: number, seed: number): tf.Tensor {
  return tf.engine().runKernel(DROPOUT, { x }, { rate, seed }) as tf.Tensor;
}

/** LayerNorm(x + Dropout(r)) over the last axis, dropout drawn from `seed` (native/norm.c). Needs hasTrainingKernels(). */
export function dropoutAddNorm(
  x: tf.Tensor,
  r: tf.Tensor,
  gain: tf.Tensor,
  bias: tf.Tensor,
  eps: number,
  rate: number,
  seed: number,
): tf.Tensor {
  return tf.engine().runKernel(DROPOUT_ADD_NORM, { x, r, gain, bias }, { eps, rate, seed }) as tf.Tensor;
}

/** LayerNorm(x) over the last axis, one kernel each way. Needs hasTrainingKernels(). */
export function blockLayerNorm(x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor, eps: number): tf.Tensor {
  return tf.engine().runKernel(LAYER_NORM, { x, gain, bias }, { eps }) as tf.Tensor;
}

/**
 * Σ over `xs` of Σ x², a float32 scalar: the active backend's SUM_OF_SQUARES where it has one (a
 * program per 6 tensors on webgpu), else tfjs's ops summed pairwise. Not with addN: one addN shader
 * over every parameter exceeds WebGPU's 8 storage buffers per stage and its pipeline fails to build.
 */
export function sumOfSquares(xs: tf.Tensor[]): tf.Scalar {
  if (tf.getKernel(SUM_OF_SQUARES, tf.getBackend()))
    return tf.engine().runKernel(SUM_OF_SQUARES, { ...xs } as unknown as tf.NamedTensorMap) as tf.Scalar;
  return xs.map((x) => tf.sum(tf.square(x))).reduce((a, b) => tf.add(a, b)) as tf.Scalar;
}
