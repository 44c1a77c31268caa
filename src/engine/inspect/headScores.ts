/**
 * heads/scores (protocol/headScores.ts): one head's query row, each key's pre-softmax score
 * q_i·k_j/√d_k split into parts that sum to it. The pass is the model's own (teacher-forced, eval,
 * the queries' input and the projected keys recorded, ForwardContext.recordInputs); the split is
 * worked in float64 from them and the head's rows of W^Q, W^K and their biases:
 *   - bias terms, every layer: x_iW^Q·x_jW^K + b^Q·x_jW^K + x_iW^Q·b^K + b^Q·b^K;
 *   - dimensions, every layer: Σ_m q_i[m]·k_j[m];
 *   - layer 0's self-attention, post-LN only: x = √d_model·E[token] + PE[position] (§3.4, §3.5;
 *     dropout is off in eval), so x_iW^Q·x_jW^K splits into token·token, token·position,
 *     position·token and position·position. Pre-LN reads LayerNorm(x), not linear in x: no exact
 *     split, and the reply says so instead.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { HeadRef, InputPair } from '../../protocol/attention';
import { ATTENTION_KINDS, type AttentionKind } from '../../protocol/attention';
import type { DimensionTerm, EmbeddingTerms, HeadScores } from '../../protocol/headScores';
import { TOP_DIMENSIONS } from '../../protocol/headScores';
import { POOL_ABOVE } from '../../algorithms/pool';
import { checkpointStep } from '../checkpoint';
import { projection } from '../model/attention';
import { type AttentionInputs, perKind } from '../model/context';
import { sinusoidalTable } from '../model/embedding';
import { attentionLayers, attentionParamsOf } from '../model/headParams';
import type { Transformer } from '../model/transformer';
import { targetOf, withCheckpoint } from './attentionAt';
import { checkAttentionSize } from './attentionSize';

/** The split of one row, before token labels: what headScores computes from a model and ids. */
export type ScoreParts = Omit<
  HeadScores,
  'kind' | 'layer' | 'head' | 'step' | 'queryToken' | 'keyTokens' | 'tgtTokens' | 'decoded'
>;

const dot = (a: ArrayLike<number>, b: ArrayLike<number>, scale: number): number => {
  let s = 0;
  for (let m = 0; m < a.length; m++) s += a[m]! * b[m]!;
  return s * scale;
};

/** x [d] times the head's rows of W [d, d] ([out, in]): x·W_hᵀ, [dk], in float64. */
function project(x: ArrayLike<number>, w: Float32Array, first: number, dk: number, d: number): Float64Array {
  const out = new Float64Array(dk);
  for (let m = 0; m < dk; m++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += x[c]! * w[(first + m) * d + c]!;
    out[m] = s;
  }
  return out;
}

/** A refusal naming the field, its value and its bound. */
function bound(field: string, value: number, below: number, what: string): void {
  if (value >= below)
    throw new RangeError(`heads/scores params: ${field} must be below ${below} (${what}), got ${value}`);
}

/** The head named must exist in the model: its layer and head within the run's, the error naming the field. */
function checkHead(model: Transformer, { kind, layer, head }: HeadRef): void {
  const layers = attentionLayers(model.config)[kind];
  bound('layer', layer, layers, `${kind} has ${layers} layers, from 0`);
  bound('head', head, model.config.heads, `the run has ${model.config.heads} heads a layer, from 0`);
}

