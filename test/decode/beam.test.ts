import { test } from 'node:test';
import assert from 'node:assert/strict';
import { beamSearch } from '../../src/engine/decode/beam';
import { greedyDecode } from '../../src/engine/decode/greedy';
import { lengthPenalty, type SentenceResult } from '../../src/engine/decode/search';
import type { EarlyStop } from '../../src/protocol/beamTree';
import { BOS, EOS, FakeModel, fromTable, randomTable } from './fake-model';

const A = 2;
const B = 3;
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-5, `${a} ≉ ${b}`);

// Log-probs by prefix (all exact in binary, so sums are exact). Vocabulary: BOS, EOS, a, b.
//   []        a −1, b −3
//   [a]       EOS −1.5, b −1.25
//   [a b]     b −0.25, EOS −4
//   [a b b]   EOS −0.25
//   [b …]     b −0.25 (never ends)
// Beam k = 2, worked by hand (2k = 4 candidates per step; EOS taken only in the first k ranks):
//   step 1: a −1, b −3                              → live [a], [b]
//   step 2: [a b] −2.25, [a EOS] −2.5, [b b] −3.25  → [a EOS] finished (rank 1); live [a b], [b b]
//   step 3: [a b b] −2.5, [b b b] −3.5, [a b EOS] −6.25 (rank 2: not taken) → live [a b b], [b b b]
//   step 4: [a b b EOS] −2.75 (rank 0)              → finished; 2 = k finished: stop after 4 steps
// Scores s = logP / ((5 + |Y|)/6)^α, |Y| with EOS:
//   α = 0.6: (7/6)^0.6 = 1.0969022, (9/6)^0.6 = 1.2754245
//            [a EOS]: −2.5 / 1.0969022 = −2.279146;  [a b b EOS]: −2.75 / 1.2754245 = −2.156142 → long wins
//   α = 0:   −2.5 vs −2.75 → short wins
const lpTable = (_s: number, p: number[]) => {
  const key = p.map((t) => (t === A ? 'a' : t === B ? 'b' : 'EOS')).join(' ');
  if (key === '') return fromTable(4, { [A]: -1, [B]: -3 });
  if (key === 'a') return fromTable(4, { [EOS]: -1.5, [B]: -1.25 });
  if (key === 'a b') return fromTable(4, { [B]: -0.25, [EOS]: -4 });
  if (key === 'a b b') return fromTable(4, { [EOS]: -0.25 });
  if (key.startsWith('b')) return fromTable(4, { [B]: -0.25 });
  throw new Error(`unexpected prefix ${key}`);
};

const strip = (rs: SentenceResult[]) =>
  rs.map((r) => r.nBest.map((h) => ({ tokens: [...h.tokens], logProb: h.logProb, score: h.score })));

test('GNMT length penalty: lp(Y) = ((5 + |Y|)/6)^α', () => {
  assert.equal(lengthPenalty(1, 0.6), 1);
  close(lengthPenalty(2, 0.6), 1.0969022);
  close(lengthPenalty(4, 0.6), 1.2754245);
  assert.equal(lengthPenalty(7, 0), 1);
});

test('the length penalty changes which hypothesis wins', async () => {
  const run = async (alpha: number, earlyStop?: EarlyStop) => {
    const m = new FakeModel(4, lpTable);
    const opts = { bos: BOS, eos: EOS, sourceLengths: [10], beamSize: 2, alpha, earlyStop };
    const [r] = await beamSearch(m, m.initial([0]), opts);
    return { r: r!, m };
  };
  const { r: withLp, m } = await run(0.6, 'first-k');
  assert.deepEqual([...withLp.best.tokens], [A, B, B, EOS]);
  close(withLp.best.logProb, -2.75);
  close(withLp.best.score, -2.156142);
  assert.deepEqual([...withLp.nBest[1]!.tokens], [A, EOS]);
  close(withLp.nBest[1]!.score, -2.279146);
  assert.equal(m.calls.length, 4, 'first-k stops once both beams have ended, long before 10 + 50');
  assert.equal(m.released, 1);
  // The exact rule gives the same answer later: [b b …] never ends, and its bound
  // p / lp(10 + 50 + 1) with p = −3 − 0.25·(t − 1) after t steps (lp(61) = 11^0.6 = 4.215369) stays
  // above the second finished score −2.279146 up to t = 27 (−2.253658) and falls below at t = 28
  // (−2.312965).
  const { r: exact, m: me } = await run(0.6);
  assert.deepEqual(strip([exact]), strip([withLp]));
  assert.equal(me.calls.length, 28);

  const { r: noLp } = await run(0);
  assert.deepEqual([...noLp.best.tokens], [A, EOS]);
  close(noLp.best.score, -2.5);
});

