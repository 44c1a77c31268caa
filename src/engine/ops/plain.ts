/**
 * The model's ops in plain tfjs ops (model/layers.ts, model/attention.ts): with gradients, keeping
 * attention weights and head outputs when asked, gating heads. The reference every other ops
 * implementation equals.
 */
import * as tf from '@tensorflow/tfjs-core';
import { gatherAppend } from '../backend/inferenceOps';
import { attendTo, isKeysValues, type KeysValues, projectKeysValues } from '../model/attention';
import { layerNorm, linear, positionwiseFeedForward } from '../model/layers';
import { dropout } from './dropout';
import type { AttentionCall, ModelOps } from './modelOps';

/** past's keys and values with next's appended along the positions: [B, h, T_total, dk] each. */
export function appendKeysValues(past: KeysValues, next: KeysValues, rows?: tf.Tensor1D): KeysValues {
  if (rows)
    return {
      k: gatherAppend(past.k, next.k, rows) as tf.Tensor4D,
      v: gatherAppend(past.v, next.v, rows) as tf.Tensor4D,
    };
  return { k: tf.concat([past.k, next.k], 2), v: tf.concat([past.v, next.v], 2) };
}

/** MultiHead(Q, K, V) by attention.ts attendTo: the weights and heads are computed, and kept when asked. */
export function plainAttention({ attn, heads, xq, xkv, mask, gate, extend, keep }: AttentionCall): tf.Tensor3D {
  let kv = isKeysValues(xkv) ? xkv : projectKeysValues(attn, heads, xkv); // [B, h, S, dk]
  if (extend) kv = extend(kv); // [B, h, T_total, dk]
  const r = attendTo(attn, heads, xq, kv, mask, gate);
  keep?.(r.weights, r.heads, { xq, kv }); // [B, h, T, S], [B, h, T, dv], [B, T, d], [B, h, S, dk]
  return r.output; // [B, T, d]
}

export const plainOps: ModelOps = {
  name: 'plain',
  linear: (x, w, b) => linear(x, w, b),
  layerNorm,
  dropout: (x, rate, seed) => dropout(x, rate, true, seed),
  dropoutAddNorm: (norm, x, r, rate, seed) => layerNorm(norm, tf.add(x, dropout(r, rate, true, seed))),
  feedForward: positionwiseFeedForward,
  keysValues: projectKeysValues,
  appendKeysValues,
  multiHeadAttention: plainAttention,
};