/** The head's row `query` of `kind`:`layer`.`head` for the pair src, tgt (BOS first): its score split. */
export async function headScores(
  model: Transformer,
  src: number[],
  tgt: number[],
  { kind, layer, head }: HeadRef,
  query: number,
): Promise<ScoreParts> {
  const c = model.config;
  const d = c.d_model;
  const dk = d / c.heads;
  checkHead(model, { kind, layer, head });
  const queryIds = kind === 'encoder_self' ? src : tgt;
  const keyIds = kind === 'decoder_self' ? tgt : src;
  const side = kind === 'encoder_self' ? 'source' : 'target';
  bound('query', query, queryIds.length, `the ${side} has ${queryIds.length} tokens, from 0`);

  const record = perKind<tf.Tensor4D>();
  const inputs = perKind<AttentionInputs>();
  const attn = attentionParamsOf(model.layers, kind, layer);
  const [row, xq, k, wQ, bQ, wK, bK] = tf.tidy(() => {
    const x = tf.tensor2d([src], [1, src.length], 'int32');
    const y = tf.tensor2d([tgt], [1, tgt.length], 'int32');
    model.forward(x, y, { training: false, record, recordInputs: inputs });
    const at = inputs[kind][layer]!;
    const weights = record[kind][layer]!; // [1, h, T, S]
    const q = projection(attn, 'q');
    const kp = projection(attn, 'k');
    return [
      tf.slice(weights, [0, head, query, 0], [1, 1, 1, -1]), // [1, 1, 1, S]
      tf.slice(at.xq, [0, query, 0], [1, 1, -1]), // [1, 1, d]
      tf.slice(at.k, [0, head, 0, 0], [1, 1, -1, -1]), // [1, 1, S, dk]
      ...[q.w, q.b, kp.w, kp.b].map((t) => tf.clone(t)), // own copies: sliced projections are the model's
    ].map((t) => tf.keep(t));
  });
  try {
    for (const kd of ATTENTION_KINDS) {
      tf.dispose(record[kd]);
      for (const r of inputs[kd]) tf.dispose([r.xq, r.k, r.v]);
    }
    const [weights, x, keys, WQ, BQ, WK, BK] = (await Promise.all(
      [row!, xq!, k!, wQ!, bQ!, wK!, bK!].map((t) => t.data()),
    )) as Float32Array[];
    const first = head * dk;
    const scale = 1 / Math.sqrt(dk);
    const q0 = project(x!, WQ!, first, dk, d); // x_i W^Q_h
    const bq = BQ!.subarray(first, first + dk);
    const bk = BK!.subarray(first, first + dk);
    const q = q0.map((v, m) => v + bq[m]!);
    const S = keyIds.length;
    const kOf = (j: number) => keys!.subarray(j * dk, (j + 1) * dk); // k_j, bias included
    const k0Of = (j: number) => Float64Array.from(kOf(j), (v, m) => v - bk[m]!); // x_j W^K_h
    const dimensions = Array.from({ length: S }, (_, j) => Array.from(kOf(j), (v, m) => q[m]! * v * scale));
    const scores = dimensions.map((row) => row.reduce((a, b) => a + b, 0));
    const masked = keyIds.map((id, j) => id === c.pad_id || (kind === 'decoder_self' && j > query));
    const bias = {
      input: scores.map((_, j) => dot(q0, k0Of(j), scale)),
      queryBiasKey: scores.map((_, j) => dot(bq, k0Of(j), scale)),
      queryKeyBias: scores.map(() => dot(q0, bk, scale)),
      biasBias: dot(bq, bk, scale),
    };
    const topDimensions = dimensions.map((row): DimensionTerm[] =>
      row
        .map((value, dim) => ({ dim, value }))
        .sort((a, b) => Math.abs(b.value) - Math.abs(a.value))
        .slice(0, Math.min(TOP_DIMENSIONS, dk)),
    );
    const why = noEmbeddingSplit(model, kind, layer);
    const embedding = why
      ? { embeddingNote: why }
      : { embedding: await embeddingTerms(model, kind, queryIds, query, WQ!, WK!, first, scale) };
    return { query, dk, scores, masked, weights: Array.from(weights!), bias, ...embedding, dimensions, topDimensions };
  } finally {
    tf.dispose([row!, xq!, k!, wQ!, bQ!, wK!, bK!]);
  }
}

