/**
 * Attention tiled in FlashAttention-2's scheme (webgpu/flashForward.ts, flashBackward.ts), chosen by
 * blockAttention (trainingOps.ts) where the active backend has it: the forward pass returns the
 * output O [B, T, d] and each row's log-sum-exp L [B, heads, T] of its scores, and the backward
 * recomputes the probabilities from Q, K and L instead of keeping anything [B·heads·T, S] in size.
 * Its gradient is a tf.customGrad, so that L is saved beside the inputs and O without being an output
 * of the op (tfjs would make a zero gradient for it every step).
 * The row kernels (SELF_ATTENTION, CROSS_ATTENTION) stay selectable for comparison: the environment
 * variable ATTENTION_DEBUGGER_ATTENTION=rows or setTiledAttention(false).
 */
import * as tf from '@tensorflow/tfjs-core';
import { releaseConsumed } from './releaseConsumed';

/** q [B, T, qWidth], kv? [B, S, kvWidth], mask → [O [B, T, d], L [B, heads, T]]; attrs { heads }. */
export const TILED_ATTENTION = 'AttentionDebuggerTiledAttention';
/** dy, q, kv?, mask, o, lse → [dq] (self-attention) or [dq, dkv] (cross-attention); attrs { heads }. */
export const TILED_ATTENTION_GRAD = 'AttentionDebuggerTiledAttentionGrad';
/** The largest head size (dk) the tiles hold in workgroup memory; larger heads use the row kernels. */
export const TILED_MAX_DK = 64;
/** `rows` selects the row kernels (SELF_ATTENTION, CROSS_ATTENTION) where the tiled ones exist. */
export const ATTENTION_ENV = 'ATTENTION_DEBUGGER_ATTENTION';

let tiledOn = process.env[ATTENTION_ENV] !== 'rows';

/** Turns the tiled kernels on (the default) or off (the row kernels), e.g. for a before/after. */
export function setTiledAttention(on: boolean): void {
  tiledOn = on;
}

/** Whether blockAttention uses the tiled kernels for heads of size dk on the active backend. */
export function usesTiledAttention(dk: number): boolean {
  const backend = tf.getBackend();
  return (
    tiledOn &&
    dk <= TILED_MAX_DK &&
    tf.getKernel(TILED_ATTENTION, backend) !== undefined &&
    tf.getKernel(TILED_ATTENTION_GRAD, backend) !== undefined
  );
}

const run = (name: string, inputs: tf.NamedTensorMap, heads: number): tf.Tensor[] =>
  tf.engine().runKernel(name, inputs, { heads }) as unknown as tf.Tensor[];

/**
 * softmax(Q·Kᵀ/√dk + mask)·V per head as blockAttention's: self-attention from q [B, T, 3d], or
 * cross-attention from q [B, T, d] and kv [B, S, 2d] → [B, T, d], with the tiled kernels.
 */
export function tiledAttention(
  q: tf.Tensor3D,
  kv: tf.Tensor3D | undefined,
  mask: tf.Tensor,
  heads: number,
): tf.Tensor3D {
  // The mask is no input of the custom gradient (it is saved beside them): it has no gradient to
  // compute, where an input would need a tensor of zeros made every step.
  const forward = (ins: tf.NamedTensorMap, save: tf.GradSaveFunc) => {
    const [o, lse] = run(TILED_ATTENTION, { ...ins, mask }, heads); // [B, T, d], [B, heads, T]
    save([...Object.values(ins), mask, o!, lse!]);
    return o as tf.Tensor3D;
  };
  const backward = (dy: tf.Tensor, saved: tf.Tensor[]) => {
    const [sq, skv, smask, o, lse] = kv ? saved : [saved[0], undefined, ...saved.slice(1)];
    const ins = { dy, q: sq!, ...(skv ? { kv: skv } : {}), mask: smask!, o: o!, lse: lse! };
    const grads = run(TILED_ATTENTION_GRAD, ins, heads);
    releaseConsumed(dy, saved); // inside a training step's backward pass only (releaseConsumed.ts)
    return grads;
  };
  if (kv) {
    const f = tf.customGrad((q, kv, save) => {
      const value = forward({ q, kv } as tf.NamedTensorMap, save as tf.GradSaveFunc);
      return { value, gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => backward(dy, saved) };
    });
    return f(q, kv) as tf.Tensor3D;
  }
  const f = tf.customGrad((q, save) => {
    const value = forward({ q } as tf.NamedTensorMap, save as tf.GradSaveFunc);
    return { value, gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => backward(dy, saved) };
  });
  return f(q) as tf.Tensor3D;
}
