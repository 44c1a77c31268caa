import { test } from 'node:test';
import assert from 'node:assert/strict';
import { beamSearch } from '../../src/engine/decode/beam';
import { greedyDecode } from '../../src/engine/decode/greedy';
import { lengthPenalty, type SentenceResult } from '../../src/engine/decode/search';
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

test('GNMT length penalty: lp(Y) = ((5 + |Y|)/6)^α', () => {
  assert.equal(lengthPenalty(1, 0.6), 1);
  close(lengthPenalty(2, 0.6), 1.0969022);
  close(lengthPenalty(4, 0.6), 1.2754245);
  assert.equal(lengthPenalty(7, 0), 1);
});

test('the length penalty changes which hypothesis wins', async () => {
  const run = async (alpha: number) => {
    const m = new FakeModel(4, lpTable);
    const [r] = await beamSearch(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [10], beamSize: 2, alpha });
    return { r: r!, m };
  };
  const { r: withLp, m } = await run(0.6);
  assert.deepEqual([...withLp.best.tokens], [A, B, B, EOS]);
  close(withLp.best.logProb, -2.75);
  close(withLp.best.score, -2.156142);
  assert.deepEqual([...withLp.nBest[1]!.tokens], [A, EOS]);
  close(withLp.nBest[1]!.score, -2.279146);
  assert.equal(m.calls.length, 4, 'stops once both beams have ended, long before 10 + 50');
  assert.equal(m.released, 1);

  const { r: noLp } = await run(0);
  assert.deepEqual([...noLp.best.tokens], [A, EOS]);
  close(noLp.best.score, -2.5);
});

test('early stop: a sentence ends as soon as all k beams have ended', async () => {
  // [] a −1, b −2; [a] EOS −0.5; [b] EOS −0.5, a −3. k = 2: step 2 ranks [a EOS] −1.5, [b EOS] −2.5
  // first → both finish and the search stops after 2 steps; best [a EOS].
  const m = new FakeModel(4, (_s, p) =>
    p.length === 0
      ? fromTable(4, { [A]: -1, [B]: -2 })
      : p[0] === A
        ? fromTable(4, { [EOS]: -0.5 })
        : fromTable(4, { [EOS]: -0.5, [A]: -3 }),
  );
  const [r] = await beamSearch(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [5], beamSize: 2 });
  assert.equal(m.calls.length, 2);
  assert.deepEqual(
    r!.nBest.map((h) => [...h.tokens]),
    [
      [A, EOS],
      [B, EOS],
    ],
  );
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

const strip = (rs: SentenceResult[]) =>
  rs.map((r) => r.nBest.map((h) => ({ tokens: [...h.tokens], logProb: h.logProb, score: h.score })));

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

test('beam 1 equals greedy on random models', async () => {
  for (let seed = 1; seed <= 40; seed++) {
    const table = randomTable(seed, 7);
    const opts = { bos: BOS, eos: EOS, sourceLengths: [2, 5, 0, 8], maxLenOffset: 4, beamSize: 1 };
    const mb = new FakeModel(7, table);
    const beam = await beamSearch(mb, mb.initial([0, 1, 2, 3]), opts);
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
