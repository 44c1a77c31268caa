/**
 * §3.2 Attention. Scaled dot-product attention and multi-head attention, with masks applied as
 * −∞ before the softmax, and the weights returned when asked (the debugger's whole point).
 */
import * as tf from '@tensorflow/tfjs-core';
import { linear } from './layers';
import type { AttentionParams, LinearParams, TransformerLayers } from './params';

/**
 * Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V   (eq. 1)
 * q: [..., T, dk], k: [..., S, dk], v: [..., S, dv]; mask: additive bias broadcastable to
 * [..., T, S] (0 where allowed, −∞ where masked). Returns output [..., T, dv] and weights [..., T, S].
 */
export function scaledDotProductAttention(
  q: tf.Tensor,
  k: tf.Tensor,
  v: tf.Tensor,
  mask?: tf.Tensor,
): { output: tf.Tensor; weights: tf.Tensor } {
  const dk = q.shape[q.shape.length - 1];
  let scores = tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(dk)); // [..., T, S]
  if (mask) scores = tf.add(scores, mask);
  const weights = tf.softmax(scores); // [..., T, S]
  return { output: tf.matMul(weights, v), weights }; // [..., T, dv]
}

/** Additive key-padding bias: [B, S] ids → [B, 1, 1, S], −∞ at pad positions. */
export function paddingMask(ids: tf.Tensor2D, padId: number): tf.Tensor4D {
  const [b, s] = ids.shape;
  return tf.tidy(() =>
    tf.reshape(tf.where(tf.equal(ids, padId), tf.fill([b, s], -Infinity), tf.zeros([b, s])), [b, 1, 1, s]),
  );
}

/**
 * Additive causal bias: position i may attend to j ≤ i only (§3.2.3). Query rows [r0, r1) of the
 * [T, T] mask, all of them by default: [1, 1, r1 − r0, T].
 */
export function causalMask(t: number, r0 = 0, r1 = t): tf.Tensor4D {
  return tf.tidy(() => {
    const j = tf.reshape(tf.range(0, t, 1, 'int32'), [1, t]); // key positions
    const i = tf.reshape(tf.range(r0, r1, 1, 'int32'), [r1 - r0, 1]); // query positions
    const future = tf.greater(j, i); // [r, T]: j > i
    const r = r1 - r0;
    return tf.reshape(tf.where(future, tf.fill([r, t], -Infinity), tf.zeros([r, t])), [1, 1, r, t]);
  });
}

/** [B, T, d] → [B, h, T, dk] (for one position the same memory: a reshape, no transpose) */
export function splitHeads(x: tf.Tensor, h: number): tf.Tensor4D {
  const [b, t, d] = x.shape;
  if (t === 1) return tf.reshape(x, [b, h, 1, d / h]);
  return tf.transpose(tf.reshape(x, [b, t, h, d / h]), [0, 2, 1, 3]);
}

/** [B, h, T, dk] → [B, T, h·dk] (a reshape for one position) */
export function mergeHeads(x: tf.Tensor): tf.Tensor3D {
  const [b, h, t, dk] = x.shape;
  if (t === 1) return tf.reshape(x, [b, 1, h * dk]);
  return tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [b, t, h * dk]);
}

export interface KeysValues {
  k: tf.Tensor4D; // [B, h, S, dk]
  v: tf.Tensor4D; // [B, h, S, dv]
}

/** Whether keys/values are projected already (else they are the positions [B, S, d] to project). */
export const isKeysValues = (x: tf.Tensor | KeysValues): x is KeysValues => !(x instanceof tf.Tensor);

/** Which of the stacked in-projection's blocks: W^Q, W^K or W^V. */
export type Projection = 'q' | 'k' | 'v';
export const QKV: readonly Projection[] = ['q', 'k', 'v'];

/** W^Q, W^K or W^V [d, d] and its bias [d]: block 0, 1 or 2 of the stacked [3d, d], [3d], or the one sliced already. */
export function projection(attn: AttentionParams, which: Projection): LinearParams {
  if (attn.sliced) return attn.sliced[which];
  const d = attn.wQKV.shape[1]!;
  const i = QKV.indexOf(which);
  return { w: tf.slice(attn.wQKV, [i * d, 0], [d, d]), b: tf.slice(attn.bQKV, [i * d], [d]) };
}

/** x: [B, T, d] → (x·W + b) split into heads: [B, h, T, dk] */
export function project(attn: AttentionParams, which: Projection, h: number, x: tf.Tensor3D): tf.Tensor4D {
  const { w, b } = projection(attn, which);
  return splitHeads(linear(x, w, b), h);
}

/**
 * For decoding, where the weights stay fixed and every step projects one position: the model's
 * layers with W^Q, W^K, W^V of every attention sliced once (as non-trainable variables), instead of
 * at every step (measured: 18% of greedy decoding's time went to those slices). dispose() frees them.
 */
