/**
 * §5.4 Label smoothing (ε_ls = 0.1), with the semantics of the Annotated Transformer's
 * LabelSmoothing: the target class gets 1 − ε, the smoothing mass ε is spread over the V − 2
 * classes that are neither the target nor padding, the padding column gets 0, and positions whose
 * target is padding are left out of the loss. The loss is KL(q ‖ p) per non-pad token; its
 * gradient is that of the smoothed cross-entropy (they differ by the constant entropy of q).
 */
import * as tf from '@tensorflow/tfjs-core';
import { hasFusedKernel, SCALE_INTO, SMOOTHED_CROSS_ENTROPY } from '../backend/fusedKernels';
import { releaseConsumed } from '../backend/releaseConsumed';

export interface LossResult {
  /** KL(q ‖ p) summed over non-pad positions, divided by their count: the training objective. */
  loss: tf.Scalar;
  /** −log p(target) averaged over non-pad positions (unsmoothed; exp of it is the perplexity). */
  nll: tf.Scalar;
  /** Number of non-pad target positions. */
  tokens: number;
}

/** q of §5.4 over V classes: `confidence` on the target, `spread` on each other non-pad class; H(q). */
function smoothedTargets(v: number, smoothing: number): { confidence: number; spread: number; entropy: number } {
  if (smoothing > 0 && v < 3) throw new Error(`label smoothing needs at least 3 classes, got ${v}`);
  const confidence = 1 - smoothing;
  const spread = smoothing > 0 ? smoothing / (v - 2) : 0;
  const entropy =
    -(confidence > 0 ? confidence * Math.log(confidence) : 0) - (spread > 0 ? smoothing * Math.log(spread) : 0);
  return { confidence, spread, entropy };
}

/** logProbs: [N, V] (log-softmax output), targets: [N] int32 */
export function labelSmoothedLoss(
  logProbs: tf.Tensor2D,
  targets: tf.Tensor1D,
  padId: number,
  smoothing: number,
  tokens: number,
): LossResult {
  const v = logProbs.shape[1];
  const { confidence, spread, entropy } = smoothedTargets(v, smoothing);
  const keep = tf.cast(tf.notEqual(targets, padId), 'float32'); // [N]: 1 for real tokens
  const onTarget = tf.sum(tf.mul(logProbs, tf.oneHot(targets, v)), 1); // [N]: log p(target)
  // Σ_c q_c · log p_c over the V − 2 other non-pad classes = Σ_all − log p_pad − log p_target
  const onOthers = tf.sub(
    tf.sub(tf.sum(logProbs, 1), tf.squeeze(tf.slice(logProbs, [0, padId], [-1, 1]), [1])),
    onTarget,
  ); // [N]
  const crossEntropy = tf.neg(tf.add(tf.mul(onTarget, confidence), tf.mul(onOthers, spread))); // [N]: −Σ q log p
  const denom = Math.max(tokens, 1);
  return {
    loss: tf.div(tf.sum(tf.mul(tf.sub(crossEntropy, entropy), keep)), denom) as tf.Scalar,
    nll: tf.div(tf.sum(tf.mul(tf.neg(onTarget), keep)), denom) as tf.Scalar,
    tokens,
  };
}

export interface FusedLossResult {
  /** As LossResult.loss, differentiable with respect to the logits. */
  loss: tf.Scalar;
  /** As LossResult.nll; kept (tf.keep): the caller disposes it. */
  nll: tf.Scalar;
}