// The flaw of the first-k rule (issue 10). k = 2, α = 0.6, maxLen 5 + 50. Log-probs by prefix:
//   []        a −0.125, b −5          [a], [a a]  EOS −2, a −0.125, b −4
//   [a a a]   EOS −0.0625             [a b], [a a b]  EOS −1          [b]  EOS −3, b −1
//   step 1: a −0.125, b −5 → live [a], [b]
//   step 2: [a a] −0.25, [a EOS] −2.125 (rank 1: finished), [a b] −4.125, [b b] −6 → live [a a], [a b]
//   step 3: [a a a] −0.375, [a a EOS] −2.25 (rank 1: finished), [a a b] −4.25, [a b EOS] −5.125 (rank 3)
//     first-k: 2 finished → stop. [a EOS] −2.125/lp(2) = −1.937273, [a a EOS] −2.25/lp(3) = −1.893299:
//     returns [a a EOS], though the model prefers a longer answer.
//     exact: the k-th best finished is −1.937273; [a a a] could still reach −0.375/lp(56) = −0.093266:
//     go on.
//   step 4: [a a a EOS] −0.4375 (finished, −0.4375/lp(4) = −0.343023), [a a b EOS] −5.25 (finished,
//     below the two best: dropped); nothing live → stop. Greedy takes a, a, a, EOS: the same.
const flawTable = (_s: number, p: number[]) => {
  const key = p.map((t) => (t === A ? 'a' : t === B ? 'b' : 'EOS')).join(' ');
  if (key === '') return fromTable(4, { [A]: -0.125, [B]: -5 });
  if (key === 'a' || key === 'a a') return fromTable(4, { [EOS]: -2, [A]: -0.125, [B]: -4 });
  if (key === 'a a a') return fromTable(4, { [EOS]: -0.0625 });
  if (key === 'a b' || key === 'a a b') return fromTable(4, { [EOS]: -1 });
  if (key === 'b') return fromTable(4, { [EOS]: -3, [B]: -1 });
  throw new Error(`unexpected prefix ${key}`);
};

test('first-k stops with a short hypothesis; the exact rule finds the longer, better one', async () => {
  const opts = { bos: BOS, eos: EOS, sourceLengths: [5], beamSize: 2 };
  const mf = new FakeModel(4, flawTable);
  const [firstK] = await beamSearch(mf, mf.initial([0]), { ...opts, earlyStop: 'first-k' });
  assert.equal(mf.calls.length, 3);
  assert.deepEqual([...firstK!.best.tokens], [A, A, EOS]);
  close(firstK!.best.logProb, -2.25);
  close(firstK!.best.score, -1.893299);
  close(firstK!.nBest[1]!.score, -1.937273);

  const me = new FakeModel(4, flawTable);
  const [exact] = await beamSearch(me, me.initial([0]), opts); // exact is the default
  assert.equal(me.calls.length, 4);
  assert.deepEqual(
    exact!.nBest.map((h) => [...h.tokens]),
    [
      [A, A, A, EOS],
      [A, A, EOS],
    ],
  );
  close(exact!.best.logProb, -0.4375);
  close(exact!.best.score, -0.343023);

  const mg = new FakeModel(4, flawTable);
  const [greedy] = await greedyDecode(mg, mg.initial([0]), opts);
  assert.deepEqual([...greedy!.best.tokens], [A, A, A, EOS]);
  assert.ok(exact!.best.score >= greedy!.best.score);
});

