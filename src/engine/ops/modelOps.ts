/**
 * The operations the model's layers are written in (§3.1–3.3), as one interface: model/ writes the
 * paper over them, and each pass picks one implementation once (ops/index.ts opsFor): plain tfjs ops
 * (plain.ts), the training kernels with gradients (block.ts), or the gradient-free decoding kernels
 * (decoding.ts); a long pair's pass passes its own (long.ts: attention a slice of rows at a time).
 * Every implementation gives the same numbers to float rounding.
 */
import type * as tf from '@tensorflow/tfjs-core';
import type { AttentionKind } from '../../protocol/attention';
import type { HeadGate, KeysValues } from '../model/attention';
import type { AttentionParams, FeedForwardParams, NormParams } from '../model/params';

/** One multi-head attention of one layer (§3.2.2). */
export interface AttentionCall {
  attn: AttentionParams;
  /** h */
  heads: number;
  kind: AttentionKind;
  /** The queries' positions [B, T, d]. */
  xq: tf.Tensor3D;
  /** The keys' and values' positions [B, S, d] (xq itself for self-attention), or them projected already. */
  xkv: tf.Tensor3D | KeysValues;
  /** Additive, broadcastable to [B, h, T, S]. */
  mask?: tf.Tensor;
  /** The heads' gates ξ (head masks and ablations). */
  gate?: HeadGate;
  /** Incremental decoding: the new positions' keys and values → every position's [B, h, T_total, dk]. */
  extend?: (kv: KeysValues) => KeysValues;
  /**
   * Given, it is handed the weights [B, h, T, S], the heads before W^O [B, h, T, dv], and the
   * queries' input [B, T, d] with the keys and values as projected [B, h, S, dk].
   */
  keep?: (weights: tf.Tensor4D, heads: tf.Tensor4D, inputs: { xq: tf.Tensor3D; kv: KeysValues }) => void;
}

export interface ModelOps {
  readonly name: 'plain' | 'block' | 'decoding' | 'long';
  /** y = x·Wᵀ + b; x [..., in], W [out, in] → [..., out] */
  linear(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor): tf.Tensor;
  /** LayerNorm(x) over the last axis */
  layerNorm(norm: NormParams, x: tf.Tensor): tf.Tensor;
  /** Dropout(x) at `rate` (0: the identity), drawn from `seed` when given (§5.4) */
  dropout(x: tf.Tensor, rate: number, seed?: number): tf.Tensor;
  /** LayerNorm(x + Dropout(r)): post-LN's residual connection (§3.1) */
  dropoutAddNorm(norm: NormParams, x: tf.Tensor, r: tf.Tensor, rate: number, seed?: number): tf.Tensor;
  /** FFN(x) = max(0, x·W1 + b1)·W2 + b2 (eq. 2) */
  feedForward(ffn: FeedForwardParams, x: tf.Tensor): tf.Tensor;
  /** K·W^K, V·W^V: x [B, S, d] → 2 × [B, h, S, dk] */
  keysValues(attn: AttentionParams, h: number, x: tf.Tensor3D): KeysValues;
  /** The keys and values of earlier positions with the new ones appended (rows: a beam's reordering of past). */
  appendKeysValues(past: KeysValues, next: KeysValues, rows?: tf.Tensor1D): KeysValues;
  /** MultiHead(Q, K, V) = Concat(head_1, …, head_h)·W^O: [B, T, d] */
  multiHeadAttention(call: AttentionCall): tf.Tensor3D;
}
