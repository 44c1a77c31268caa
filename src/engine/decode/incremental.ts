// The Transformer as a StepModel (see search.ts): what greedyDecode and beamSearch drive.
//
// IncrementalModel decodes the way the paper's auto-regressive decoder can run at inference
// (§3.2.3: each position attends only to earlier ones, so earlier positions never change):
//  - the encoder runs once per batch, and each decoder layer's cross-attention keys/values
//    K = memory·W^K, V = memory·W^V are projected once (crossKeysValues);
//  - each step embeds only the newest token at its position t and runs the decoder stack over
//    that one position; its self-attention reads the keys/values of positions 0…t−1 from the
//    per-layer cache and appends position t's (stacks.ts `decode` with a DecoderCache).
// FullRecomputeModel is the slow reference: every step runs `model.forward` over the source and
// the whole target prefix, and keeps the last position. The tests hold the two equal.
//
// Both never generate BOS or PAD: their log-probs are set to −∞ (after the softmax, so the other
// tokens' log-probs are the model's own, and a hypothesis's logProb is the teacher-forced one).
// Rows of the state are hypotheses; all rows of one batch have been fed the same number of tokens.
import * as tf from '@tensorflow/tfjs-core';
import { fusedGreedyPick, fusedLogSoftmax, hasGreedyPick, hasLinearKernel } from '../backend/inferenceOps';
import { type KeysValues, slicedProjections } from '../model/attention';
import type { ForwardContext } from '../model/context';
import type { TransformerLayers } from '../model/params';
import { crossKeysValues, decode, type DecoderCache } from '../model/stacks';
import { EVAL, type Transformer } from '../model/transformer';
import { opsFor } from '../ops';
import { type GreedyStepOutput, pickGreedy, type StepModel, type StepOutput } from './search';

export interface IncrementalState {
  /** Per decoder layer: the memory's cross-attention keys/values, [B, h, S, dk] each. */
  cross: KeysValues[];
  /** The source padding mask, [B, 1, 1, S]. */
  srcMask: tf.Tensor4D;
  /** Per decoder layer: self-attention keys/values of the positions fed so far, [B₀, h, t, dk]; null before the first step. */
  self: (KeysValues | null)[];
  /**
   * Row i of `self` is row selfRows[i] of its tensors (B₀ rows): select's reordering, done by the next
   * step while it appends the new position (one copy instead of a gather and a concat); null: as stored.
   */
  selfRows: Int32Array | null;
  /** Tokens fed so far (the position of the next one). */
  position: number;
  /** Rows (hypotheses) in this state. */
  rows: number;
  /** Per row: the sentence (row of `initial`'s batch) whose memory `cross` and `srcMask` hold. */
  sentences: Int32Array;
}

/** Pads id lists to the longest with `pad` (row-major, for a [B, S] int32 tensor). */
export function padBatch(ids: number[][], pad: number): { data: Int32Array; shape: [number, number] } {
  if (ids.length === 0) throw new RangeError('empty batch');
  const s = Math.max(...ids.map((r) => r.length));
  if (s === 0) throw new RangeError('every source sentence is empty');
  const data = new Int32Array(ids.length * s).fill(pad);
  ids.forEach((row, b) => data.set(row, b * s));
  return { data, shape: [ids.length, s] };
}

/** Sets the log-probs of tokens that must never be generated (BOS, PAD) to −∞, in place. */
function forbid(model: Transformer, logProbs: Float32Array, rows: number, vocab: number): Float32Array {
  const { bos_id: bos, pad_id: pad } = model.config;
  for (let r = 0; r < rows; r++) {
    logProbs[r * vocab + bos] = -Infinity;
    logProbs[r * vocab + pad] = -Infinity;
  }
  return logProbs;
}

function checkPosition(model: Transformer, position: number): void {
  if (position >= model.config.max_len)
    throw new RangeError(
      `target position ${position} is beyond max_len ${model.config.max_len} (cap the output length)`,
    );
}

function disposeKV(kvs: readonly (KeysValues | null)[]): void {
  for (const kv of kvs) if (kv) tf.dispose([kv.k, kv.v]);
}

/** Keys/values as a flat tensor list (what tf.tidy can return), and back. */
const flat = (kvs: readonly KeysValues[]): tf.Tensor4D[] => kvs.flatMap((kv) => [kv.k, kv.v]);
const unflat = (ts: tf.Tensor[]): KeysValues[] =>
  Array.from({ length: ts.length / 2 }, (_, i) => ({ k: ts[2 * i] as tf.Tensor4D, v: ts[2 * i + 1] as tf.Tensor4D }));

export class IncrementalModel implements StepModel<IncrementalState> {
  private sliced: { layers: TransformerLayers; dispose(): void } | undefined;
  private readonly ctx: ForwardContext;

