// Greedy decoding: y_t = argmax_v log p(v | y_<t, X) at every step, for a batch of sentences.
// A sentence stops at EOS, or at maxLen = source length + 50 tokens, after which EOS is forced
// (its log-prob is the model's). Ties go to the lowest token id. Finished sentences are dropped
// from the batch through `select`, so later steps only compute the rows still running.
import { checkStep, finish, maxLengths, type SearchOptions, type SentenceResult, type StepModel } from './search';

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
    const out = await model.step(state, last);
    checkStep(out, active.length);
    const V = out.vocab;
    const keep: number[] = [];
    const next: number[] = [];
    active.forEach((s, row) => {
      let best = opts.eos;
      if (tokens[s]!.length < maxLen[s]!) {
        let bestLp = -Infinity;
        best = -1;
        for (let v = 0; v < V; v++) {
          const lp = out.logProbs[row * V + v]!;
          if (best < 0 || lp > bestLp) {
            best = v;
            bestLp = lp;
          }
        }
      }
      tokens[s]!.push(best);
      stepRows[s]!.push(row);
      logProb[s] += out.logProbs[row * V + best]!;
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
