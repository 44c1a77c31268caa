import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBatches } from '../../src/engine/data/batching';
import { mulberry32 } from '../../src/engine/data/random';

const sorted = (b: number[][]): number[][] =>
  b.map((x) => [...x].sort((p, q) => p - q)).sort((p, q) => (p[0] as number) - (q[0] as number));

test('hand-worked batches under a budget of 20 padded tokens', () => {
  // Pairs (src, tgt): 0 (5,6) 1 (3,2) 2 (8,9) 3 (3,4) 4 (5,5) 5 (1,1). Sorted: 5 1 3 4 0 2.
  // {5}: 1*(1+1)=2; +1: 2*(3+2)=10; +3: 3*(3+4)=21 > 20, close. {3}: 7; +4: 2*(5+5)=20 fits;
  // +0: 3*(5+6)=33, close. {0}: 11; +2: 2*(8+9)=34, close. {2}: 17.
  const src = [5, 3, 8, 3, 5, 1];
  const tgt = [6, 2, 9, 4, 5, 1];
  assert.deepEqual(makeBatches(src, tgt, { maxTokens: 20, shuffle: false }), [[5, 1], [3, 4], [0], [2]]);
  assert.deepEqual(sorted(makeBatches(src, tgt, { maxTokens: 20, seed: 3 })), [[0], [1, 5], [2], [3, 4]]);
  assert.deepEqual(makeBatches(src, tgt, { maxTokens: 20, maxSentences: 1, shuffle: false }), [
    [5],
    [1],
    [3],
    [4],
    [0],
    [2],
  ]);
});

test('random corpus: each pair once, budget kept, similar lengths, seeded order', () => {
  const rand = mulberry32(11);
  const n = 5000;
  const src = Array.from({ length: n }, () => 1 + Math.floor(rand() * 60));
  const tgt = src.map((s) => Math.max(1, s + Math.floor(rand() * 11) - 5));
  const budget = 2000;
  const batches = makeBatches(src, tgt, { maxTokens: budget, seed: 1 });
  const seen = new Array<number>(n).fill(0);
  for (const b of batches) {
    assert.ok(b.length > 0);
    for (const i of b) seen[i] = (seen[i] as number) + 1;
    const padded =
      b.length * (Math.max(...b.map((i) => src[i] as number)) + Math.max(...b.map((i) => tgt[i] as number)));
    assert.ok(padded <= budget, `batch pads to ${padded} > ${budget}`);
  }
  assert.ok(
    seen.every((c) => c === 1),
    'every pair exactly once',
  );
  // Batches are runs of the length-sorted order: their source length ranges do not interleave,
  // so a batch spans a narrow band (here at most 2 tokens apart given ~5000/60 pairs per length).
  const ranges = batches.map(
    (b) => [Math.min(...b.map((i) => src[i] as number)), Math.max(...b.map((i) => src[i] as number))] as const,
  );
  const byMin = [...ranges].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  for (let k = 1; k < byMin.length; k++)
    assert.ok((byMin[k - 1] as readonly [number, number])[1] <= (byMin[k] as readonly [number, number])[0]);
  for (const [lo, hi] of ranges) assert.ok(hi - lo <= 2, `source lengths ${lo}..${hi} in one batch`);
  // Same seed, same batches; another seed shuffles the order.
  assert.deepEqual(makeBatches(src, tgt, { maxTokens: budget, seed: 1 }), batches);
  assert.notDeepEqual(
    makeBatches(src, tgt, { maxTokens: budget, seed: 2 }).map((b) => b.length),
    batches.map((b) => b.length),
  );
});

test('a pair alone over the budget is an error naming it', () => {
  assert.throws(() => makeBatches([3, 30], [3, 31], { maxTokens: 50 }), {
    message: 'pair 1 (source 30, target 31 tokens) alone exceeds the batch budget of 50 tokens',
  });
  assert.throws(() => makeBatches([1], [1, 2]), /1 source lengths but 2 target lengths/);
});
