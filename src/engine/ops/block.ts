/**
 * The model's ops through the training kernels with gradients (backend/trainingOps.ts: wasm's native
 * kernels or webgpu's), whole sequences each: linear maps (the FFN's ReLU inside), LayerNorm,
 * LayerNorm(x + Dropout(r)) and multi-head attention one kernel each way. They keep no weights and
 * gate no heads; an attention the kernel cannot take (its mask's shape, cached or projected keys)
 * runs in the plain ops.
 */
import type * as tf from '@tensorflow/tfjs-core';
import { fusedLinear } from '../backend/inferenceOps';
import { blockAttention, blockLayerNorm, dropoutAddNorm } from '../backend/trainingOps';
import { isKeysValues } from '../model/attention';
import { LAYER_NORM_EPS, randomSeed } from '../model/layers';
import type { AttentionParams } from '../model/params';
import type { AttentionCall, ModelOps } from './modelOps';
import { plainOps, plainAttention } from './plain';

/**
 * MultiHead over whole sequences: self-attention (xkv undefined) projects Q, K, V with one product
 * by the stacked [W^Q; W^K; W^V], cross-attention Q by W^Q and K, V by [W^K; W^V]; the heads are
 * read in place and come out concatenated for W^O. xq [B, T, d] → [B, T, d]; null when the mask's
 * shape does not suit the kernel.
 */
export function attendBlock(
  attn: AttentionParams,
  h: number,
  xq: tf.Tensor3D,
  xkv: tf.Tensor3D | undefined,
  mask: tf.Tensor,
): tf.Tensor3D | null {
  const d = attn.wQKV.shape[1]!;
  const q = fusedLinear(xq, attn.wQKV, attn.bQKV, false, xkv ? [0, d] : [0, 0]) as tf.Tensor3D; // [B, T, d or 3d]
  const kv = xkv && (fusedLinear(xkv, attn.wQKV, attn.bQKV, false, [d, 2 * d]) as tf.Tensor3D); // [B, S, 2d]
  const heads = blockAttention(q, kv, mask, h); // [B, T, d]
  return heads && (fusedLinear(heads, attn.wO, attn.bO) as tf.Tensor3D);
}

function attention(call: AttentionCall): tf.Tensor3D {
  const { attn, heads, kind, xq, xkv, mask, extend } = call;
  const whole =
    mask && !extend && !isKeysValues(xkv) && attendBlock(attn, heads, xq, kind === 'cross' ? xkv : undefined, mask);
  return whole || plainAttention(call); // [B, T, d]
}

export const blockOps: ModelOps = {
  name: 'block',
  linear: (x, w, b) => fusedLinear(x, w, b),
  layerNorm: (norm, x) => blockLayerNorm(x, norm.gain, norm.bias, LAYER_NORM_EPS),
  dropout: plainOps.dropout,
  dropoutAddNorm: (norm, x, r, rate, seed) =>
    dropoutAddNorm(x, r, norm.gain, norm.bias, LAYER_NORM_EPS, rate, seed ?? randomSeed()),
  feedForward: (ffn, x) => fusedLinear(fusedLinear(x, ffn.w1, ffn.b1, true), ffn.w2, ffn.b2),
  keysValues: plainOps.keysValues,
  appendKeysValues: plainOps.appendKeysValues,
  multiHeadAttention: attention,
};
