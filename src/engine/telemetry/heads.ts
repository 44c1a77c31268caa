/**
 * Per-head norms of the projections and of a training step's gradients: head h of an attention owns
 * rows h·d_k … (h+1)·d_k of each of W^Q, W^K, W^V (stacked in one [3d, d] matrix, wQKV) and the
 * same columns of W^O ([d, d]). Its gradient norm is ‖[∇W^Q_h; ∇W^K_h; ∇W^V_h; ∇W^O_{:,h}]‖₂.
 * And each head's output norm, from a forward pass of the probe batch.
 */
import { perKind } from '../model/context';
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind } from '../../protocol/attention';
import type { AttentionParams, TransformerLayers } from '../model/params';
import type { Transformer } from '../model/transformer';

/** The attentions of a model, kind-major then layer: the order of telemetry's heads. */
export function attentionsInOrder(layers: TransformerLayers): AttentionParams[] {
  return [
    ...layers.encoder.map((l) => l.selfAttn),
    ...layers.decoder.map((l) => l.selfAttn),
    ...layers.decoder.map((l) => l.crossAttn),
  ];
}

/**
 * [4, heads of the model]: the L2 norm of each head's slice of W^Q, W^K, W^V and W^O (rows in that
 * order: PROJECTIONS), columns in attentionsInOrder's order. `tensorOf` gives what to measure of a
 * parameter: the parameter itself for weight norms, its gradient for gradient norms. Call inside
 * tf.tidy.
 */
export function headMatrixNorms(model: Transformer, tensorOf: (param: tf.Tensor) => tf.Tensor): tf.Tensor2D {
  const c = model.config;
  const h = c.heads;
  const dk = c.d_model / h;
  const d = c.d_model;
  const perLayer = attentionsInOrder(model.layers).map((attn) => {
    const inProj = tf.reshape(tensorOf(attn.wQKV), [3, h, dk, d]); // [3, h, dk, d]: W^Q, W^K, W^V
    const outProj = tf.reshape(tensorOf(attn.wO), [d, h, dk]); // [d, h, dk]: W^O's columns
    const sq = tf.concat([tf.sum(tf.square(inProj), [2, 3]), tf.expandDims(tf.sum(tf.square(outProj), [0, 2]), 0)]); // [4, h]
    return tf.sqrt(sq);
  });
  return tf.concat(perLayer, 1) as tf.Tensor2D; // [4, layers · h]
}

/** [4 · heads of the model]: headMatrixNorms of the weights themselves, W^Q's row first. */
export async function headWeightNorms(model: Transformer): Promise<Float32Array> {
  const t = tf.tidy(() => headMatrixNorms(model, (param) => param));
  try {
    return (await t.data()) as Float32Array;
  } finally {
    t.dispose();
  }
}

/**
 * [heads of the model] gradient norms ‖[∇W^Q_h; ∇W^K_h; ∇W^V_h; ∇W^O_{:,h}]‖₂, in
 * attentionsInOrder's order, from the per-matrix norms [4, heads]. Call inside tf.tidy.
 */
export function headGradNorms(matrixNorms: tf.Tensor2D): tf.Tensor1D {
  return tf.sqrt(tf.sum(tf.square(matrixNorms), 0)) as tf.Tensor1D; // [heads]
}

/**
 * Runs `reduce` inside tf.tidy on every layer's head outputs before W^O ([B, h, Q, dv], `heads`)
 * of an eval-mode pass over the pairs, with each kind's real (not padded) query rows ([B, Q], 1/0).
 */
function overHeadOutputs<T extends tf.Tensor>(
  model: Transformer,
  src: number[][],
  tgt: number[][],
  reduce: (kind: AttentionKind, heads: tf.Tensor4D, rows: tf.Tensor2D) => T,
): Record<AttentionKind, T[]> {
  const c = model.config;
  const pad = (rows: number[][]) => {
    const n = Math.max(...rows.map((r) => r.length));
    return rows.map((r) => [...r, ...Array(n - r.length).fill(c.pad_id)]);
  };
  const record = perKind<tf.Tensor4D>();
  const recordHeads = perKind<tf.Tensor4D>();
  try {
    return tf.tidy(() => {
      const x = tf.tensor2d(pad(src), undefined, 'int32'); // [B, S]
      const y = tf.tensor2d(pad(tgt), undefined, 'int32'); // [B, T]
      model.forward(x, y, { training: false, record, recordHeads });
      const real = (ids: tf.Tensor2D) => tf.cast(tf.notEqual(ids, c.pad_id), 'float32') as tf.Tensor2D; // [B, n]
      const out = {} as Record<AttentionKind, T[]>;
      for (const kind of ATTENTION_KINDS) {
        const rows = real(kind === 'encoder_self' ? x : y); // [B, Q]
        out[kind] = recordHeads[kind].map((heads) => reduce(kind, heads, rows));
      }
      return out;
    });
  } finally {
    for (const k of ATTENTION_KINDS) tf.dispose([...record[k], ...recordHeads[k]]);
  }
}

/**
 * Per head, the mean L2 norm of its output before W^O over the real (not padded) query positions of
 * a batch, in attentionsInOrder's order: a head whose output is ~0 writes nothing into the residual.
 */
export async function headOutputNorms(model: Transformer, src: number[][], tgt: number[][]): Promise<Float32Array> {
  const norms = overHeadOutputs(model, src, tgt, (_, heads, rows) => {
    const norm = tf.sqrt(tf.sum(tf.square(heads), 3)); // [B, h, Q]
    return tf.div(tf.sum(tf.mul(norm, tf.expandDims(rows, 1)), [0, 2]), tf.sum(rows)) as tf.Tensor1D; // [h]
  });
  const all = tf.concat(ATTENTION_KINDS.flatMap((k) => norms[k])) as tf.Tensor1D; // [layers · h]
  try {
    return (await all.data()) as Float32Array;
  } finally {
    tf.dispose([all, ...ATTENTION_KINDS.flatMap((k) => norms[k])]);
  }
}

/**
 * Per kind, each head's mean output before W^O over the real query positions of a batch,
 * [L, h, dv]: what mean ablation puts in place of a head. The caller disposes the tensors.
 */
export function headOutputMeans(
  model: Transformer,
  src: number[][],
  tgt: number[][],
): Record<AttentionKind, tf.Tensor3D> {
  const means = overHeadOutputs(model, src, tgt, (_, heads, rows) => {
    const w = tf.reshape(rows, [rows.shape[0], 1, rows.shape[1], 1]); // [B, 1, Q, 1]
    return tf.div(tf.sum(tf.mul(heads, w), [0, 2]), tf.sum(rows)) as tf.Tensor2D; // [h, dv]
  });
  const out = {} as Record<AttentionKind, tf.Tensor3D>;
  for (const k of ATTENTION_KINDS) {
    out[k] = tf.stack(means[k]) as tf.Tensor3D; // [L, h, dv]
    tf.dispose(means[k]);
  }
  return out;
}
