/**
 * Value-weighted attention (Kobayashi et al., 2020, "Attention is Not Only a Weight"): how much of
 * key j reaches query i's output through head h, ‖α_ij · (x_j W^V_h + b^V_h) W^O_h‖₂, where W^O_h
 * is the d_v rows of W^O (in the paper's x·W notation; the columns of out_proj.weight) that head
 * h's output occupies. W^O's bias b^O is added once after the heads are summed, is owned by no head
 * and no key, and is left out, as Kobayashi et al. leave it out. A head's gate ξ (an ablation) is
 * not applied: the norm is what the head would carry.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { AttentionParams } from '../model/params';

/**
 * ‖v_j W^O_h‖₂ of each head and key: v [B, h, S, dv] (the values as projected, bias included), W^O
 * as out_proj.weight [d, h·dv] → [B, h, S].
 */
export function valueNorms(attn: AttentionParams, v: tf.Tensor4D): tf.Tensor3D {
  return tf.tidy(() => {
    const [B, h, S, dv] = v.shape;
    const d = attn.wO.shape[0]!;
    const wOh = tf.transpose(tf.reshape(attn.wO, [d, h, dv]), [1, 2, 0]); // [h, dv, d]: W^O_h
    const vh = tf.reshape(tf.transpose(v, [1, 0, 2, 3]), [h, B * S, dv]); // [h, B·S, dv]
    const out = tf.matMul(vh, wOh); // [h, B·S, d]: v_j W^O_h
    const norms = tf.sqrt(tf.sum(tf.square(out), -1)); // [h, B·S]
    return tf.transpose(tf.reshape(norms, [h, B, S]), [1, 0, 2]) as tf.Tensor3D; // [B, h, S]
  });
}

/**
 * ‖α_ij · v_j W^O_h‖₂ = α_ij · ‖v_j W^O_h‖₂ (α ≥ 0): weights [B, h, T, S] and the values [B, h, S, dv]
 * of one attention → [B, h, T, S]. Masked keys (α = 0) get 0.
 */
export function valueWeighted(attn: AttentionParams, weights: tf.Tensor4D, v: tf.Tensor4D): tf.Tensor4D {
  return tf.tidy(() => {
    const [B, h, , S] = weights.shape;
    return tf.mul(weights, tf.reshape(valueNorms(attn, v), [B, h, 1, S])) as tf.Tensor4D;
  });
}