export function slicedProjections(layers: TransformerLayers): { layers: TransformerLayers; dispose(): void } {
  const added: tf.Variable[] = [];
  const fixed = (t: tf.Tensor): tf.Variable => {
    const v = tf.variable(t, false);
    t.dispose();
    added.push(v);
    return v;
  };
  const sliceOne = (attn: AttentionParams, which: Projection): LinearParams => {
    const [w, b] = tf.tidy(() => {
      const p = projection(attn, which);
      return [p.w, p.b];
    });
    return { w: fixed(w), b: fixed(b) };
  };
  const slice = (attn: AttentionParams): AttentionParams => ({
    ...attn,
    sliced: { q: sliceOne(attn, 'q'), k: sliceOne(attn, 'k'), v: sliceOne(attn, 'v') },
  });
  const view: TransformerLayers = {
    ...layers,
    encoder: layers.encoder.map((l) => ({ ...l, selfAttn: slice(l.selfAttn) })),
    decoder: layers.decoder.map((l) => ({ ...l, selfAttn: slice(l.selfAttn), crossAttn: slice(l.crossAttn) })),
  };
  return { layers: view, dispose: () => tf.dispose(added) };
}

/** Projects keys and values once: K·W^K, V·W^V. xkv: [B, S, d] → 2 × [B, h, S, dk] */
export function projectKeysValues(attn: AttentionParams, h: number, xkv: tf.Tensor3D): KeysValues {
  return { k: project(attn, 'k', h, xkv), v: project(attn, 'v', h, xkv) };
}

/** Concat(head_1, …, head_h)·W^O, each head gated first (ξ, mean): heads [B, h, T, dv] → [B, T, d]. */
function throughWO(attn: AttentionParams, heads: tf.Tensor4D, gates: HeadGate | undefined): tf.Tensor3D {
  const gated = gates ? gate(heads, gates) : heads; // [B, h, T, dv]
  return linear(mergeHeads(gated), attn.wO, attn.bO) as tf.Tensor3D;
}

/**
 * MultiHead(Q, K, V) = Concat(head_1, …, head_h)·W^O, head_i = Attention(Q·W_i^Q, K·W_i^K, V·W_i^V)
 * with K and V already projected (see projectKeysValues; the incremental decoder caches them).
 * xq: [B, T, d]. Returns [B, T, d] and the weights [B, h, T, S].
 */
export function attendTo(
  attn: AttentionParams,
  h: number,
  xq: tf.Tensor3D,
  kv: KeysValues,
  mask?: tf.Tensor,
  heads?: HeadGate,
): { output: tf.Tensor3D; weights: tf.Tensor4D; heads: tf.Tensor4D } {
  const q = project(attn, 'q', h, xq); // [B, h, T, dk]
  const { output, weights } = scaledDotProductAttention(q, kv.k, kv.v, mask); // [B, h, T, dv], [B, h, T, S]
  const out = throughWO(attn, output as tf.Tensor4D, heads); // [B, T, d]
  return { output: out, weights: weights as tf.Tensor4D, heads: output as tf.Tensor4D };
}

/**
 * What reaches W^O from each head of one attention: ξ_h · head_h + (1 − ξ_h) · m_h. ξ = 1 keeps a
 * head; ξ = 0 removes it (zero ablation, Michel et al.'s head mask) or, with `mean`, replaces it by
 * its mean output over a probe batch (mean ablation). ξ: [h]; mean: [h, dv].
 */
export interface HeadGate {
  xi: tf.Tensor1D;
  mean?: tf.Tensor2D;
}

export function gate(heads: tf.Tensor4D, g: HeadGate): tf.Tensor4D {
  const h = heads.shape[1];
  const xi = tf.reshape(g.xi, [1, h, 1, 1]); // [1, h, 1, 1]
  const kept = tf.mul(heads, xi); // [B, h, T, dv]
  if (!g.mean) return kept as tf.Tensor4D;
  const mean = tf.reshape(g.mean, [1, h, 1, g.mean.shape[1]]); // [1, h, 1, dv]
  return tf.add(kept, tf.mul(mean, tf.sub(1, xi))) as tf.Tensor4D;
}

/**
 * Multi-head attention of xq over xkv (self-attention when they are the same tensor), with one
 * attention's parameters (e.g. `model.layers.encoder[0].selfAttn`).
 */
export function multiHeadAttention(
  attn: AttentionParams,
  h: number,
  xq: tf.Tensor3D,
  xkv: tf.Tensor3D,
  mask?: tf.Tensor,
): { output: tf.Tensor3D; weights: tf.Tensor4D } {
  return attendTo(attn, h, xq, projectKeysValues(attn, h, xkv), mask);
}
