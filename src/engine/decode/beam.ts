// Beam search over a StepModel, batched over sentences (rows = sentences × live beams).
//
// Per sentence, with beam size k (the rules of fairseq's sequence generator, with GNMT's
// length penalty as the paper uses it):
//  - Live hypotheses are ranked by their raw log-probability log P(y_1..y_t | X). (All
//    candidates of one step have the same length, so dividing by lp(t) — as tensor2tensor does —
//    would not change their order.)
//  - Each step, every live hypothesis is extended by every token; the 2k best candidates are
//    taken (ties: lower live index, then lower token id). Candidates ending in EOS among the
//    first k of them move to the sentence's finished list (up to k in all), scored
//    s(Y) = log P(Y | X) / lp(|Y|) with |Y| counting EOS (see lengthPenalty). The first k
//    candidates not ending in EOS become the next live hypotheses.
//  - Early stop: a sentence ends as soon as its finished list holds k hypotheses, i.e. all k
//    beams have ended; later live hypotheses are discarded, however they might have scored.
//  - Maximum length: a hypothesis holds at most maxLen = source length + 50 tokens before EOS;
//    on the step after that, every live hypothesis is ended with EOS (the model's EOS log-prob
//    is used) and the best of them fill the finished list.
//  - The answer is the finished hypothesis with the highest s(Y); nBest lists them all, best
//    first. Candidates with log-prob −∞ (or NaN) are never taken, except by the forced EOS.
// Finished sentences leave the batch through `select`, so rows never idle.
import {
  checkStep,
  finish,
  maxLengths,
  type Hypothesis,
  type SearchOptions,
  type SentenceResult,
  type StepModel,
} from './search';

interface Live {
  tokens: number[];
  stepRows: number[];
  logProb: number;
  row: number; // this hypothesis's row in the current batch
}

interface Candidate {
  logProb: number;
  live: number; // index into the sentence's live list
  token: number;
}

/** The best `m` candidates of one sentence (descending log-prob, ties to lower live, then token). */
function topCandidates(lives: Live[], logProbs: Float32Array, V: number, m: number): Candidate[] {
  const top: Candidate[] = [];
  lives.forEach((h, live) => {
    const base = h.row * V;
    for (let token = 0; token < V; token++) {
      const lp = h.logProb + logProbs[base + token]!;
      if (!(lp > -Infinity)) continue; // −∞ and NaN
      if (top.length === m && !(lp > top[m - 1]!.logProb)) continue; // equal loses: scanned later
      let at = top.length;
      while (at > 0 && top[at - 1]!.logProb < lp) at--;
      top.splice(at, 0, { logProb: lp, live, token });
      if (top.length > m) top.pop();
    }
  });
  return top;
}

export async function beamSearch<State>(
  model: StepModel<State>,
  initial: State,
  opts: SearchOptions,
): Promise<SentenceResult[]> {
  const k = opts.beamSize ?? 4;
  const alpha = opts.alpha ?? 0.6;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`beamSize must be a positive integer, got ${k}`);
  const maxLen = maxLengths(opts);
  const n = maxLen.length;
  const finished: Hypothesis[][] = Array.from({ length: n }, () => []);
  // live[s]: the live hypotheses of sentence s; a sentence is active while it has some.
  let live: Live[][] = Array.from({ length: n }, (_, s) => [{ tokens: [], stepRows: [], logProb: 0, row: s }]);
  let active = Array.from({ length: n }, (_, s) => s);
  let state = initial;
  let rows = n;
  while (active.length > 0) {
    const last = new Int32Array(rows);
    for (const s of active)
      for (const h of live[s]!) last[h.row] = h.tokens.length ? h.tokens[h.tokens.length - 1]! : opts.bos;
    const out = await model.step(state, last);
    checkStep(out, rows);
    const V = out.vocab;
    const nextLive: Live[][] = live.map(() => []);
    const keep: number[] = [];
    const stillActive: number[] = [];
    for (const s of active) {
      const lives = live[s]!;
      const done = finished[s]!;
      const extend = (
        h: Live,
        token: number,
        logProb: number,
      ): { tokens: number[]; stepRows: number[]; logProb: number } => ({
        tokens: [...h.tokens, token],
        stepRows: [...h.stepRows, h.row],
        logProb,
      });
      if (lives[0]!.tokens.length >= maxLen[s]!) {
        // Forced end: each live hypothesis takes EOS; the best fill the finished list.
        const ended = lives
          .map((h) => extend(h, opts.eos, h.logProb + out.logProbs[h.row * V + opts.eos]!))
          .map((e) => finish(e.tokens, e.stepRows, e.logProb, alpha))
          .sort((a, b) => (b.logProb > a.logProb ? 1 : b.logProb < a.logProb ? -1 : 0));
        done.push(...ended.slice(0, k - done.length));
        continue;
      }
      const cands = topCandidates(lives, out.logProbs, V, 2 * k);
      const next: Live[] = [];
      cands.forEach((c, rank) => {
        const h = lives[c.live]!;
        if (c.token === opts.eos) {
          if (rank < k && done.length < k) {
            const e = extend(h, c.token, c.logProb);
            done.push(finish(e.tokens, e.stepRows, e.logProb, alpha));
          }
        } else if (next.length < k) {
          next.push({ ...extend(h, c.token, c.logProb), row: h.row }); // row: the parent's, for now
        }
      });
      if (done.length >= k || next.length === 0) continue; // early stop: all k beams have ended
      for (const h of next) {
        keep.push(h.row); // the new batch's row keep.length - 1 continues the parent's row
        h.row = keep.length - 1;
      }
      nextLive[s] = next;
      stillActive.push(s);
    }
    live = nextLive;
    active = stillActive;
    rows = keep.length;
    if (rows > 0) state = model.select(out.state, Int32Array.from(keep));
    else model.release?.(out.state);
  }
  return finished.map((done) => {
    // Stable sort: equal scores keep the order in which they finished.
    const nBest = [...done].sort((a, b) => (b.score > a.score ? 1 : b.score < a.score ? -1 : 0));
    if (nBest.length === 0) {
      // Only when every candidate had log-prob −∞ or NaN from the first step on.
      const empty = finish([], [], -Infinity, alpha);
      return { best: empty, nBest: [] };
    }
    return { best: nBest[0]!, nBest };
  });
}
