/**
 * Freeing the backward pass's tensors as it goes (issue 28: a step's GPU memory no higher than
 * PyTorch's). tfjs's tape keeps every gradient it computes and every forward value a node saved
 * until the whole backward pass ends (tfjs-core's backpropagateGradients runs in one tidy); PyTorch
 * frees each as soon as nothing left needs it. The engine's own gradient functions
 * (backend/trainingOps.ts, train/loss.ts) do that themselves inside `releasingConsumed`:
 * - dy, the gradient of the node's own output, once the node's input gradients are computed: tfjs
 *   walks the tape from the last node to the first, so every node that read that output has passed
 *   its gradient back already and none will ask for it again;
 * - the node's saved tensors (tfjs's own clones, one per node: the forward value lives on while
 *   another node's clone of it does).
 * Only inside `releasingConsumed`, whose caller guarantees what makes that safe: the gradients are
 * of variables (never of a node's output), dy at the root is tfjs's own (variableGrads passes none),
 * and no gradient of a gradient is taken. Elsewhere (tf.grads with a caller's dy, tests comparing
 * kernels) nothing is disposed early. Freeing changes no value: a buffer a queued kernel still reads
 * is given back only after that kernel is submitted (tfjs-backend-webgpu), and wasm and cpu compute
 * each kernel when it is called.
 */
import * as tf from '@tensorflow/tfjs-core';

let depth = 0;

/** Runs f (a tf.variableGrads over the model's variables) with the engine's gradients freeing what they consumed. */
export function releasingConsumed<T>(f: () => T): T {
  depth++;
  try {
    return f();
  } finally {
    depth--;
  }
}

/**
 * Disposes what a gradient function consumed (its dy, its saved tensors) when called inside
 * releasingConsumed; does nothing elsewhere. Never pass a tensor the function returns.
 */
export function releaseConsumed(...consumed: (tf.Tensor | tf.Tensor[] | undefined)[]): void {
  if (depth > 0) tf.dispose(consumed.flat().filter((t): t is tf.Tensor => t !== undefined));
}
