/**
 * Greedy decoding's argmax by its definition (ties to the lowest token id, over exactly one row's V
 * log-probs), and a model without the optional `release`: cases the hand-worked tables of
 * beam.test.ts leave open, each found by a mutant that survived them (test/README.md, "Mutation score").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { greedyDecode } from '../../src/engine/decode/greedy';
import type { StepModel } from '../../src/engine/decode/search';
import { BOS, EOS, FakeModel, fromTable, type FakeState } from './fake-model';

const A = 2;
const B = 3;
const tokens = (r: { best: { tokens: Int32Array } }) => [...r.best.tokens];

test('a tie goes to the lower token id', async () => {
  // [] a −0.5, b −0.5 (tie: a); [a] EOS −0.25. logP = −0.75.
  const m = new FakeModel(4, (_s, p) =>
    p.length === 0 ? fromTable(4, { [A]: -0.5, [B]: -0.5 }) : fromTable(4, { [EOS]: -0.25 }),
  );
  const [r] = await greedyDecode(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [5] });
  assert.deepEqual(tokens(r!), [A, EOS]);
  assert.equal(r!.best.logProb, -0.75);
});

test('token 0 is a candidate like any other: it wins when it is the argmax', async () => {
  // [] token 0 −0.25, a −1; [0] EOS −0.5. (The search never excludes an id; the model does.)
  const m = new FakeModel(4, (_s, p) =>
    p.length === 0 ? fromTable(4, { 0: -0.25, [A]: -1 }) : fromTable(4, { [EOS]: -0.5 }),
  );
  const [r] = await greedyDecode(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [5] });
  assert.deepEqual(tokens(r!), [0, EOS]);
  assert.equal(r!.best.logProb, -0.75);
});

test('a row of −∞ everywhere is an all-way tie: token 0, log-prob −∞', async () => {
  const m = new FakeModel(4, (_s, p) => (p.length === 0 ? fromTable(4, {}) : fromTable(4, { [EOS]: -1 })));
  const [r] = await greedyDecode(m, m.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [5] });
  assert.deepEqual(tokens(r!), [0, EOS]);
  assert.equal(r!.best.logProb, -Infinity);
  assert.equal(m.calls.length, 2);
});

test('each row takes the argmax of its own V log-probs, not of the next row’s', async () => {
  // Sentence 0: [] a −1, EOS −2 → a, then EOS −0.5. Sentence 1: [] token 0 −0.125 → 0, then EOS −1.
  // The row after sentence 0's starts with sentence 1's −0.125, above all of sentence 0's.
  const m = new FakeModel(4, (s, p) => {
    if (p.length > 0) return fromTable(4, { [EOS]: s === 0 ? -0.5 : -1 });
    return s === 0 ? fromTable(4, { [A]: -1, [EOS]: -2 }) : fromTable(4, { 0: -0.125, [B]: -3 });
  });
  const rs = await greedyDecode(m, m.initial([0, 1]), { bos: BOS, eos: EOS, sourceLengths: [5, 5] });
  assert.deepEqual(rs.map(tokens), [
    [A, EOS],
    [0, EOS],
  ]);
  assert.deepEqual(
    rs.map((r) => r.best.logProb),
    [-1.5, -1.125],
  );
});

test('a model without `release` decodes (release is optional)', async () => {
  const inner = new FakeModel(4, (_s, p) => (p.length === 0 ? fromTable(4, { [A]: -1 }) : fromTable(4, { [EOS]: -1 })));
  const bare: StepModel<FakeState> = { step: (s, t) => inner.step(s, t), select: (s, r) => inner.select(s, r) };
  const [r] = await greedyDecode(bare, inner.initial([0]), { bos: BOS, eos: EOS, sourceLengths: [5] });
  assert.deepEqual(tokens(r!), [A, EOS]);
});
