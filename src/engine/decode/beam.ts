// Beam search over a StepModel, batched over sentences (rows = sentences × live beams).
//
// Per sentence, with beam size k (the rules of fairseq's sequence generator, with GNMT's
// length penalty as the paper uses it):
//  - Live hypotheses are ranked by their raw log-probability log P(y_1..y_t | X). (All
//    candidates of one step have the same length, so dividing by lp(t) — as tensor2tensor does —
//    would not change their order.)
//  - Each step, every live hypothesis is extended by every token; the 2k best candidates are
//    taken (ties: lower live index, then lower token id). Candidates ending in EOS among the
//    first k of them are finished, scored s(Y) = log P(Y | X) / lp(|Y|) with |Y| counting EOS
//    (see lengthPenalty); the sentence keeps the k best finished. The first k candidates not
//    ending in EOS become the next live hypotheses.
//  - Stopping (EarlyStop, protocol/beamTree.ts):
//    exact (default): a sentence stops only when no live hypothesis can still beat the k-th best
//      finished one. A live hypothesis's log-prob p ≤ 0 can only fall as it grows, and it ends
//      with at most maxLen + 1 tokens, so its score is at most p / lp(maxLen + 1) (lp grows with
//      length for α ≥ 0): when that bound for the best live one is ≤ the k-th best finished
//      score, nothing live can enter the k best. (transformers calls this early_stopping="never".)
//    first-k: a sentence stops as soon as k hypotheses have finished, keeping the first k. On a
//      confident model the best beam's EOS extensions rank high and can fill the list before a
//      better, longer hypothesis ends: faster, and sometimes worse than greedy.
//  - Maximum length: a hypothesis holds at most maxLen = source length + 50 tokens before EOS;
//    on the step after that, every live hypothesis is ended with EOS (the model's EOS log-prob
//    is used) and they join the finished ones.
//  - The answer is the finished hypothesis with the highest s(Y); nBest lists them all, best
//    first. Candidates with log-prob −∞ (or NaN) are never taken, except by the forced EOS.
// Finished sentences leave the batch through `select`, so rows never idle. With `tree`, every
// hypothesis looked at is recorded (protocol/beamTree.ts).
import type { BeamNode, BeamTree } from '../../protocol/beamTree';
import {
  checkStep,
  finish,
  lengthPenalty,
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
  node: number; // its node in the sentence's tree (-1 when no tree is kept)
}

interface Candidate {
  logProb: number;
  live: number; // index into the sentence's live list
  token: number;
}

interface Finished {
  h: Hypothesis;
  node: number;
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

const byScore = (a: Finished, b: Finished) => (b.h.score > a.h.score ? 1 : b.h.score < a.h.score ? -1 : 0);

/** One sentence's search tree while it grows; a no-op without `tree`. */
class TreeLog {
  readonly nodes: BeamNode[] = [];
  constructor(
    private readonly on: boolean,
    private readonly alpha: number,
    bos: number,
  ) {
    this.add(-1, bos, 0, 0, 'expanded');
  }

  add(parent: number, token: number, depth: number, logProb: number, status: BeamNode['status']): number {
    if (!this.on) return -1;
    const score = logProb / lengthPenalty(depth, this.alpha);
    this.nodes.push({ id: this.nodes.length, parent, depth, token, logProb, score, status, chosen: false });
    return this.nodes.length - 1;
  }

  mark(node: number, status: BeamNode['status']): void {
    if (node >= 0) this.nodes[node]!.status = status;
  }

