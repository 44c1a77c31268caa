/**
 * The model's ops for decoding, through the fused kernels without gradients (backend/inferenceOps.ts):
 * linear maps (W^Q, W^K, W^V read in place from the stacked weight), residual + LayerNorm, and for one
 * query position the attention of the decoder's self- and cross-attention, its W^Q, W^K, W^V one
 * product. Outside training only (no dropout); they keep no weights; heads may be gated. Where the
 * backend lacks a kernel, tfjs ops do the same.
 */
import * as tf from '@tensorflow/tfjs-core';
import {
  fusedAddLayerNorm,
  fusedAttendOne,
  fusedLinear,
  fusedLinearSplit,
  hasInferenceKernels,
  hasLinearKernel,
} from '../backend/inferenceOps';
import {
  gate,
  type HeadGate,
  isKeysValues,
  type KeysValues,
  mergeHeads,
  type Projection,
  projection,
  QKV,
  scaledDotProductAttention,
  splitHeads,
} from '../model/attention';
import { LAYER_NORM_EPS, layerNorm } from '../model/layers';
import type { AttentionParams, NormParams } from '../model/params';
import type { AttentionCall, ModelOps } from './modelOps';
import { plainOps } from './plain';

/** x: [B, T, d] → (x·W + b) split into heads: [B, h, T, dk] */
function project(attn: AttentionParams, which: Projection, h: number, x: tf.Tensor3D): tf.Tensor4D {
  if (hasLinearKernel()) {
    const d = attn.wQKV.shape[1]!; // the block's rows of the stacked weight, read in place
    return splitHeads(fusedLinear(x, attn.wQKV, attn.bQKV, false, [QKV.indexOf(which) * d, d]), h);
  }
  const { w, b } = projection(attn, which);
  return splitHeads(fusedLinear(x, w, b), h);
}

const keysValues = (attn: AttentionParams, h: number, x: tf.Tensor3D): KeysValues => ({
  k: project(attn, 'k', h, x),
  v: project(attn, 'v', h, x),
});

/**
 * Self-attention's queries, keys and values of one position from one product with the stacked
 * [3d, d] in-projection (as PyTorch's in_proj_weight): x [B, 1, d] → q [B, h, 1, dk] and k, v
 * [B, h, 1, dk] (splitting heads of one position is a reshape).
 */
function projectQKVOne(attn: AttentionParams, h: number, x: tf.Tensor3D): { q: tf.Tensor4D } & KeysValues {
  const [q, k, v] = fusedLinearSplit(x, attn.wQKV, attn.bQKV, 3).map((y) => splitHeads(y, h));
  return { q: q!, k: k!, v: v! };
}

/** Concat(head_1, …, head_h)·W^O, each head gated first: heads [B, h, T, dv] → [B, T, d] */
function throughWO(attn: AttentionParams, heads: tf.Tensor4D, gates: HeadGate | undefined): tf.Tensor3D {
  const gated = gates ? gate(heads, gates) : heads; // [B, h, T, dv]
  return fusedLinear(mergeHeads(gated), attn.wO, attn.bO) as tf.Tensor3D;
}

/** One query position (xq [B, 1, d]) in one kernel; null where it cannot run. `q`: projected already. */
function attendOne(
  attn: AttentionParams,
  h: number,
  xq: tf.Tensor3D,
  kv: KeysValues,
  mask?: tf.Tensor,
  gates?: HeadGate,
  projected?: tf.Tensor4D,
): tf.Tensor3D | null {
  if (xq.shape[1] !== 1) return null;
  const q = projected ?? project(attn, 'q', h, xq); // [B, h, 1, dk]
  const output = fusedAttendOne(q, kv.k, kv.v, mask); // [B, h, 1, dv]
  if (!output) return null;
  return throughWO(attn, output as tf.Tensor4D, gates); // [B, 1, d]
}

/** The decoder's attentions try the one-query kernel; the encoder's (and what it cannot take) attend by eq. 1. */
function attention({ attn, heads: h, kind, xq, xkv, mask, gate: gates, extend }: AttentionCall): tf.Tensor3D {
  const oneStep = kind === 'decoder_self' && xq.shape[1] === 1 && hasInferenceKernels();
  const qkv = oneStep ? projectQKVOne(attn, h, xq) : undefined; // 3 × [B, h, 1, dk]
  let kv = qkv ?? (isKeysValues(xkv) ? xkv : keysValues(attn, h, xkv)); // [B, h, S, dk]
  if (extend) kv = extend(kv); // [B, h, T_total, dk]
  const one = kind !== 'encoder_self' ? attendOne(attn, h, xq, kv, mask, gates, qkv?.q) : null; // [B, 1, d]
  if (one) return one;
  const q = project(attn, 'q', h, xq); // [B, h, T, dk]
  const { output } = scaledDotProductAttention(q, kv.k, kv.v, mask); // [B, h, T, dv]
  return throughWO(attn, output as tf.Tensor4D, gates); // [B, T, d]
}

/** LayerNorm(x + r) (LayerNorm(x) without r) in one kernel. */
const addNorm = (norm: NormParams, x: tf.Tensor, r?: tf.Tensor): tf.Tensor =>
  fusedAddLayerNorm(x, r, norm.gain, norm.bias, LAYER_NORM_EPS, (z) => layerNorm(norm, z));

export const decodingOps: ModelOps = {
  name: 'decoding',
  linear: (x, w, b) => fusedLinear(x, w, b),
  layerNorm: (norm, x) => addNorm(norm, x),
  dropout: plainOps.dropout, // the identity: decoding passes have rate 0
  dropoutAddNorm: (norm, x, r) => addNorm(norm, x, r), // no dropout outside training
  feedForward: (ffn, x) => fusedLinear(fusedLinear(x, ffn.w1, ffn.b1, true), ffn.w2, ffn.b2),
  keysValues,
  appendKeysValues: plainOps.appendKeysValues,
  multiHeadAttention: attention,
};
