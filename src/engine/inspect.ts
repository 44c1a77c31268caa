/**
 * What the `attention` command and the extension's attention view show: every layer's and head's
 * attention weights for a batch of sentence pairs, and the teacher-forced log-probabilities,
 * in eval mode (no dropout), read back as plain arrays.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind } from './model/stacks';
import type { Transformer } from './model/transformer';

export type Nested = number[][][][]; // [L][H][rows][cols]
export interface AttentionReport {
  encoder_self: Nested[]; // [B][L][H][S][S]
  decoder_self: Nested[]; // [B][L][H][T][T]
  cross: Nested[]; // [B][L][H][T][S]
  log_probs: number[][][]; // [B][T][V]
}

function checkIds(ids: number[][], vocab: number, what: string): void {
  if (ids.length === 0 || ids.some((row) => row.length !== ids[0].length || row.length === 0)) {
    throw new Error(`${what}: expected a non-empty batch of equal-length rows (pad with pad_id)`);
  }
  for (const row of ids)
    for (const id of row)
      if (!Number.isInteger(id) || id < 0 || id >= vocab)
        throw new Error(`${what}: token id ${id} is outside the vocabulary [0, ${vocab})`);
}

export async function attentionReport(model: Transformer, src: number[][], tgt: number[][]): Promise<AttentionReport> {
  const c = model.config;
  checkIds(src, c.src_vocab, 'source ids');
  checkIds(tgt, c.tgt_vocab, 'target ids');
  if (src.length !== tgt.length) throw new Error(`source batch has ${src.length} rows, target batch ${tgt.length}`);
  for (const [what, ids] of [
    ['source', src],
    ['target', tgt],
  ] as const) {
    if (ids[0].length > c.max_len)
      throw new Error(`${what} has ${ids[0].length} tokens, more than max_len ${c.max_len}`);
    ids.forEach((row, i) => {
      if (row.every((id) => id === c.pad_id)) throw new Error(`${what} row ${i} is all padding`);
    });
  }
  const record = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, [] as tf.Tensor4D[]])) as Record<
    AttentionKind,
    tf.Tensor4D[]
  >;
  const logProbs = tf.tidy(() =>
    model.forward(tf.tensor2d(src, undefined, 'int32'), tf.tensor2d(tgt, undefined, 'int32'), {
      training: false,
      record,
    }),
  );
  try {
    const perKind = async (k: AttentionKind): Promise<Nested[]> => {
      const layers = (await Promise.all(record[k].map((w) => w.array()))) as Nested[]; // [L][B][H][T][S]
      return src.map((_, b) => layers.map((l) => l[b]));
    };
    return {
      encoder_self: await perKind('encoder_self'),
      decoder_self: await perKind('decoder_self'),
      cross: await perKind('cross'),
      log_probs: (await logProbs.array()) as number[][][],
    };
  } finally {
    logProbs.dispose();
    for (const k of ATTENTION_KINDS) tf.dispose(record[k]);
  }
}