/**
 * The same loss from the logits (before the softmax) in one op whose gradient is written down:
 * d loss / d logits = (softmax(logits) − q) · keep / tokens, q the smoothed target distribution.
 * Autodiff through logSoftmax and labelSmoothedLoss takes ~15 passes over [N, V]; this takes 3 on
 * wasm (a native kernel, backend/wasm/nativeOps.ts), four dispatches on webgpu (backend/webgpu/loss.ts)
 * and a handful of tfjs ops elsewhere. Its gradient frees the saved gradient inside releasingConsumed
 * (backend/releaseConsumed.ts).
 * logits: [N, V] or [B, T, V] (N = B·T; taken whole, so that no reshape of the logits is on the tape
 * to keep their gradient alive), targets: [N] int32. `consumeLogits`: the caller reads the logits no
 * more (a training step, an evaluation), so the webgpu kernel writes their gradient over them and a
 * step holds one [N, V] buffer there, not two.
 */
export function smoothedLossFromLogits(
  logits: tf.Tensor,
  targets: tf.Tensor1D,
  padId: number,
  smoothing: number,
  tokens: number,
  consumeLogits = false,
): FusedLossResult {
  const v = logits.shape[logits.rank - 1]!;
  const { confidence, spread, entropy } = smoothedTargets(v, smoothing);
  const scale = 1 / Math.max(tokens, 1);
  let nll: tf.Scalar | undefined;
  const fused = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [input, save] = args as [tf.Tensor, tf.GradSaveFunc];
    const x = tf.reshape(input, [-1, v]) as tf.Tensor2D; // [N, V]: not on the tape (inside the op)
    const [rowLoss, rowNll, grad] = hasFusedKernel(SMOOTHED_CROSS_ENTROPY)
      ? (tf.engine().runKernel(SMOOTHED_CROSS_ENTROPY, { logits: x, targets }, {
          padId,
          confidence,
          spread,
          entropy,
          scale,
          consumeLogits,
        } as unknown as tf.NamedAttrMap) as tf.Tensor[])
      : smoothedCrossEntropyOps(x, targets, padId, confidence, spread, entropy, scale);
    nll = tf.keep(tf.mul(tf.sum(rowNll), scale) as tf.Scalar);
    save([tf.reshape(grad!, input.shape)]); // [..., V] as the logits came
    return {
      value: tf.mul(tf.sum(rowLoss), scale) as tf.Scalar,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        // × dy over the saved gradient where the backend can (its only reader is this gradient)
        const over = consumeLogits && hasFusedKernel(SCALE_INTO);
        const dx = over ? tf.engine().runKernel(SCALE_INTO, { x: saved[0]!, s: dy }) : tf.mul(dy, saved[0]!);
        releaseConsumed(saved); // dy is the root's: variableGrads's own scalar 1
        return dx;
      },
    };
  });
  const loss = fused(logits) as tf.Scalar;
  return { loss, nll: nll! };
}

/** The fused kernel's outputs with tfjs ops: rowLoss [N], rowNll [N], grad [N, V] (for backends without it). */
function smoothedCrossEntropyOps(
  logits: tf.Tensor2D,
  targets: tf.Tensor1D,
  padId: number,
  confidence: number,
  spread: number,
  entropy: number,
  scale: number,
): tf.Tensor[] {
  const v = logits.shape[1];
  const keep = tf.cast(tf.notEqual(targets, padId), 'float32'); // [N]
  const logProbs = tf.logSoftmax(logits); // [N, V]
  const target = tf.oneHot(targets, v, 1, 0, 'float32'); // [N, V]
  const notPad = tf.oneHot(tf.tensor1d([padId], 'int32'), v, 0, 1, 'float32'); // [1, V]
  const q = tf.add(tf.mul(notPad, spread), tf.mul(target, confidence - spread)); // [N, V]: conf at target, spread elsewhere, 0 at pad
  const rowLoss = tf.mul(tf.sub(tf.neg(tf.sum(tf.mul(q, logProbs), 1)), entropy), keep);
  const rowNll = tf.mul(tf.neg(tf.sum(tf.mul(target, logProbs), 1)), keep);
  const grad = tf.mul(tf.sub(tf.exp(logProbs), q), tf.mul(tf.expandDims(keep, 1), scale));
  return [rowLoss, rowNll, grad];
}
