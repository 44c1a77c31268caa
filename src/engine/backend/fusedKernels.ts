/**
 * The fused loss and Adam kernels' names (wasm: wasm/nativeOps.ts; webgpu: webgpu/loss.ts,
 * webgpu/adamUpdate.ts), and whether the active backend has them: train/loss.ts and train/adam.ts
 * run them where it does, and tfjs ops otherwise.
 */
import * as tf from '@tensorflow/tfjs-core';

export const SMOOTHED_CROSS_ENTROPY = 'AttentionDebuggerSmoothedCrossEntropy';
export const ADAM_UPDATE = 'AttentionDebuggerAdamUpdate';

/** Whether the active backend has one of the fused kernels above (either). */
export function hasFusedKernel(name: typeof SMOOTHED_CROSS_ENTROPY | typeof ADAM_UPDATE): boolean {
  return tf.getKernel(name, tf.getBackend()) !== undefined;
}
