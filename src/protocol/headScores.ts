/**
 * heads/scores: why one head's query row weighs its keys as it does. Each key's pre-softmax score
 * q_i·k_j/√d_k split into parts that sum to it: the bias terms (every layer), the head's d_k
 * dimensions (every layer, the largest listed), and, where the attention reads the embeddings
 * themselves (layer 0's self-attention, post-LN), token·token, token·position, position·token and
 * position·position. Computed by engine/inspect/headScores.ts.
 */
import { type HeadRef, type InputPair, checkInputPair, headRefFields } from './attention';
import { BLOCK_AXIS_LIMIT } from './attentionBlock';
import { MAX_BEAM } from './beamTree';
import {
  type Check,
  arrayOf,
  intIn,
  isAbsolutePath,
  isBoolean,
  isFiniteNumber,
  isIndex,
  isPositiveInt,
  isString,
  object,
  optional,
} from './check';
import { type Decoded, checkDecoded } from './decoded';

/** How many of a key's d_k dimensions `topDimensions` lists (fewer when d_k is smaller). */
export const TOP_DIMENSIONS = 5;

export interface HeadScoresParams extends HeadRef {
  /** A run folder, or a checkpoint folder written by PyTorch. */
  runDir: string;
  /** The checkpoint's step; the newest when absent. */
  step?: number;
  /** The pair; without a target, the source is decoded first (beam search, as attention/get does). */
  input: InputPair;
  /** The query row (a source position for encoder_self, a target position otherwise; from 0). */
  query: number;
  /** Beam size when the target is decoded; default 4, attention/get's. */
  beam?: number;
}

export const checkHeadScoresParams: Check<HeadScoresParams> = object({
  runDir: isAbsolutePath,
  step: optional(isIndex),
  input: checkInputPair,
  ...headRefFields,
  query: intIn(0, BLOCK_AXIS_LIMIT - 1),
  beam: optional(intIn(1, MAX_BEAM)),
});

/**
 * The bias split of every key's score (each already divided by √d_k): with q_i = x_i W^Q + b^Q and
 * k_j = x_j W^K + b^K of the head, q_i·k_j = x_iW^Q·x_jW^K + b^Q·x_jW^K + x_iW^Q·b^K + b^Q·b^K.
 */
export interface BiasTerms {
  /** x_i W^Q · x_j W^K / √d_k, per key. */
  input: number[];
  /** b^Q · x_j W^K / √d_k, per key. */
  queryBiasKey: number[];
  /** x_i W^Q · b^K / √d_k, per key. */
  queryKeyBias: number[];
  /** b^Q · b^K / √d_k: the same for every key. */
  biasBias: number;
}

/**
 * Layer 0's self-attention, post-LN: its input is x = √d_model·E[token] + PE[position] (dropout is
 * off in eval), so `BiasTerms.input` splits exactly into these four, per key, each / √d_k.
 */
export interface EmbeddingTerms {
  tokenToken: number[];
  tokenPosition: number[];
  positionToken: number[];
  positionPosition: number[];
}

/** One of a key's largest dimension contributions: q_i[dim]·k_j[dim]/√d_k. */
export interface DimensionTerm {
  dim: number;
  value: number;
}

export interface HeadScores extends HeadRef {
  /** The checkpoint's training step. */
  step: number;
  query: number;
  queryToken: string;
  keyTokens: string[];
  /** The decoder input the pass used (BOS first): given, or decoded. */
  tgtTokens: string[];
  /** The target the engine decoded, when the input gave none. */
  decoded?: Decoded;
  dk: number;
  /** q_i·k_j/√d_k per key, before the mask: the sum of each split below. */
  scores: number[];
  /** Keys the mask removes (padding; later positions in decoder self-attention): weight 0 whatever their score. */
  masked: boolean[];
  /** The model's own weights of this row: softmax of `scores` over the unmasked keys. */
  weights: number[];
  bias: BiasTerms;
  /** Present where the split is exact (layer 0's self-attention, post-LN); else `embeddingNote` says why not. */
  embedding?: EmbeddingTerms;
  embeddingNote?: string;
  /** Per key, per dimension m of the head: q_i[m]·k_j[m]/√d_k ([keys][d_k]). */
  dimensions: number[][];
  /** Per key, its TOP_DIMENSIONS largest dimensions by |value|, largest first. */
  topDimensions: DimensionTerm[][];
}

const numbers = arrayOf(isFiniteNumber);

const shallow = object<HeadScores>({
  ...headRefFields,
  step: isIndex,
  query: isIndex,
  queryToken: isString,
  keyTokens: arrayOf(isString),
  tgtTokens: arrayOf(isString),
  decoded: optional(checkDecoded),
  dk: isPositiveInt,
  scores: numbers,
  masked: arrayOf(isBoolean),
  weights: numbers,
  bias: object<BiasTerms>({ input: numbers, queryBiasKey: numbers, queryKeyBias: numbers, biasBias: isFiniteNumber }),
  embedding: optional(
    object<EmbeddingTerms>({
      tokenToken: numbers,
      tokenPosition: numbers,
      positionToken: numbers,
      positionPosition: numbers,
    }),
  ),
  embeddingNote: optional(isString),
  dimensions: arrayOf(numbers),
  topDimensions: arrayOf(arrayOf(object<DimensionTerm>({ dim: isIndex, value: isFiniteNumber }))),
});

/** Checks a reply: every per-key list as long as keyTokens, each key's dimensions d_k long, one of embedding and its note. */
export const checkHeadScores: Check<HeadScores> = (v, path) => {
  const why = shallow(v, path);
  if (why) return why;
  const r = v as HeadScores;
  const keys = r.keyTokens.length;
  const lists: [string, unknown[]][] = [
    ['scores', r.scores],
    ['masked', r.masked],
    ['weights', r.weights],
    ['bias.input', r.bias.input],
    ['bias.queryBiasKey', r.bias.queryBiasKey],
    ['bias.queryKeyBias', r.bias.queryKeyBias],
    ['dimensions', r.dimensions],
    ['topDimensions', r.topDimensions],
    ...(r.embedding ? Object.entries(r.embedding).map(([k, a]): [string, unknown[]] => [`embedding.${k}`, a]) : []),
  ];
  for (const [name, list] of lists)
    if (list.length !== keys) return `${path}.${name} must hold ${keys} values (keyTokens.length), got ${list.length}`;
  const top = Math.min(TOP_DIMENSIONS, r.dk);
  for (let j = 0; j < keys; j++) {
    if (r.dimensions[j]!.length !== r.dk)
      return `${path}.dimensions[${j}] must hold ${r.dk} values (dk), got ${r.dimensions[j]!.length}`;
    if (r.topDimensions[j]!.length !== top)
      return `${path}.topDimensions[${j}] must hold ${top} entries, got ${r.topDimensions[j]!.length}`;
    const bad = r.topDimensions[j]!.findIndex((t) => t.dim >= r.dk);
    if (bad >= 0) return `${path}.topDimensions[${j}][${bad}].dim must be below dk (${r.dk})`;
  }
  if (!r.embedding === !r.embeddingNote) return `${path}: exactly one of embedding and embeddingNote must be present`;
  return undefined;
};