  result(done: Finished[]): BeamTree | undefined {
    if (!this.on) return undefined;
    for (let n = done[0]?.node ?? -1; n >= 0; n = this.nodes[n]!.parent) this.nodes[n]!.chosen = true;
    return { nodes: this.nodes, nBest: done.map((f) => f.node) };
  }
}

export async function beamSearch<State>(
  model: StepModel<State>,
  initial: State,
  opts: SearchOptions,
): Promise<SentenceResult[]> {
  const k = opts.beamSize ?? 4;
  const alpha = opts.alpha ?? 0.6;
  const exact = (opts.earlyStop ?? 'exact') === 'exact';
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`beamSize must be a positive integer, got ${k}`);
  if (!(alpha >= 0)) throw new RangeError(`alpha must be ≥ 0, got ${alpha}`);
  const maxLen = maxLengths(opts);
  const n = maxLen.length;
  const finished: Finished[][] = Array.from({ length: n }, () => []);
  const trees = Array.from({ length: n }, () => new TreeLog(opts.tree === true, alpha, opts.bos));
  // live[s]: the live hypotheses of sentence s; a sentence is active while it has some.
  let live: Live[][] = Array.from({ length: n }, (_, s) => [
    { tokens: [], stepRows: [], logProb: 0, row: s, node: opts.tree ? 0 : -1 },
  ]);
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
      const tree = trees[s]!;
      for (const h of lives) tree.mark(h.node, 'expanded');
      /** Adds a finished hypothesis: exact keeps the k best by score, first-k the first k. */
      const end = (h: Live, logProb: number) => {
        const tokens = [...h.tokens, opts.eos];
        const node = tree.add(h.node, opts.eos, tokens.length, logProb, 'finished');
        if (!exact && done.length >= k) return tree.mark(node, 'pruned');
        done.push({ h: finish(tokens, [...h.stepRows, h.row], logProb, alpha), node });
        if (!exact) return;
        done.sort(byScore); // stable: of equal scores the earlier stays first
        for (const dropped of done.splice(k)) tree.mark(dropped.node, 'pruned');
      };
      if (lives[0]!.tokens.length >= maxLen[s]!) {
        // Forced end: each live hypothesis takes EOS (best log-prob first).
        const ended = lives
          .map((h) => ({ h, logProb: h.logProb + out.logProbs[h.row * V + opts.eos]! }))
          .sort((a, b) => (b.logProb > a.logProb ? 1 : b.logProb < a.logProb ? -1 : 0));
        for (const e of ended) end(e.h, e.logProb);
        continue;
      }
      const cands = topCandidates(lives, out.logProbs, V, 2 * k);
      const next: Live[] = [];
      cands.forEach((c, rank) => {
        const h = lives[c.live]!;
        if (c.token === opts.eos) {
          if (rank < k) end(h, c.logProb);
          else tree.add(h.node, c.token, h.tokens.length + 1, c.logProb, 'pruned');
        } else if (next.length < k) {
          const node = tree.add(h.node, c.token, h.tokens.length + 1, c.logProb, 'open');
          const tokens = [...h.tokens, c.token];
          next.push({ tokens, stepRows: [...h.stepRows, h.row], logProb: c.logProb, row: h.row, node }); // row: the parent's, for now
        } else {
          tree.add(h.node, c.token, h.tokens.length + 1, c.logProb, 'pruned');
        }
      });
      if (next.length === 0 || (done.length >= k && (!exact || !canStillWin(next[0]!, done[k - 1]!, maxLen[s]!)))) {
        continue; // this sentence is done; its live hypotheses stay 'open' in the tree
      }
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
  return finished.map((done, s) => {
    done.sort(byScore);
    const tree = trees[s]!.result(done);
    if (done.length === 0) {
      // Only when every candidate had log-prob −∞ or NaN from the first step on.
      return { best: finish([], [], -Infinity, alpha), nBest: [], ...(tree ? { tree } : {}) };
    }
    return { best: done[0]!.h, nBest: done.map((f) => f.h), ...(tree ? { tree } : {}) };
  });

  /**
   * Whether `best`, the live hypothesis of highest log-prob p, could still score above the k-th
   * best finished one: its final score is at most p / lp(maxLen + 1) when p ≤ 0 (and at most p
   * when p > 0, which no normalised model gives, since lp ≥ 1).
   */
  function canStillWin(best: Live, kth: Finished, max: number): boolean {
    const p = best.logProb;
    const bound = p > 0 ? p : p / lengthPenalty(max + 1, alpha);
    return bound > kth.h.score;
  }
}
