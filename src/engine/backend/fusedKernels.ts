/**
 * The fused loss and Adam kernels' names (wasm: wasm/nativeOps.ts; webgpu: webgpu/loss.ts,
 * webgpu/adamUpdate.ts), and whether the active backend has them: train/loss.ts and train/adam.ts
 * run them where it does, and tfjs ops otherwise.
 */
import * as tf from '@tensorflow/tfjs-core';

export const SMOOTHED_CROSS_ENTROPY = 'AttentionDebuggerSmoothedCrossEntropy';
/** x · s (s a scalar) written over x, which its owner gives up: the loss's gradient times dy (webgpu). */
export const SCALE_INTO = 'AttentionDebuggerScaleInto';
export const ADAM_UPDATE = 'AttentionDebuggerAdamUpdate';
/** Every parameter's update at once, laid end to end (train/flatAdam.ts; webgpu only). */
export const ADAM_UPDATE_FLAT = 'AttentionDebuggerAdamUpdateFlat';
/** Tensors laid end to end in one float32 vector, and such a vector cut back into pieces (webgpu: copies). */
export const FLAT_GATHER = 'AttentionDebuggerFlatGather';
export const FLAT_SCATTER = 'AttentionDebuggerFlatScatter';

/** The attributes of ADAM_UPDATE and ADAM_UPDATE_FLAT: Adam's options, the rate and t's bias corrections. */
export interface AdamAttrs {
  beta1: number;
  beta2: number;
  epsilon: number;
  lr: number;
  c1: number;
  c2: number;
}

/** Whether the active backend has one of the fused kernels above (either). */
export function hasFusedKernel(
  name:
    | typeof SMOOTHED_CROSS_ENTROPY
    | typeof SCALE_INTO
    | typeof ADAM_UPDATE
    | typeof ADAM_UPDATE_FLAT
    | typeof FLAT_GATHER
    | typeof FLAT_SCATTER,
): boolean {
  return tf.getKernel(name, tf.getBackend()) !== undefined;
}
