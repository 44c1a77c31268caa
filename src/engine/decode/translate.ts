// Translating id lists with a Transformer: batched beam search (or greedy) over the incremental
// decoder, and the attention of the chosen translation for the debugger's views.
//
// Paper, §6.1: beam size 4, length penalty α = 0.6, maximum output length input length + 50,
// terminating early when possible. The output length is also capped by the model's positions:
// BOS and at most max_len − 1 tokens fill the decoder's max_len positions (EOS is predicted at
// the last one and never fed).
import type { AttentionMaps } from '../../protocol/attention';
import type { BeamTree, EarlyStop } from '../../protocol/beamTree';
import { attentionOfPairs } from '../inspect/attentionOfPairs';
import type { ForwardContext } from '../model/context';
import type { Transformer } from '../model/transformer';
import { beamSearch } from './beam';
import { greedyDecode } from './greedy';
import { IncrementalModel } from './incremental';
import type { SearchOptions, SentenceResult } from './search';

export interface TranslateOptions {
  /** Beam size k (default 4); 1 decodes greedily. */
  beamSize?: number;
  /** Length-penalty exponent α (default 0.6). */
  alpha?: number;
  /** Maximum output length = source length (EOS included) + maxLenOffset (default 50), capped at max_len − 1. */
  maxLenOffset?: number;
  /** Sentences decoded together (default 32). Sentences are grouped by length; results keep input order. */
  batchSize?: number;
  /** When beam search stops a sentence (default exact, see beam.ts). */
  earlyStop?: EarlyStop;
  /** Keep each sentence's beam-search tree (beam search even when beamSize is 1). */
  tree?: boolean;
  /** Head gates (an ablation, ablate/gates.ts); the model as trained when absent. */
  heads?: ForwardContext['heads'];
}

export interface Translation {
  /** The generated tokens, without BOS and EOS. */
  tokens: number[];
  /** logProb / lp(|Y|), |Y| = tokens + EOS (GNMT length penalty, see search.ts). */
  score: number;
  /** log P(Y | X), the final EOS included. */
  logProb: number;
  /** The search tree, when asked for (TranslateOptions.tree). */
  tree?: BeamTree;
}

/**
 * A source line's ids (EOS last) fitted to the model's positions. Longer than max_len, it is refused
 * with the line (`where`) and the limit, or, with `truncate`, cut to its first max_len − 1 tokens and
 * EOS, and `cutFrom` says how long it was: input is never shortened silently.
 */
export function fitSource(
  ids: readonly number[],
  maxLen: number,
  where: string,
  truncate: boolean,
): { ids: number[]; cutFrom?: number } {
  if (ids.length <= maxLen) return { ids: [...ids] };
  if (!truncate)
    throw new RangeError(
      `${where}: ${ids.length} tokens (with </s>), more than the model's max_len of ${maxLen} positions; ` +
        'shorten the line, or pass --truncate to cut it',
    );
  return { ids: [...ids.slice(0, maxLen - 1), ids[ids.length - 1]!], cutFrom: ids.length };
}

function checkSources(model: Transformer, src: number[][]): void {
  const c = model.config;
  src.forEach((row, i) => {
    if (row.length === 0) throw new RangeError(`source ${i} is empty (it should at least end with EOS)`);
    if (row.length > c.max_len)
      throw new RangeError(`source ${i} has ${row.length} tokens, more than max_len ${c.max_len}`);
    for (const id of row)
      if (!Number.isInteger(id) || id < 0 || id >= c.src_vocab)
        throw new RangeError(`source ${i}: token id ${id} is outside the vocabulary [0, ${c.src_vocab})`);
    if (row.every((id) => id === c.pad_id)) throw new RangeError(`source ${i} is all padding`);
  });
}

type Checked = Required<Pick<TranslateOptions, 'earlyStop' | 'tree'>> &
  Pick<TranslateOptions, 'heads'> & {
    k: number;
    alpha: number;
    offset: number;
    batch: number;
  };

