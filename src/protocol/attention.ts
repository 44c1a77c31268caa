/**
 * Attention, the one type every process and frame uses for it: the engine fills it from
 * `tensor.data()`, the wire carries it as base64 (wire.ts), the extension and the webviews hold
 * Float32Arrays, and only a JSON file written for a user nests the weights (export.ts).
 *
 * Per kind, all layers × heads in one row-major buffer of shape [layers, heads, queries, keys]:
 * the weight of query q on key k in head h of layer l is weights[((l·heads + h)·queries + q)·keys + k].
 */
import {
  type Check,
  type Fields,
  arrayOf,
  isIndex,
  isFloat32Array,
  isPositiveInt,
  isString,
  object,
  oneOf,
  optional,
  shapeOf,
} from './check';
import { type Pool, pooledCells, pooledLabels } from '../algorithms/pool';

export const ATTENTION_KINDS = ['encoder_self', 'decoder_self', 'cross'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

/** Queries × keys of each kind: encoder self src × src, decoder self tgt × tgt, cross tgt × src. */
export const KIND_AXES: Record<AttentionKind, { queries: 'src' | 'tgt'; keys: 'src' | 'tgt' }> = {
  encoder_self: { queries: 'src', keys: 'src' },
  decoder_self: { queries: 'tgt', keys: 'tgt' },
  cross: { queries: 'tgt', keys: 'src' },
};

/** Names one head. Layers and heads count from 0, in data and in every view, message and flag. */
export interface HeadRef {
  kind: AttentionKind;
  layer: number;
  head: number;
}

export const headRefFields: Fields<HeadRef> = { kind: oneOf(ATTENTION_KINDS), layer: isIndex, head: isIndex };
export const checkHeadRef: Check<HeadRef> = object(headRefFields);

/**
 * `cross:1.0` (kind:layer.head, from 0): the one name of a head. Every view, picker, message,
 * report and export shows it, the CLI's head flags take it, and run folders store it.
 */
export function headId(ref: HeadRef): string {
  return `${ref.kind}:${ref.layer}.${ref.head}`;
}

/** How an error asks for a head: an example and the form, so a user knows layers and heads count from 0. */
export const HEAD_ID_FORM = 'cross:0.1 (kind:layer.head, from 0)';

const HEAD_ID = new RegExp(`^(${ATTENTION_KINDS.join('|')}):(\\d+)\\.(\\d+)$`);

/** The head a headId names, or undefined when it names none. */
export function parseHeadId(id: string): HeadRef | undefined {
  const m = HEAD_ID.exec(id);
  return m ? { kind: m[1] as AttentionKind, layer: Number(m[2]), head: Number(m[3]) } : undefined;
}

/** All layers × heads of one kind. `W` is Float32Array in memory and a base64 string on the wire. */
export interface AttentionMaps<W = Float32Array> {
  kind: AttentionKind;
  shape: [layers: number, heads: number, queries: number, keys: number];
  weights: W;
  /**
   * Present when the maps are max-pooled (inputs past POOL_ABOVE tokens, algorithms/pool.ts): each cell is
   * the largest weight of `rows` queries × `cols` keys, and shape[2], shape[3] count cells
   * (⌈queries / rows⌉, ⌈keys / cols⌉). Absent: every weight, as computed.
   */
  pool?: Pool;
  /**
   * Present when asked for (attention/get's `valueWeighted`, the CLI's --value-weighted; never with
   * `pool`): value-weighted attention (Kobayashi et al., 2020), ‖α_ij · v_j W^O_h‖₂ of each head,
   * query and key, in the same shape and order as `weights` (engine/inspect/valueWeighted.ts).
   */
  valueWeighted?: W;
}

/** What attention was computed from; every view names it. */
export interface AttentionSource {
  /** The run folder (or checkpoint folder). */
  runDir: string;
  /** The training step of the weights. */
  step: number;
  /** The checkpoint file, when computed from one rather than snapshotted during training. */
  checkpoint?: string;
  /** `probe`: the run's fixed probe pair; `input`: a pair the user gave. */
  input: 'probe' | 'input';
  /** Words of a typed input that the run's vocabulary reads as <unk> (absent when none). */
  unknownWords?: string[];
}

export const checkAttentionSource: Check<AttentionSource> = object({
  runDir: isString,
  step: isIndex,
  checkpoint: optional(isString),
  input: oneOf(['probe', 'input']),
  unknownWords: optional(arrayOf(isString)),
});

/**
 * Which sentence pair a view shows: the run's fixed probe pair (which has a history: snapshots),
 * text the user typed (a target too, or it is decoded), or token ids (a run without vocab.json, or
 * a pair picked in a view). Ids picked on a run with a vocabulary carry their `words`, as the
 * vocabulary decodes them, so that a header and the form show words, not ids (EOS's 2 is no word).
 */
export type InputPair = { kind: 'probe' } | TextInput | IdsInput;
type TextInput = { kind: 'text'; src: string; tgt?: string };
type IdsInput = { kind: 'ids'; src: number[]; tgt?: number[]; words?: PairWords };
/** A pair's source and target as words: what a person reads and the attention form takes. */
export interface PairWords {
  src: string;
  tgt?: string;
}

/** The longest input a request may name: tokens (ids), characters (text). */
export const INPUT_LIMITS = { tokens: 8192, chars: 200_000 };

const isIds: Check<number[]> = (v, path) =>
  arrayOf(isIndex)(v, path) ??
  ((v as number[]).length > INPUT_LIMITS.tokens
    ? `${path} has ${(v as number[]).length} tokens, more than the ${INPUT_LIMITS.tokens} an input may have`
    : undefined);
const isText: Check<string> = (v, path) =>
  isString(v, path) ??
  ((v as string).length > INPUT_LIMITS.chars
    ? `${path} has ${(v as string).length} characters, more than the ${INPUT_LIMITS.chars} an input may have`
    : undefined);
export const checkPairWords = object<PairWords>({ src: isText, tgt: optional(isText) });
export const checkInputPair: Check<InputPair> = (v, path) => {
  const kind = (v as { kind?: unknown } | null)?.kind;
  if (kind === 'probe') return undefined;
  if (kind === 'text') return object<Omit<TextInput, 'kind'>>({ src: isText, tgt: optional(isText) })(v, path);
  if (kind === 'ids')
    return object<Omit<IdsInput, 'kind'>>({ src: isIds, tgt: optional(isIds), words: optional(checkPairWords) })(
      v,
      path,
    );
  return `${path}.kind must be one of probe, text, ids, got ${JSON.stringify(kind) ?? typeof kind}`;
};

/** An input pair as a person reads it: `probe`, or the source sentence (ids without words: the ids). */
export function describeInput(input: InputPair): string {
  if (input.kind === 'probe') return 'probe';
  return input.kind === 'text' ? input.src : (input.words?.src ?? input.src.join(' '));
}

/**
 * The input an attention is of, named as describeInput names the pair: `probe`, or its source tokens
 * without the EOS every source ends with (the model's, never typed: "5 6 7", not "5 6 7 </s>").
 */
export function describeShownInput(a: { source: { input: 'probe' | 'input' }; srcTokens: string[] }): string {
  return a.source.input === 'probe' ? 'probe' : a.srcTokens.slice(0, -1).join(' ');
}

/** The target an input pair gives, as describeInput says its source; undefined: it gives none (decoded). */
export function describeTarget(input: InputPair): string | undefined {
  if (input.kind === 'probe') return undefined;
  if (input.kind === 'text') return input.tgt;
  return input.words ? input.words.tgt : input.tgt?.join(' ');
}

/** The attention of one sentence pair: source and target token labels, and every kind present. */
export interface Attention<W = Float32Array> {
  source: AttentionSource;
  srcTokens: string[];
  /** The decoder's input: BOS first. */
  tgtTokens: string[];
  maps: AttentionMaps<W>[];
}

/** Checks an attention of either representation: `weights` by `checkWeights`, shapes by the tokens. */
export function attentionCheck<W>(checkWeights: Check<W>, length: (w: unknown) => number): Check<Attention<W>> {
  const shallow = object<Attention<W>>({
    source: checkAttentionSource,
    srcTokens: arrayOf(isString),
    tgtTokens: arrayOf(isString),
    maps: arrayOf(
      object<AttentionMaps<W>>({
        kind: oneOf(ATTENTION_KINDS),
        shape: shapeOf<AttentionMaps['shape']>(4),
        weights: checkWeights,
        pool: optional(object<Pool>({ rows: isPositiveInt, cols: isPositiveInt })),
        valueWeighted: optional(checkWeights),
      }),
    ),
  });
  return (v, path) => {
    const why = shallow(v, path);
    if (why) return why;
    const a = v as Attention<unknown>;
    const seen = new Set<string>();
    for (let i = 0; i < a.maps.length; i++) {
      const m = a.maps[i];
      const at = `${path}.maps[${i}]`;
      if (seen.has(m.kind)) return `${at}.kind ${m.kind} appears twice`;
      seen.add(m.kind);
      const axes = KIND_AXES[m.kind];
      const block = [m.pool?.rows ?? 1, m.pool?.cols ?? 1];
      const want = [axes.queries, axes.keys].map((side, d) =>
        pooledCells((side === 'src' ? a.srcTokens : a.tgtTokens).length, block[d]!),
      );
      for (const d of [0, 1]) {
        if (m.shape[2 + d] !== want[d]) {
          const side = d === 0 ? axes.queries : axes.keys;
          const of = m.pool ? `⌈${side}Tokens.length / pool.${d === 0 ? 'rows' : 'cols'}⌉` : `${side}Tokens.length`;
          return `${at}.shape[${2 + d}] must be ${want[d]} (${of}), got ${m.shape[2 + d]}`;
        }
      }
      const n = m.shape.reduce((x, y) => x * y, 1);
      const got = length(m.weights);
      if (got !== n) return `${at}.weights must hold ${n} values (shape ${m.shape.join('×')}), got ${got}`;
      if (m.valueWeighted !== undefined) {
        if (m.pool) return `${at}.valueWeighted must be absent from pooled maps`;
        const vw = length(m.valueWeighted);
        if (vw !== n) return `${at}.valueWeighted must hold ${n} values (shape ${m.shape.join('×')}), got ${vw}`;
      }
    }
    return undefined;
  };
}

/** An in-memory attention (Float32Array weights). Values are not scanned: views show NaN as such. */
export const checkAttention: Check<Attention> = attentionCheck(isFloat32Array, (w) => (w as Float32Array).length);

export function findMaps<W>(a: Attention<W>, kind: AttentionKind): AttentionMaps<W> | undefined {
  return a.maps.find((m) => m.kind === kind);
}

/** The query and key token labels of a kind. */
export function tokensOf(a: Attention<unknown>, kind: AttentionKind): { queryTokens: string[]; keyTokens: string[] } {
  const axes = KIND_AXES[kind];
  const side = (s: 'src' | 'tgt') => (s === 'src' ? a.srcTokens : a.tgtTokens);
  return { queryTokens: side(axes.queries), keyTokens: side(axes.keys) };
}

/** One head's map: a view (no copy) of queries × keys weights, row-major. */
export interface HeadMap {
  queries: number;
  keys: number;
  weights: Float32Array;
  /** One label per row and column: of a pooled map, `first…last` of each block (algorithms/pool.ts). */
  queryTokens: string[];
  keyTokens: string[];
  /** The pool of a pooled map (queries and keys then count cells). */
  pool?: Pool;
}

/** The map of one head, or undefined when the attention lacks that kind, layer or head. */
export function headMap(a: Attention, ref: HeadRef): HeadMap | undefined {
  const m = findMaps(a, ref.kind);
  if (!m) return undefined;
  const [layers, heads, queries, keys] = m.shape;
  if (ref.layer >= layers || ref.head >= heads) return undefined;
  const size = queries * keys;
  const offset = (ref.layer * heads + ref.head) * size;
  const weights = m.weights.subarray(offset, offset + size);
  if (!m.pool) return { queries, keys, weights, ...tokensOf(a, ref.kind) };
  const { queryTokens, keyTokens } = tokensOf(a, ref.kind);
  const labels = {
    queryTokens: pooledLabels(queryTokens, m.pool.rows),
    keyTokens: pooledLabels(keyTokens, m.pool.cols),
  };
  return { queries, keys, weights, ...labels, pool: m.pool };
}
