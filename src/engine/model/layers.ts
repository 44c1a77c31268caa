/** The building blocks of §3.1 and §3.3 in plain tfjs ops: linear maps, LayerNorm, the position-wise FFN. */
import * as tf from '@tensorflow/tfjs-core';
import type { FeedForwardParams, NormParams } from './params';

/** y = x·Wᵀ + b, with W [out, in] as PyTorch stores it. x: [..., in] → [..., out] */
export function linear(x: tf.Tensor, w: tf.Tensor, b?: tf.Tensor): tf.Tensor {
  const inDim = x.shape[x.shape.length - 1];
  const outDim = w.shape[0];
  const flat = tf.reshape(x, [-1, inDim]); // [N, in]
  let y = tf.matMul(flat, w, false, true); // [N, out]
  if (b) y = tf.add(y, b);
  return tf.reshape(y, [...x.shape.slice(0, -1), outDim]);
}

export const LAYER_NORM_EPS = 1e-5; // PyTorch's default

/** LayerNorm over the last axis (Ba et al. 2016): (x − μ) / √(σ² + ε) · γ + β, σ² biased. x: [..., d] */
export function layerNorm(norm: NormParams, x: tf.Tensor): tf.Tensor {
  const axis = x.shape.length - 1;
  const { mean, variance } = tf.moments(x, axis, true); // [..., 1]
  const normed = tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, LAYER_NORM_EPS)));
  return tf.add(tf.mul(normed, norm.gain), norm.bias);
}

/** FFN(x) = max(0, x·W1 + b1)·W2 + b2   (eq. 2). x: [B, T, d] → [B, T, d] */
export function positionwiseFeedForward(ffn: FeedForwardParams, x: tf.Tensor): tf.Tensor {
  const hidden = tf.relu(linear(x, ffn.w1, ffn.b1)); // [B, T, d_ff]
  return linear(hidden, ffn.w2, ffn.b2); // [B, T, d]
}

/** A dropout seed for an unseeded run. */
export const randomSeed = (): number => Math.floor(Math.random() * 2 ** 32);