/** Why x_iW^Q·x_jW^K has no exact token/position split at this attention; undefined where it has. */
function noEmbeddingSplit(model: Transformer, kind: AttentionKind, layer: number): string | undefined {
  if (kind === 'cross')
    return "cross-attention reads the decoder's state after its self-attention and the encoder's output, not embeddings";
  if (layer > 0) return `layer ${layer} reads layer ${layer - 1}'s output, not the embeddings`;
  if (model.config.norm_first)
    return 'pre-LN (norm_first): the attention reads LayerNorm(x), which is not linear in x = token + position, so no exact split exists';
  return undefined;
}

/** Token·token, token·position, position·token, position·position of layer 0's self-attention (post-LN). */
async function embeddingTerms(
  model: Transformer,
  kind: AttentionKind,
  ids: number[],
  query: number,
  WQ: Float32Array,
  WK: Float32Array,
  first: number,
  scale: number,
): Promise<EmbeddingTerms> {
  const c = model.config;
  const d = c.d_model;
  const dk = d / c.heads;
  const sideName = kind === 'encoder_self' ? 'encoder' : 'decoder';
  const table = (await (
    kind === 'encoder_self' ? model.layers.srcEmbed : model.layers.tgtEmbed
  ).data()) as Float32Array;
  const pe =
    c.positional === 'sinusoidal'
      ? sinusoidalTable(ids.length, d)
      : ((await model.layers.positions![sideName].data()) as Float32Array);
  const tok = (j: number) => table.subarray(ids[j]! * d, (ids[j]! + 1) * d).map((v) => v * Math.sqrt(d)); // √d·E[token]
  const pos = (j: number) => pe.subarray(j * d, (j + 1) * d); // PE[position]
  const tq = project(tok(query), WQ, first, dk, d);
  const pq = project(pos(query), WQ, first, dk, d);
  const tk = ids.map((_, j) => project(tok(j), WK, first, dk, d));
  const pk = ids.map((_, j) => project(pos(j), WK, first, dk, d));
  return {
    tokenToken: tk.map((t) => dot(tq, t, scale)),
    tokenPosition: pk.map((p) => dot(tq, p, scale)),
    positionToken: tk.map((t) => dot(pq, t, scale)),
    positionPosition: pk.map((p) => dot(pq, p, scale)),
  };
}

/** heads/scores: opens `step`'s checkpoint, decodes a target when the input has none, and splits the row. */
export async function headScoresAt(
  runDir: string,
  step: number | undefined,
  input: InputPair,
  ref: HeadRef,
  query: number,
  beam = 4,
): Promise<HeadScores> {
  return withCheckpoint(runDir, step, input, async (o) => {
    const c = o.model.config;
    checkHead(o.model, ref); // before any decoding
    const { tgt, decoded } = await targetOf(o, beam);
    for (const [side, n] of [
      ['source', o.ids.src.length],
      ['target', tgt.length],
    ] as const)
      if (n > Math.min(POOL_ABOVE, c.max_len))
        throw new RangeError(
          `heads/scores params: input's ${side} has ${n} tokens; a row is split from the whole pass, ` +
            `at most ${Math.min(POOL_ABOVE, c.max_len)} tokens a side (max_len ${c.max_len}, ${POOL_ABOVE} before pooling)`,
        );
    checkAttentionSize(c, o.ids.src.length, tgt.length);
    const parts = await headScores(o.model, o.ids.src, tgt, ref, query);
    const queryIds = ref.kind === 'encoder_self' ? o.ids.src : tgt;
    const keyIds = ref.kind === 'decoder_self' ? tgt : o.ids.src;
    return {
      kind: ref.kind,
      layer: ref.layer,
      head: ref.head,
      step: checkpointStep(o.checkpoint),
      queryToken: o.label(queryIds)[query]!,
      keyTokens: o.label(keyIds),
      tgtTokens: o.label(tgt),
      ...(decoded ? { decoded } : {}),
      ...parts,
    };
  });
}