test('the exact rule stops once the best live bound falls below the k-th finished score', async () => {
  // [] a −1, b −2; [a …] EOS −0.5; [b …] EOS −0.5, a −3. k = 2, maxLen 5 + 50, lp(56) = 4.020751.
  //   step 2: [a EOS] −1.5 and [b EOS] −2.5 finish (−1.367488, −2.279145); live [b a] −5: bound
  //     −5/lp(56) = −1.243549 > −2.279145 → go on (first-k stops here)
  //   step 3: [b a EOS] −5.5 (−4.628065: not among the two best), live [b a a] −8: bound −1.989678 → go on
  //   step 4: [b a a a] −11: bound −2.735807 < −2.279145 → stop after 4 steps, same answer.
  const table = (_s: number, p: number[]) =>
    p.length === 0
      ? fromTable(4, { [A]: -1, [B]: -2 })
      : p[0] === A
        ? fromTable(4, { [EOS]: -0.5 })
        : fromTable(4, { [EOS]: -0.5, [A]: -3 });
  const results: SentenceResult[] = [];
  for (const [earlyStop, calls] of [
    ['first-k', 2],
    ['exact', 4],
  ] as const) {
    const m = new FakeModel(4, table);
    const opts = { bos: BOS, eos: EOS, sourceLengths: [5], beamSize: 2, earlyStop };
    const [r] = await beamSearch(m, m.initial([0]), opts);
    assert.equal(m.calls.length, calls, earlyStop);
    results.push(r!);
  }
  assert.deepEqual(
    results[1]!.nBest.map((h) => [...h.tokens]),
    [
      [A, EOS],
      [B, EOS],
    ],
  );
  assert.deepEqual(strip([results[0]!]), strip([results[1]!]));
});

test('the tree records every hypothesis the search looked at, and the chosen path', async () => {
  const m = new FakeModel(4, flawTable);
  const opts = { bos: BOS, eos: EOS, sourceLengths: [5], beamSize: 2, tree: true };
  const [r] = await beamSearch(m, m.initial([0]), opts);
  const t = r!.tree!;
  const name = (id: number): string => {
    const n = t.nodes[id]!;
    const tok = n.token === A ? 'a' : n.token === B ? 'b' : n.token === EOS ? 'EOS' : 'BOS';
    return n.parent < 0 ? tok : `${name(n.parent)} ${tok}`;
  };
  const rows = t.nodes.map((n) => `${name(n.id)} ${n.status}${n.chosen ? ' chosen' : ''}`);
  assert.deepEqual(rows, [
    'BOS expanded chosen',
    'BOS a expanded chosen',
    'BOS b expanded',
    'BOS a a expanded chosen',
    'BOS a EOS pruned', // finished at step 2, pushed out of the two best at step 4
    'BOS a b expanded',
    'BOS b b pruned',
    'BOS a a a expanded chosen',
    'BOS a a EOS finished',
    'BOS a a b expanded',
    'BOS a b EOS pruned',
    'BOS a a a EOS finished chosen',
    'BOS a a b EOS pruned',
  ]);
  assert.deepEqual(t.nBest, [11, 8]);
  const best = t.nodes[11]!;
  close(best.logProb, r!.best.logProb);
  close(best.score, r!.best.score);
  assert.equal(best.depth, 4);
  close(t.nodes[3]!.score, -0.227915); // −0.25 / (7/6)^0.6
});

