/**
 * Head importance after Michel et al. (2019), "Are Sixteen Heads Really Better than One?": a gate
 * ξ_h multiplies each head's output before W^O (ξ = 1 is the model as trained), and
 *   I_h = E_x |∂L(x)/∂ξ_h|
 * over held-out batches, L the cross-entropy of the reference target (teacher-forced). A head whose
 * removal would barely move the loss has a small I_h.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind } from '../../protocol/attention';
import type { HeadGate } from '../model/attention';
import { attentionLayers } from '../model/headParams';
import type { Transformer } from '../model/transformer';

/** Per kind, a [layers, heads] tensor of gates. */
export type Gates = Record<AttentionKind, tf.Tensor2D>;

export function layersOf(model: Transformer): Record<AttentionKind, number> {
  return attentionLayers(model.config);
}

/** The forward context's gates of each layer, from [L, H] tensors (and optional [L, H, dv] means). */
export function headGates(
  gates: Gates,
  means?: Partial<Record<AttentionKind, tf.Tensor3D>>,
): Record<AttentionKind, HeadGate[]> {
  const out = {} as Record<AttentionKind, HeadGate[]>;
  for (const kind of ATTENTION_KINDS) {
    const [L] = gates[kind].shape;
    // tidy: the slices go, only the reshaped rows stay (the caller owns them).
    out[kind] = Array.from({ length: L }, (_, l) => {
      const xi = tf.tidy(() => tf.reshape(tf.slice(gates[kind], [l, 0], [1, -1]), [-1]) as tf.Tensor1D); // [H]
      const mean = means?.[kind];
      if (!mean) return { xi };
      const [, H, dv] = mean.shape;
      return { xi, mean: tf.tidy(() => tf.reshape(tf.slice(mean, [l, 0, 0], [1, -1, -1]), [H, dv]) as tf.Tensor2D) }; // [H, dv]
    });
  }
  return out;
}

/** Mean cross-entropy (nats per target token) of the reference targets, with these gates. Call inside tf.tidy. */
export function gatedLoss(
  model: Transformer,
  src: tf.Tensor2D,
  tgtIn: tf.Tensor2D,
  tgtOut: tf.Tensor2D,
  gates: Gates,
): tf.Scalar {
  const c = model.config;
  const logProbs = model.forward(src, tgtIn, { training: false, heads: headGates(gates) }); // [B, T, V]
  const picked = tf.sum(tf.mul(logProbs, tf.oneHot(tgtOut, c.tgt_vocab)), 2); // [B, T]
  const real = tf.cast(tf.notEqual(tgtOut, c.pad_id), 'float32'); // [B, T]
  return tf.div(tf.neg(tf.sum(tf.mul(picked, real))), tf.maximum(tf.sum(real), 1)) as tf.Scalar;
}

/** A batch of pairs as padded tensors: src ends with EOS; tgtIn = [BOS, y…], tgtOut = [y…, EOS]. */
export interface PairBatch {
  src: number[][];
  tgtIn: number[][];
  tgtOut: number[][];
}

/** I_h of every head: kind → [layers · heads], averaged over the batches. */
export async function headImportance(
  model: Transformer,
  batches: PairBatch[],
): Promise<Record<AttentionKind, Float32Array>> {
  const c = model.config;
  const L = layersOf(model);
  const sums = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, new Float32Array(L[k] * c.heads)])) as Record<
    AttentionKind,
    Float32Array
  >;
  for (const b of batches) {
    const grads = tf.tidy(() => {
      const ones = ATTENTION_KINDS.map((k) => tf.ones([L[k], c.heads]) as tf.Tensor2D);
      const src = tf.tensor2d(b.src, undefined, 'int32');
      const tgtIn = tf.tensor2d(b.tgtIn, undefined, 'int32');
      const tgtOut = tf.tensor2d(b.tgtOut, undefined, 'int32');
      const f = (...xi: tf.Tensor[]) => {
        const gates = Object.fromEntries(ATTENTION_KINDS.map((k, i) => [k, xi[i] as tf.Tensor2D])) as Gates;
        return gatedLoss(model, src, tgtIn, tgtOut, gates);
      };
      return tf
        .grads(f)(ones)
        .map((g) => tf.abs(g)); // |∂L/∂ξ|, [L, H] per kind
    });
    const values = await Promise.all(grads.map((g) => g.data() as Promise<Float32Array>));
    tf.dispose(grads);
    ATTENTION_KINDS.forEach((k, i) => values[i]!.forEach((v, j) => (sums[k][j] += v / batches.length)));
  }
  return sums;
}
