// Greedy decoding: y_t = argmax_v log p(v | y_<t, X) at every step, for a batch of sentences.
// A sentence stops at EOS, or at maxLen = source length + 50 tokens, after which EOS is forced
// (its log-prob is the model's). Ties go to the lowest token id. Finished sentences are dropped
// from the batch through `select`, so later steps only compute the rows still running. A model with
// `greedyStep` hands over only each row's choice (and EOS's log-prob), not [rows · vocab] log-probs.
import {
  checkStep,
  finish,
  type GreedyStepOutput,
  maxLengths,
  pickGreedy,
  type SearchOptions,
  type SentenceResult,
  type StepModel,
} from './search';

export async function greedyDecode<State>(
  model: StepModel<State>,
  initial: State,
  opts: SearchOptions,
): Promise<SentenceResult[]> {
  const alpha = opts.alpha ?? 0.6;
  const maxLen = maxLengths(opts);
  const n = maxLen.length;
  const tokens: number[][] = Array.from({ length: n }, () => []);
  const stepRows: number[][] = Array.from({ length: n }, () => []);
  const logProb = new Float64Array(n);
  const results: (SentenceResult | undefined)[] = new Array(n);
  let active = Array.from({ length: n }, (_, i) => i); // sentence of each current row
  let state = initial;
  while (active.length > 0) {
    const last = Int32Array.from(active, (s) => (tokens[s]!.length ? tokens[s]![tokens[s]!.length - 1]! : opts.bos));
    const out = await greedyStep(model, state, last, opts.eos);
    const keep: number[] = [];
    const next: number[] = [];
    active.forEach((s, row) => {
      const atMax = tokens[s]!.length >= maxLen[s]!;
      const best = atMax ? opts.eos : out.tokens[row]!;
      tokens[s]!.push(best);
      stepRows[s]!.push(row);
      logProb[s] += atMax ? out.eosLogProbs[row]! : out.logProbs[row]!;
      if (best === opts.eos) {
        const h = finish(tokens[s]!, stepRows[s]!, logProb[s]!, alpha);
        results[s] = { best: h, nBest: [h] };
      } else {
        keep.push(row);
        next.push(s);
      }
    });
    active = next;
    if (active.length > 0) state = model.select(out.state, Int32Array.from(keep));
    else model.release?.(out.state);
  }
  return results as SentenceResult[];
}

/** The model's greedyStep, or its step's log-probs reduced to the same (pickGreedy). */
async function greedyStep<State>(
  model: StepModel<State>,
  state: State,
  last: Int32Array,
  eos: number,
): Promise<GreedyStepOutput<State>> {
  if (model.greedyStep) {
    const out = await model.greedyStep(state, last);
    if (out.tokens.length !== last.length || out.logProbs.length !== last.length)
      throw new RangeError(`greedyStep returned ${out.tokens.length} tokens for ${last.length} rows`);
    return out;
  }
  const out = await model.step(state, last);
  checkStep(out, last.length);
  return pickGreedy(out, last.length, eos);
}
