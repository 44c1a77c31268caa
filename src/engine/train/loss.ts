/**
 * §5.4 Label smoothing (ε_ls = 0.1), with the semantics of the Annotated Transformer's
 * LabelSmoothing: the target class gets 1 − ε, the smoothing mass ε is spread over the V − 2
 * classes that are neither the target nor padding, the padding column gets 0, and positions whose
 * target is padding are left out of the loss. The loss is KL(q ‖ p) per non-pad token; its
 * gradient is that of the smoothed cross-entropy (they differ by the constant entropy of q).
 */
import * as tf from '@tensorflow/tfjs-core';

export interface LossResult {
  /** KL(q ‖ p) summed over non-pad positions, divided by their count: the training objective. */
  loss: tf.Scalar;
  /** −log p(target) averaged over non-pad positions (unsmoothed; exp of it is the perplexity). */
  nll: tf.Scalar;
  /** Number of non-pad target positions. */
  tokens: number;
}

/** logProbs: [N, V] (log-softmax output), targets: [N] int32 */
export function labelSmoothedLoss(logProbs: tf.Tensor2D, targets: tf.Tensor1D, padId: number, smoothing: number, tokens: number): LossResult {
  const v = logProbs.shape[1];
  if (smoothing > 0 && v < 3) throw new Error(`label smoothing needs at least 3 classes, got ${v}`);
  const keep = tf.cast(tf.notEqual(targets, padId), 'float32'); // [N]: 1 for real tokens
  const onTarget = tf.sum(tf.mul(logProbs, tf.oneHot(targets, v)), 1); // [N]: log p(target)
  const confidence = 1 - smoothing;
  const spread = smoothing > 0 ? smoothing / (v - 2) : 0;
  // Σ_c q_c · log p_c over the V − 2 other non-pad classes = Σ_all − log p_pad − log p_target
  const onOthers = tf.sub(tf.sub(tf.sum(logProbs, 1), tf.squeeze(tf.slice(logProbs, [0, padId], [-1, 1]), [1])), onTarget); // [N]
  const crossEntropy = tf.neg(tf.add(tf.mul(onTarget, confidence), tf.mul(onOthers, spread))); // [N]: −Σ q log p
  const entropy = -(confidence > 0 ? confidence * Math.log(confidence) : 0) - (spread > 0 ? smoothing * Math.log(spread) : 0); // H(q)
  const denom = Math.max(tokens, 1);
  return {
    loss: tf.div(tf.sum(tf.mul(tf.sub(crossEntropy, entropy), keep)), denom) as tf.Scalar,
    nll: tf.div(tf.sum(tf.mul(tf.neg(onTarget), keep)), denom) as tf.Scalar,
    tokens,
  };
}