function checkOptions(opts: TranslateOptions): Checked {
  const k = opts.beamSize ?? 4;
  const alpha = opts.alpha ?? 0.6;
  const offset = opts.maxLenOffset ?? 50;
  const batch = opts.batchSize ?? 32;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`beamSize must be a positive integer, got ${k}`);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batchSize must be a positive integer, got ${batch}`);
  if (!Number.isInteger(offset) || offset < 0)
    throw new RangeError(`maxLenOffset must be a non-negative integer, got ${offset}`);
  if (!(alpha >= 0 && Number.isFinite(alpha))) throw new RangeError(`alpha must be a number ≥ 0, got ${alpha}`);
  const heads = opts.heads ? { heads: opts.heads } : {};
  return { k, alpha, offset, batch, earlyStop: opts.earlyStop ?? 'exact', tree: opts.tree === true, ...heads };
}

/** Decodes one batch of sources (unpadded) and returns one result per sentence. */
async function decodeBatch(model: Transformer, src: number[][], o: Checked): Promise<SentenceResult[]> {
  const c = model.config;
  const cap = c.max_len - 1; // tokens before EOS that the decoder's positions allow
  const off = Math.min(o.offset, cap);
  // The search's bound is sourceLength + offset; lowering the length it sees caps it at `cap`.
  const opts: SearchOptions = {
    bos: c.bos_id,
    eos: c.eos_id,
    sourceLengths: src.map((s) => Math.min(s.length, cap - off)),
    maxLenOffset: off,
    beamSize: o.k,
    alpha: o.alpha,
    earlyStop: o.earlyStop,
    tree: o.tree,
  };
  const stepModel = new IncrementalModel(model, o.heads);
  try {
    const initial = stepModel.initial(src);
    const greedy = o.k === 1 && !o.tree;
    return await (greedy ? greedyDecode(stepModel, initial, opts) : beamSearch(stepModel, initial, opts));
  } finally {
    stepModel.dispose();
  }
}

function toTranslation(r: SentenceResult, eos: number): Translation {
  const tokens = Array.from(r.best.tokens);
  if (tokens.length > 0 && tokens[tokens.length - 1] === eos) tokens.pop();
  return { tokens, score: r.best.score, logProb: r.best.logProb, ...(r.tree ? { tree: r.tree } : {}) };
}

/**
 * Translates source id lists (unpadded, each ending with EOS as the trainer feeds them). Sentences
 * of similar length are batched together (padded with pad_id); the answers are in input order.
 */
export async function translate(
  model: Transformer,
  src: number[][],
  opts: TranslateOptions = {},
): Promise<Translation[]> {
  checkSources(model, src);
  const checked = checkOptions(opts);
  const order = src.map((_, i) => i).sort((a, b) => src[a]!.length - src[b]!.length || a - b);
  const out: Translation[] = new Array(src.length);
  for (let start = 0; start < order.length; start += checked.batch) {
    const ids = order.slice(start, start + checked.batch);
    const results = await decodeBatch(
      model,
      ids.map((i) => src[i]!),
      checked,
    );
    ids.forEach((i, j) => (out[i] = toTranslation(results[j]!, model.config.eos_id)));
  }
  return out;
}

/**
 * Translates one sentence and returns, with it, the attention of the chosen hypothesis: the
 * teacher-forced pass over [BOS, …tokens] in eval mode, which is exactly what the decoder computed
 * along the chosen path (positions never see later ones). decoder_self and cross have 1 + tokens
 * query rows: BOS and the chosen tokens (the last row predicts EOS).
 */
export async function translateWithAttention(
  model: Transformer,
  srcIds: number[],
  opts: TranslateOptions = {},
): Promise<Translation & { maps: AttentionMaps[] }> {
  const [t] = await translate(model, [srcIds], { ...opts, batchSize: 1 });
  const [pair] = await attentionOfPairs(model, [srcIds], [[model.config.bos_id, ...t!.tokens]], opts.heads);
  return { ...t!, maps: pair.maps };
}
