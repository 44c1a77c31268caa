/**
 * What the views and the `attention` command show: every layer's and head's attention weights of
 * sentence pairs, teacher-forced in eval mode (no dropout), with the log-probabilities, and on
 * request the value-weighted norms beside them (valueWeighted.ts). The weights come straight from
 * `tensor.data()` into the protocol's one attention type.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionMaps } from '../../protocol/attention';
import { type AttentionInputs, type ForwardContext, perKind } from '../model/context';
import { attentionParamsOf } from '../model/headParams';
import type { Transformer } from '../model/transformer';
import { valueWeighted } from './valueWeighted';

/**
 * One pair's attention maps (every kind, [L, H, T, S] each; `valueWeighted` beside the weights when
 * asked) and its log-probs [T, V].
 */
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
 * `valueWeighted`: each map also holds ‖α_ij · v_j W^O_h‖ (valueWeighted.ts) of the same shape.
 */
export async function attentionOfPairs(
  model: Transformer,
  src: number[][],
  tgt: number[][],
  heads?: ForwardContext['heads'],
  options: { valueWeighted?: boolean } = {},
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
  const record = perKind<tf.Tensor4D>();
  const inputs = options.valueWeighted ? perKind<AttentionInputs>() : undefined;
  const B = src.length;
  const kinds = ATTENTION_KINDS.length;
  const [logProbs, ...stacked] = tf.tidy(() => {
    const x = tf.tensor2d(pad(src, S, c.pad_id), [B, S], 'int32'); // [B, S]
    const y = tf.tensor2d(pad(tgt, T, c.pad_id), [B, T], 'int32'); // [B, T]
    const ctx = { training: false, record, ...(heads ? { heads } : {}), ...(inputs ? { recordInputs: inputs } : {}) };
    const lp = model.forward(x, y, ctx); // [B, T, V]
    const norms = inputs
      ? ATTENTION_KINDS.map((k) =>
          tf.stack(
            record[k].map((w, l) => valueWeighted(attentionParamsOf(model.layers, k, l), w, inputs[k][l]!.v)),
            1,
          ),
        ) // L × [B, h, q, k] → [B, L, h, q, k]
      : [];
    return [lp, ...ATTENTION_KINDS.map((k) => tf.stack(record[k], 1)), ...norms]; // L × [B, h, q, k] → [B, L, h, q, k]
  });
  try {
    const all = await Promise.all([logProbs, ...stacked].map((t) => t.data() as Promise<Float32Array>));
    const own = (i: number, b: number, n: number) => (B === 1 ? all[i]! : all[i]!.slice(b * n, (b + 1) * n)); // own buffer per pair
    const V = c.tgt_vocab;
    return src.map((s, b) => {
      const maps = ATTENTION_KINDS.map((kind, i): AttentionMaps => {
        const [, L, H, Q, K] = stacked[i].shape as number[];
        const n = L * H * Q * K;
        const q = kind === 'encoder_self' ? s.length : tgt[b].length;
        const k = kind === 'decoder_self' ? tgt[b].length : s.length;
        const weights = trim(own(i + 1, b, n), L * H, Q, K, q, k);
        if (!inputs) return { kind, shape: [L, H, q, k], weights };
        return { kind, shape: [L, H, q, k], weights, valueWeighted: trim(own(i + 1 + kinds, b, n), L * H, Q, K, q, k) };
      });
      return { maps, logProbs: all[0].slice(b * T * V, (b * T + tgt[b].length) * V) };
    });
  } finally {
    tf.dispose([logProbs, ...stacked]);
    for (const k of ATTENTION_KINDS) {
      tf.dispose(record[k]);
      for (const r of inputs?.[k] ?? []) tf.dispose([r.xq, r.k, r.v]);
    }
  }
}
