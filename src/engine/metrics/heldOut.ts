/**
 * A model scored on held-out pairs as `evaluate` and `heads` report it: decode the sources, then
 * corpus BLEU against the references (sacreBLEU's, metrics/bleu.ts) and exact matches of the ids.
 */
import type { IdPair } from '../data/dataset';
import type { Vocabulary } from '../data/vocabulary';
import { translate, type TranslateOptions } from '../decode/translate';
import type { Transformer } from '../model/transformer';
import { type BleuScore, corpusBleu } from './bleu';

export interface HeldOutScore {
  hyps: string[];
  bleu: BleuScore;
  /** Hypotheses whose ids equal the reference's. */
  exact: number;
}

/** `refs`: the reference texts (the corpus's own for text data; the decoded ids for tasks). */
export async function scoreHeldOut(
  model: Transformer,
  pairs: readonly IdPair[],
  refs: readonly string[],
  vocab: Vocabulary,
  opts: TranslateOptions,
): Promise<HeldOutScore> {
  const out = await translate(
    model,
    pairs.map((p) => p.src),
    opts,
  );
  const hyps = out.map((t) => vocab.decode(t.tokens));
  const exact = out.filter((t, i) => t.tokens.join(',') === pairs[i]!.tgt.join(',')).length;
  return { hyps, bleu: corpusBleu(hyps, [[...refs]]), exact };
}
