/**
 * The one argmax (src/algorithms/argmax.ts) and the three readers of it: a head's largest weight in
 * telemetry (stats.ts, alignment.ts) and greedy's token (search.ts pickGreedy). Values worked by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argmax } from '../../src/algorithms/argmax';
import { pickGreedy } from '../../src/engine/decode/search';
import { alignmentError } from '../../src/engine/telemetry/alignment';
import { headStats } from '../../src/engine/telemetry/stats';

test('argmax: the first index of the largest value in the range; NaN never the largest', () => {
  assert.equal(argmax([0.1, 0.5, 0.5, 0.2]), 1); // ties: the earlier
  assert.equal(argmax([NaN, 0.2, 0.7, NaN]), 2);
  assert.equal(argmax([0.3, NaN, 0.2]), 0);
  assert.equal(argmax([NaN, NaN]), 0); // nothing larger than −∞: the range's start
  assert.equal(argmax([-Infinity, -Infinity, -Infinity]), 0);
  assert.equal(argmax([-Infinity, -5]), 1);
  assert.equal(argmax([9, 1, 3, 3, 9], 1, 4), 2); // only [1, 4): the 9s outside do not count
  assert.equal(argmax([9, 1, 3], 3, 3), 3); // an empty range
  assert.equal(argmax(Float32Array.of(0.25, 0.75, 0.75)), 1);
});

test('a row whose first weight is NaN: telemetry and greedy read the same largest value past it', () => {
  // One cross head, Q = 2 rows (BOS, one token) over K = 3 keys; row 0 predicts target 0, aligned to key 1.
  const weights = Float32Array.of(NaN, 0.9, 0.1, 0.2, 0.3, 0.5);
  const maps = [{ kind: 'cross' as const, shape: [1, 1, 2, 3] as [number, number, number, number], weights }];
  assert.deepEqual(alignmentError([{ maps, align: [1] }]), [0]); // key 1 is the largest: no miss
  // top_diagonal: row 0's diagonal key is 0 (diagonalKey), its largest weight is on key 1.
  assert.deepEqual(headStats('cross', [{ maps }]).top_diagonal, [0]);
  // Two rows of V = 3 log-probs: row 0 takes token 2 past a NaN, row 1 the first of two equal.
  const logProbs = Float32Array.of(NaN, -2, -0.5, -1, -0.25, -0.25);
  const picked = pickGreedy({ logProbs, vocab: 3, state: null }, 2, 1);
  assert.deepEqual([...picked.tokens], [2, 1]);
  assert.deepEqual([...picked.logProbs], [-0.5, -0.25]);
  assert.deepEqual([...picked.eosLogProbs], [-2, -0.25]);
});
