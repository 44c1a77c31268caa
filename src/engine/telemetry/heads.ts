/**
 * Per-head gradient norms from a training step's gradients: head h of an attention owns rows
 * h·d_k … (h+1)·d_k of each of W^Q, W^K, W^V (stacked in PyTorch's in_proj_weight, [3d, d]) and the
 * same columns of W^O (out_proj.weight, [d, d]). Its norm is ‖[∇W^Q_h; ∇W^K_h; ∇W^V_h; ∇W^O_{:,h}]‖₂.
 * And each head's output norm, from a forward pass of the probe batch.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind } from '../../protocol/attention';
import type { TransformerConfig } from '../model/config';
import type { Transformer } from '../model/transformer';

/** The attention prefixes of a model, kind-major then layer: the order of telemetry's heads. */
export function attentionPrefixes(c: TransformerConfig): string[] {
  return [
    ...Array.from({ length: c.encoder_layers }, (_, i) => `encoder.layers.${i}.self_attn`),
    ...Array.from({ length: c.decoder_layers }, (_, i) => `decoder.layers.${i}.self_attn`),
    ...Array.from({ length: c.decoder_layers }, (_, i) => `decoder.layers.${i}.multihead_attn`),
  ];
}

/**
 * [heads of the model] gradient norms, in attentionPrefixes' order. `gradOf` gives the gradient of a
 * parameter by its PyTorch name. Call inside tf.tidy.
 */
export function headGradNorms(c: TransformerConfig, gradOf: (name: string) => tf.Tensor): tf.Tensor1D {
  const h = c.heads;
  const dk = c.d_model / h;
  const d = c.d_model;
  const perLayer = attentionPrefixes(c).map((p) => {
    const inProj = tf.reshape(gradOf(`${p}.in_proj_weight`), [3, h, dk, d]); // [3, h, dk, d]
    const outProj = tf.reshape(gradOf(`${p}.out_proj.weight`), [d, h, dk]); // [d, h, dk]
    const sq = tf.add(tf.sum(tf.square(inProj), [0, 2, 3]), tf.sum(tf.square(outProj), [0, 2])); // [h]
    return tf.sqrt(sq);
  });
  return tf.concat(perLayer) as tf.Tensor1D; // [layers · h]
}

/**
 * Per head, the mean L2 norm of its output before W^O over the real (not padded) query positions of
 * a batch, in attentionPrefixes' order: a head whose output is ~0 writes nothing into the residual.
 */
export async function headOutputNorms(model: Transformer, src: number[][], tgt: number[][]): Promise<Float32Array> {
  const c = model.config;
  const pad = (rows: number[][]) => {
    const n = Math.max(...rows.map((r) => r.length));
    return rows.map((r) => [...r, ...Array(n - r.length).fill(c.pad_id)]);
  };
  const record = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, [] as tf.Tensor4D[]])) as Record<
    AttentionKind,
    tf.Tensor4D[]
  >;
  const recordHeads = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, [] as tf.Tensor4D[]])) as Record<
    AttentionKind,
    tf.Tensor4D[]
  >;
  const norms = tf.tidy(() => {
    const x = tf.tensor2d(pad(src), undefined, 'int32'); // [B, S]
    const y = tf.tensor2d(pad(tgt), undefined, 'int32'); // [B, T]
    model.forward(x, y, { training: false, record, recordHeads });
    const real = (ids: tf.Tensor2D) => tf.cast(tf.notEqual(ids, c.pad_id), 'float32'); // [B, n]
    const perKind = ATTENTION_KINDS.map((kind) => {
      const rows = real(kind === 'encoder_self' ? x : y); // [B, Q]
      const count = tf.sum(rows);
      return recordHeads[kind].map((heads) => {
        const norm = tf.sqrt(tf.sum(tf.square(heads), 3)); // [B, h, Q]
        return tf.div(tf.sum(tf.mul(norm, tf.expandDims(rows, 1)), [0, 2]), count); // [h]
      });
    });
    return tf.concat(perKind.flat()) as tf.Tensor1D; // [layers · h]
  });
  try {
    return (await norms.data()) as Float32Array;
  } finally {
    norms.dispose();
    for (const k of ATTENTION_KINDS) tf.dispose([...record[k], ...recordHeads[k]]);
  }
}