test('maximum length: source length + offset tokens, then EOS is forced', async () => {
  // a −0.125, b −0.25, EOS −8 everywhere: EOS never ranks among the first k until forced.
  // maxLen = 3 + 2 = 5. Beam 2 keeps [a a a a a] and [a a a a b] (ties → lower live index);
  // forced EOS at token 6: −5·0.125 − 8 = −8.625 and −4·0.125 − 0.25 − 8 = −8.75.
  const flat = () => fromTable(4, { [A]: -0.125, [B]: -0.25, [EOS]: -8 });
  const opts = { bos: BOS, eos: EOS, sourceLengths: [3], maxLenOffset: 2, beamSize: 2 };
  const m = new FakeModel(4, flat);
  const [r] = await beamSearch(m, m.initial([0]), opts);
  assert.equal(m.calls.length, 6);
  assert.deepEqual([...r!.best.tokens], [A, A, A, A, A, EOS]);
  assert.equal(r!.best.logProb, -8.625);
  assert.deepEqual([...r!.nBest[1]!.tokens], [A, A, A, A, B, EOS]);
  assert.equal(r!.nBest[1]!.logProb, -8.75);
  const g = new FakeModel(4, flat);
  const [gr] = await greedyDecode(g, g.initial([0]), opts);
  assert.deepEqual([...gr!.best.tokens], [A, A, A, A, A, EOS]);
  assert.equal(gr!.best.logProb, -8.625);
});

test('greedy takes the argmax each step (hand-traced on the table above)', async () => {
  // [] → a (−1); [a] → b (−1.25 > −1.5); [a b] → b (−0.25); [a b b] → EOS (−0.25): logP −2.75.
  const m = new FakeModel(4, lpTable);
  const [r] = await greedyDecode(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [10] });
  assert.deepEqual([...r!.best.tokens], [A, B, B, EOS]);
  assert.equal(r!.best.logProb, -2.75);
  close(r!.best.score, -2.156142);
});

/** stepRows[t] must point at the row that, at step t, held this sentence with prefix tokens[0..t). */
function checkRows(m: FakeModel, rs: SentenceResult[], sentences: number[]) {
  rs.forEach((r, i) => {
    for (const h of r.nBest) {
      h.stepRows.forEach((row, t) => {
        assert.equal(m.calls[t]!.sentences[row], sentences[i]);
        assert.deepEqual(m.calls[t]!.prefixes[row], [...h.tokens.slice(0, t)]);
      });
    }
  });
}

test('beam 1 with the first-k rule equals greedy on random models', async () => {
  // (With the exact rule, beam 1 goes on with the best non-EOS candidate after an EOS while it can
  // still win: a better search than greedy, not the same one.)
  for (let seed = 1; seed <= 40; seed++) {
    const table = randomTable(seed, 7);
    const opts = { bos: BOS, eos: EOS, sourceLengths: [2, 5, 0, 8], maxLenOffset: 4, beamSize: 1 };
    const firstK = { ...opts, earlyStop: 'first-k' as const };
    const mb = new FakeModel(7, table);
    const beam = await beamSearch(mb, mb.initial([0, 1, 2, 3]), firstK);
    const mg = new FakeModel(7, table);
    const greedy = await greedyDecode(mg, mg.initial([0, 1, 2, 3]), opts);
    assert.deepEqual(strip(beam), strip(greedy), `seed ${seed}`);
    assert.deepEqual(
      beam.map((r) => [...r.best.stepRows]),
      greedy.map((r) => [...r.best.stepRows]),
    );
    checkRows(mb, beam, [0, 1, 2, 3]);
    checkRows(mg, greedy, [0, 1, 2, 3]);
  }
});

test('batched sentences of different lengths decode as they would alone', async () => {
  const lengths = [1, 6, 3];
  for (let seed = 1; seed <= 20; seed++) {
    for (const beamSize of [2, 4]) {
      const table = randomTable(seed, 9);
      const opts = { bos: BOS, eos: EOS, maxLenOffset: 3, beamSize };
      const mAll = new FakeModel(9, table);
      const together = await beamSearch(mAll, mAll.initial([0, 1, 2]), { ...opts, sourceLengths: lengths });
      checkRows(mAll, together, [0, 1, 2]);
      for (let s = 0; s < lengths.length; s++) {
        const m1 = new FakeModel(9, table);
        const alone = await beamSearch(m1, m1.initial([s]), { ...opts, sourceLengths: [lengths[s]!] });
        assert.deepEqual(strip(alone), strip([together[s]!]), `seed ${seed} beam ${beamSize} sentence ${s}`);
        for (const h of together[s]!.nBest) assert.ok(h.tokens.length <= lengths[s]! + 3 + 1);
      }
    }
  }
});