  /**
   * `heads`: head gates (an ablation, ablate/gates.ts) applied at every step; the model as trained when absent.
   * Steps run the fused decoding kernels where the backend has them (ForwardContext.fused: ops/decoding.ts).
   */
  constructor(
    readonly model: Transformer,
    heads?: ForwardContext['heads'],
  ) {
    this.ctx = heads ? { ...EVAL, heads, fused: true } : { ...EVAL, fused: true };
  }

  /**
   * The model's layers with W^Q, W^K, W^V sliced once for every step (dispose() frees them), unless
   * the fused linear kernel reads them in place from the stacked weights (it did cost ~60 ms of
   * copies per batch of `small` on wasm, ~10% of a greedy batch).
   */
  private get layers(): TransformerLayers {
    if (hasLinearKernel()) return this.model.layers;
    this.sliced ??= slicedProjections(this.model.layers);
    return this.sliced.layers;
  }

  /** Frees what this model made for decoding; call it when the search is done. */
  dispose(): void {
    this.sliced?.dispose();
    this.sliced = undefined;
  }

  /** Encodes a batch of sources (unpadded id lists, padded here with pad_id): one row per sentence. */
  initial(src: number[][]): IncrementalState {
    const { data, shape } = padBatch(src, this.model.config.pad_id);
    const [srcMask, ...cross] = tf.tidy(() => {
      const { memory, srcMask } = this.model.encodeSource(tf.tensor2d(data, shape, 'int32'), this.ctx); // [B, S, d], [B, 1, 1, S]
      return [srcMask, ...flat(crossKeysValues(this.model.config, this.layers, memory, opsFor(this.ctx)))]; // [B, 1, 1, S], L × 2 × [B, h, S, dk]
    });
    return {
      cross: unflat(cross),
      srcMask: srcMask as tf.Tensor4D,
      self: new Array<KeysValues | null>(this.model.config.decoder_layers).fill(null),
      selfRows: null,
      position: 0,
      rows: src.length,
      sentences: Int32Array.from(src, (_, i) => i),
    };
  }

  /**
   * Runs the decoder over each row's newest token: head(logits [B, V]) and the state with this
   * position appended to the self-attention caches (the old caches disposed).
   */
  private advance(
    state: IncrementalState,
    lastTokens: Int32Array,
    head: (logits: tf.Tensor2D) => tf.Tensor,
  ): { out: tf.Tensor; next: IncrementalState } {
    if (lastTokens.length !== state.rows) throw new RangeError(`${lastTokens.length} tokens for ${state.rows} rows`);
    checkPosition(this.model, state.position);
    const c = this.model.config;
    const [out, ...self] = tf.tidy(() => {
      const y = this.model.embedTarget(tf.tensor2d(lastTokens, [state.rows, 1], 'int32'), state.position); // [B, 1, d]
      const rows = state.selfRows ? { rows: tf.tensor1d(state.selfRows, 'int32') } : {}; // [B]
      const cache: DecoderCache = { self: [...state.self], cross: state.cross, ...rows };
      // One query position attending to every position fed so far: no causal mask needed.
      const dec = decode(c, this.layers, y, state.cross, undefined, state.srcMask, this.ctx, cache); // [B, 1, d]
      const { w, b } = this.layers.generator; // y·Wᵀ + b, as model.generate
      const logits = tf.reshape(opsFor(this.ctx).linear(dec, w, b), [state.rows, c.tgt_vocab]) as tf.Tensor2D; // [B, V]
      return [head(logits), ...flat(cache.self as KeysValues[])]; // L × 2 × [B, h, t+1, dk]
    });
    disposeKV(state.self); // the new caches are copies extended by one position
    return { out: out!, next: { ...state, self: unflat(self), selfRows: null, position: state.position + 1 } };
  }

  async step(state: IncrementalState, lastTokens: Int32Array): Promise<StepOutput<IncrementalState>> {
    const V = this.model.config.tgt_vocab;
    const { out: logProbs, next } = this.advance(state, lastTokens, (logits) => fusedLogSoftmax(logits)); // [B, V]
    try {
      const data = (await logProbs.data()) as Float32Array;
      return { logProbs: forbid(this.model, data, state.rows, V), vocab: V, state: next };
    } catch (err) {
      this.release(next);
      throw err;
    } finally {
      logProbs.dispose();
    }
  }

