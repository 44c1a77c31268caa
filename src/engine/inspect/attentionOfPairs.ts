/**
 * What the views and the `attention` command show: every layer's and head's attention weights of
 * sentence pairs, teacher-forced in eval mode (no dropout), with the log-probabilities. The
 * weights come straight from `tensor.data()` into the protocol's one attention type.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind, type AttentionMaps } from '../../protocol/attention';
import type { ForwardContext } from '../model/context';
import type { Transformer } from '../model/transformer';

/** One pair's attention maps (every kind, [L, H, T, S] each) and its log-probs [T, V]. */
export interface PairAttention {
  maps: AttentionMaps[];
  logProbs: Float32Array;
}

function checkIds(ids: number[][], vocab: number, padId: number, what: string): void {
  if (ids.length === 0) throw new Error(`${what}: expected at least one sentence`);
  ids.forEach((row, i) => {
    if (row.length === 0) throw new Error(`${what} ${i} is empty`);
    for (const id of row)
      if (!Number.isInteger(id) || id < 0 || id >= vocab)
        throw new Error(`${what} ${i}: token id ${id} is outside the vocabulary [0, ${vocab})`);
    if (row.every((id) => id === padId)) throw new Error(`${what} ${i} is all padding`);
  });
}

const pad = (rows: number[][], width: number, id: number) =>
  rows.map((r) => [...r, ...Array(width - r.length).fill(id)]);

/** Copies the [q, k] top-left block of each [Q, K] map of a [M, Q, K] buffer. */
function trim(data: Float32Array, maps: number, Q: number, K: number, q: number, k: number): Float32Array {
  if (q === Q && k === K) return data;
  const out = new Float32Array(maps * q * k);
  for (let m = 0; m < maps; m++)
    for (let i = 0; i < q; i++) out.set(data.subarray((m * Q + i) * K, (m * Q + i) * K + k), (m * q + i) * k);
  return out;
}

/**
 * Teacher-forced attention of sentence pairs: src[b] the source ids (ending with EOS), tgt[b] the
 * decoder input (BOS first). Pairs of different lengths are padded together and trimmed apart.
 * `heads`: head gates (an ablation, ablate/gates.ts); the model as trained when absent.
 */
export async function attentionOfPairs(
  model: Transformer,
  src: number[][],
  tgt: number[][],
  heads?: ForwardContext['heads'],
): Promise<PairAttention[]> {
  const c = model.config;
  checkIds(src, c.src_vocab, c.pad_id, 'source');
  checkIds(tgt, c.tgt_vocab, c.pad_id, 'target');
  if (src.length !== tgt.length) throw new Error(`${src.length} sources for ${tgt.length} targets`);
  const S = Math.max(...src.map((r) => r.length));
  const T = Math.max(...tgt.map((r) => r.length));
  for (const [what, n] of [
    ['source', S],
    ['target', T],
  ] as const)
    if (n > c.max_len) throw new Error(`${what} has ${n} tokens, more than max_len ${c.max_len}`);
  const record = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, [] as tf.Tensor4D[]])) as Record<
    AttentionKind,
    tf.Tensor4D[]
  >;
  const B = src.length;
  const [logProbs, ...stacked] = tf.tidy(() => {
    const x = tf.tensor2d(pad(src, S, c.pad_id), [B, S], 'int32'); // [B, S]
    const y = tf.tensor2d(pad(tgt, T, c.pad_id), [B, T], 'int32'); // [B, T]
    const lp = model.forward(x, y, { training: false, record, ...(heads ? { heads } : {}) }); // [B, T, V]
    return [lp, ...ATTENTION_KINDS.map((k) => tf.stack(record[k], 1))]; // L × [B, h, q, k] → [B, L, h, q, k]
  });
  try {
    const all = await Promise.all([logProbs, ...stacked].map((t) => t.data() as Promise<Float32Array>));
    const V = c.tgt_vocab;
    return src.map((s, b) => {
      const maps = ATTENTION_KINDS.map((kind, i): AttentionMaps => {
        const [, L, H, Q, K] = stacked[i].shape as number[];
        const n = L * H * Q * K;
        const q = kind === 'encoder_self' ? s.length : tgt[b].length;
        const k = kind === 'decoder_self' ? tgt[b].length : s.length;
        const block = B === 1 ? all[i + 1] : all[i + 1].slice(b * n, (b + 1) * n); // own buffer per pair
        return { kind, shape: [L, H, q, k], weights: trim(block, L * H, Q, K, q, k) };
      });
      return { maps, logProbs: all[0].slice(b * T * V, (b * T + tgt[b].length) * V) };
    });
  } finally {
    tf.dispose([logProbs, ...stacked]);
    for (const k of ATTENTION_KINDS) tf.dispose(record[k]);
  }
}
