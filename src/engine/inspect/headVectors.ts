/**
 * One head's queries and keys over many pairs: q_i = x_i W^Q_h + b^Q_h and k_j = x_j W^K_h + b^K_h,
 * the d_k vectors whose dot products, over √d_k, are the head's scores (§3.2.1). The pass is the
 * model's own (teacher-forced, eval), in batches, recording each attention's inputs
 * (ForwardContext.recordInputs): the keys come projected; the queries are projected here from the
 * recorded query input with the head's rows of W^Q. Padding positions are left out.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type HeadRef } from '../../protocol/attention';
import { sideOf } from '../../protocol/globalView';
import { project } from '../model/attention';
import { type AttentionInputs, perKind } from '../model/context';
import { attentionParamsOf } from '../model/headParams';
import type { Transformer } from '../model/transformer';

/** A pair's ids as the pass takes them: source ending with EOS, decoder input starting with BOS. */
export interface PassPair {
  src: number[];
  tgt: number[];
}

/** Vectors of one role, row-major [n, d_k], with each row's pair and position. */
export interface RoleVectors {
  vectors: Float32Array;
  sentence: number[];
  position: number[];
}

export interface HeadVectors {
  dk: number;
  queries: RoleVectors;
  keys: RoleVectors;
}

/** Pairs a pass holds at once. */
const BATCH = 32;

function padded(rows: number[][], pad: number): number[][] {
  const width = Math.max(...rows.map((r) => r.length));
  return rows.map((r) => [...r, ...new Array<number>(width - r.length).fill(pad)]);
}

/** The head's queries and keys of every pair (queries of every unpadded query position, keys of every key position). */
export async function headVectors(model: Transformer, pairs: PassPair[], ref: HeadRef): Promise<HeadVectors> {
  const c = model.config;
  const dk = c.d_model / c.heads;
  const out = { q: [] as Float32Array[], k: [] as Float32Array[] };
  const meta = {
    q: { sentence: [] as number[], position: [] as number[] },
    k: { sentence: [] as number[], position: [] as number[] },
  };
  const attn = attentionParamsOf(model.layers, ref.kind, ref.layer);
  for (let first = 0; first < pairs.length; first += BATCH) {
    const batch = pairs.slice(first, first + BATCH);
    const inputs = perKind<AttentionInputs>();
    const [q, k] = tf.tidy(() => {
      const src = padded(
        batch.map((p) => p.src),
        c.pad_id,
      );
      const tgt = padded(
        batch.map((p) => p.tgt),
        c.pad_id,
      );
      const x = tf.tensor2d(src, [src.length, src[0]!.length], 'int32'); // [B, S]
      const y = tf.tensor2d(tgt, [tgt.length, tgt[0]!.length], 'int32'); // [B, T]
      model.forward(x, y, { training: false, recordInputs: inputs });
      const at = inputs[ref.kind][ref.layer]!;
      const qAll = project(attn, 'q', c.heads, at.xq); // [B, h, T_q, dk]
      const pick = (t: tf.Tensor4D) => tf.keep(tf.squeeze(tf.slice(t, [0, ref.head, 0, 0], [-1, 1, -1, -1]), [1]));
      return [pick(qAll), pick(at.k)]; // [B, T_q, dk], [B, S_k, dk]
    });
    for (const kd of ATTENTION_KINDS) for (const r of inputs[kd]) tf.dispose([r.xq, r.k, r.v]);
    try {
      for (const [role, t] of [
        ['q', q],
        ['k', k],
      ] as const) {
        const data = (await t.data()) as Float32Array;
        const rows = t.shape[1]!;
        batch.forEach((p, b) => {
          const n = (sideOf(ref.kind, role) === 'source' ? p.src : p.tgt).length;
          out[role].push(data.slice(b * rows * dk, (b * rows + n) * dk));
          for (let i = 0; i < n; i++) {
            meta[role].sentence.push(first + b);
            meta[role].position.push(i);
          }
        });
      }
    } finally {
      tf.dispose([q, k]);
    }
  }
  const join = (parts: Float32Array[]): Float32Array => {
    const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) all.set(p, (at += p.length) - p.length);
    return all;
  };
  return {
    dk,
    queries: { vectors: join(out.q), ...meta.q },
    keys: { vectors: join(out.k), ...meta.k },
  };
}