  /**
   * step reduced on the backend to greedy's choice per row (backend/inferenceOps.ts fusedGreedyPick:
   * [B, 3] read back instead of [B, V]); pickGreedy of step where the backend lacks the kernel.
   */
  async greedyStep(state: IncrementalState, lastTokens: Int32Array): Promise<GreedyStepOutput<IncrementalState>> {
    const { bos_id: bos, pad_id: pad, eos_id: eos } = this.model.config;
    if (!hasGreedyPick()) return pickGreedy(await this.step(state, lastTokens), state.rows, eos);
    const { out: picks, next } = this.advance(state, lastTokens, (logits) => fusedGreedyPick(logits, bos, pad, eos)!); // [B, 3]
    try {
      const data = (await picks.data()) as Float32Array;
      const n = state.rows;
      const tokens = Int32Array.from({ length: n }, (_, r) => data[3 * r]!);
      const logProbs = Float32Array.from({ length: n }, (_, r) => data[3 * r + 1]!);
      const eosLogProbs = Float32Array.from({ length: n }, (_, r) => data[3 * r + 2]!);
      return { tokens, logProbs, eosLogProbs, state: next };
    } catch (err) {
      this.release(next);
      throw err;
    } finally {
      picks.dispose();
    }
  }

  /**
   * Row i of the new state continues old row rows[i]. The memory's keys/values and mask are gathered
   * along the batch axis (the old ones disposed), unless every row keeps its sentence (beam search
   * reordering hypotheses within each sentence): they depend only on the sentence. The self-attention
   * caches are gathered by the next step (selfRows).
   */
  select(state: IncrementalState, rows: Int32Array): IncrementalState {
    if (rows.length === 0) throw new RangeError('select with no rows');
    const identity = rows.length === state.rows && rows.every((r, i) => r === i);
    if (identity) return state;
    const sentences = Int32Array.from(rows, (r) => state.sentences[r]!);
    const sameMemory = sentences.length === state.rows && sentences.every((s, i) => s === state.sentences[i]);
    const started = state.self[0] !== null; // every layer's cache exists after the first step, none before
    const selfRows = started ? Int32Array.from(rows, (r) => (state.selfRows ? state.selfRows[r]! : r)) : null;
    if (sameMemory) return { ...state, selfRows, rows: rows.length, sentences };
    const [srcMask, ...cross] = tf.tidy(() => {
      const idx = tf.tensor1d(rows, 'int32'); // [B']
      const take = (x: tf.Tensor): tf.Tensor => tf.gather(x, idx, 0); // [B', …]
      return [take(state.srcMask), ...flat(state.cross).map(take)]; // [B', 1, 1, S], 2L × [B', h, S, dk]
    });
    disposeKV(state.cross);
    state.srcMask.dispose();
    return {
      cross: unflat(cross),
      srcMask: srcMask as tf.Tensor4D,
      self: state.self,
      selfRows,
      position: state.position,
      rows: rows.length,
      sentences,
    };
  }

  release(state: IncrementalState): void {
    disposeKV(state.cross);
    disposeKV(state.self);
    state.srcMask.dispose();
  }
}

export interface RecomputeState {
  src: number[][]; // per row: the padded source ids
  fed: number[][]; // per row: the target tokens fed so far, BOS first
}

/** The reference: each step runs the whole model (encoder included) over the source and prefix. */
export class FullRecomputeModel implements StepModel<RecomputeState> {
  private readonly ctx: ForwardContext;

  constructor(
    readonly model: Transformer,
    heads?: ForwardContext['heads'],
  ) {
    this.ctx = heads ? { ...EVAL, heads } : EVAL;
  }

  initial(src: number[][]): RecomputeState {
    const { data, shape } = padBatch(src, this.model.config.pad_id);
    return {
      src: src.map((_, b) => Array.from(data.subarray(b * shape[1], (b + 1) * shape[1]))),
      fed: src.map(() => []),
    };
  }

  async step(state: RecomputeState, lastTokens: Int32Array): Promise<StepOutput<RecomputeState>> {
    if (lastTokens.length !== state.src.length)
      throw new RangeError(`${lastTokens.length} tokens for ${state.src.length} rows`);
    const fed = state.fed.map((f, r) => [...f, lastTokens[r]!]);
    const t = fed[0]!.length;
    checkPosition(this.model, t - 1);
    const V = this.model.config.tgt_vocab;
    const last = tf.tidy(() => {
      const all = this.model.forward(
        tf.tensor2d(state.src, undefined, 'int32'),
        tf.tensor2d(fed, undefined, 'int32'),
        this.ctx,
      ); // [B, t, V]
      return tf.reshape(tf.slice(all, [0, t - 1, 0], [fed.length, 1, V]), [fed.length, V]); // [B, V]
    });
    try {
      const data = (await last.data()) as Float32Array;
      return { logProbs: forbid(this.model, data, fed.length, V), vocab: V, state: { src: state.src, fed } };
    } finally {
      last.dispose();
    }
  }

  select(state: RecomputeState, rows: Int32Array): RecomputeState {
    return { src: Array.from(rows, (r) => state.src[r]!), fed: Array.from(rows, (r) => [...state.fed[r]!]) };
  }
}
