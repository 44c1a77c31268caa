// Model-agnostic decoding: the interface a decoder exposes to the search, the GNMT length
// penalty, and the shapes of the results. No tfjs here; greedy.ts and beam.ts implement the
// searches over any StepModel (the Transformer's side lives with the model).
//
// Paper, section 6.1: "we used beam search with a beam size of 4 and length penalty α = 0.6
// [Wu et al., 2016]. … We set the maximum output length during inference to input length + 50,
// but terminate early when possible."

import { argmax } from '../../algorithms/argmax';
import type { BeamTree, EarlyStop } from '../../protocol/beamTree';

/**
 * What a search needs from a model. Rows index hypotheses: the first `step` sees the initial
 * state with one row per sentence (in sentence order); afterwards the search says which rows
 * to keep through `select`.
 */
export interface StepModel<State> {
  /**
   * Log-probabilities of the next token for each row, given each row's newest token (BOS on the
   * first step) and whatever the state remembers of the earlier ones. `logProbs` is row-major,
   * [rows · vocab]. The returned state includes this step (e.g. grown key/value caches).
   */
  step(state: State, lastTokens: Int32Array): Promise<StepOutput<State>>;
  /**
   * The state for a new batch whose row i continues old row `rows[i]` (beam reordering, dropping
   * finished sentences and hypotheses). An index may repeat (one hypothesis forks into several);
   * `rows` is never empty: when nothing is left the search calls `release` instead.
   */
  select(state: State, rows: Int32Array): State;
  /** Optional: called once with the last state when the search ends (e.g. to dispose tensors). */
  release?(state: State): void;
  /**
   * Optional, for greedy search: `step` reduced to what greedy reads, per row the argmax of the
   * log-probs (lowest id on ties) with its log-prob and EOS's, without handing over [rows · vocab]
   * (pickGreedy of `step`'s output, to the bit).
   */
  greedyStep?(state: State, lastTokens: Int32Array): Promise<GreedyStepOutput<State>>;
}

export interface GreedyStepOutput<State> {
  /** Per row: the argmax token. */
  tokens: Int32Array;
  /** Per row: its log-prob. */
  logProbs: Float32Array;
  /** Per row: EOS's log-prob (for a sentence at its maximum length, where EOS is forced). */
  eosLogProbs: Float32Array;
  state: State;
}

/** greedyStep from a full step's log-probs: per row the first index of the maximum (NaN never wins). */
export function pickGreedy<State>(out: StepOutput<State>, rows: number, eos: number): GreedyStepOutput<State> {
  const V = out.vocab;
  const tokens = new Int32Array(rows);
  const logProbs = new Float32Array(rows);
  const eosLogProbs = new Float32Array(rows);
  for (let row = 0; row < rows; row++) {
    const best = argmax(out.logProbs, row * V, (row + 1) * V) - row * V;
    tokens[row] = best;
    logProbs[row] = out.logProbs[row * V + best]!;
    eosLogProbs[row] = out.logProbs[row * V + eos]!;
  }
  return { tokens, logProbs, eosLogProbs, state: out.state };
}

export interface StepOutput<State> {
  logProbs: Float32Array;
  vocab: number;
  state: State;
}

export interface SearchOptions {
  /** Beginning-of-sentence id, fed as the first "newest token" of every row. */
  bos: number;
  /** End-of-sentence id. */
  eos: number;
  /** Source length of each sentence; their count is the number of sentences (initial rows). */
  sourceLengths: ArrayLike<number>;
  /** maxLen = sourceLength + maxLenOffset tokens before EOS (default 50, the paper's "+ 50"). */
  maxLenOffset?: number;
  /** Beam size k (default 4; ignored by greedy). */
  beamSize?: number;
  /** Length-penalty exponent α (default 0.6; 0 turns the penalty off). */
  alpha?: number;
  /** When beam search stops a sentence (default exact; see beam.ts). */
  earlyStop?: EarlyStop;
  /** Beam search records its search tree in each result. */
  tree?: boolean;
}

/** One finished output. */
export interface Hypothesis {
  /** Generated tokens after BOS, ending with EOS (always present: EOS is forced at maxLen + 1). */
  tokens: Int32Array;
  /** log P(Y | X) = Σ_t log p(y_t | y_<t, X), EOS included. */
  logProb: number;
  /** logProb / lp(|Y|) with |Y| = tokens.length (EOS counted); see lengthPenalty. */
  score: number;
  /**
   * stepRows[t] is the row, in the batch of the t-th `step` call (0-based), whose log-probs chose
   * tokens[t]: the path to read this hypothesis's per-step attention from.
   */
  stepRows: Int32Array;
}

export interface SentenceResult {
  /** The highest-scoring hypothesis (nBest[0]). */
  best: Hypothesis;
  /** Finished hypotheses, best first (at most k for beam search; one for greedy). */
  nBest: Hypothesis[];
  /** Beam search's tree, when asked for (SearchOptions.tree). */
  tree?: BeamTree;
}

/**
 * GNMT length penalty (Wu et al., 2016, eq. 14): lp(Y) = (5 + |Y|)^α / (5 + 1)^α, and the
 * hypothesis score s(Y, X) = log P(Y | X) / lp(Y) (their coverage penalty is not used).
 *
 * |Y| counts every generated token after BOS, including the final EOS. This is what tensor2tensor
 * (the paper's code) does: at decoding step i it divides by ((5 + (i + 1)) / 6)^α, i + 1 being the
 * length with the token just chosen (EOS for a finishing hypothesis); fairseq likewise normalizes
 * by the length with EOS (though with len^α rather than GNMT's formula).
 */
export function lengthPenalty(length: number, alpha: number): number {
  return ((5 + length) / 6) ** alpha;
}

/** Per-sentence maximum content length (tokens before EOS): sourceLength + offset. */
export function maxLengths(opts: SearchOptions): Int32Array {
  const offset = opts.maxLenOffset ?? 50;
  const out = new Int32Array(opts.sourceLengths.length);
  for (let i = 0; i < out.length; i++) {
    const n = opts.sourceLengths[i]! + offset;
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`bad maximum length ${n} for sentence ${i}`);
    out[i] = n;
  }
  return out;
}

/** Checks a step's output against the batch it was asked for. */
export function checkStep<State>(out: StepOutput<State>, rows: number): void {
  if (!Number.isInteger(out.vocab) || out.vocab <= 0) throw new RangeError(`bad vocab size ${out.vocab}`);
  if (out.logProbs.length !== rows * out.vocab) {
    throw new RangeError(`step returned ${out.logProbs.length} log-probs for ${rows} rows × ${out.vocab}`);
  }
}

/** Builds a finished hypothesis from its pieces. */
export function finish(tokens: number[], stepRows: number[], logProb: number, alpha: number): Hypothesis {
  return {
    tokens: Int32Array.from(tokens),
    stepRows: Int32Array.from(stepRows),
    logProb,
    score: logProb / lengthPenalty(tokens.length, alpha),
  };
}
