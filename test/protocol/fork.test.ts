/**
 * train/fork and ablation/score params (issue 13): well-formed ones pass; each malformed one is
 * refused with the field named (the expected strings are written out by hand), before any handler.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ablationScore, trainFork } from '../../src/protocol/methods';
import { validate } from '../../src/protocol/rpc';

const fork = (v: unknown): string | undefined => validate(trainFork.checkParams, v, trainFork.method, 'params');
const score = (v: unknown): string | undefined =>
  validate(ablationScore.checkParams, v, ablationScore.method, 'params');
const base = { parent: '/runs/a', step: 10, runDir: '/runs/a-fork' };

test('train/fork params: heads, the recipe and the folders are checked, each naming its field', () => {
  assert.equal(fork({ ...base, freezeHeads: ['cross:0.1'], lrFactor: 0.5, steps: 30, dropout: 0 }), undefined);
  assert.equal(
    fork({ ...base, parent: 'runs/a' }),
    'train/fork params.parent must be an absolute path, got "runs/a" (relative to which folder?)',
  );
  assert.equal(
    fork({ ...base, maskHeads: ['cross:0.1', 'cross'] }),
    'train/fork params.maskHeads[1] must be a head id like cross:0.1 (kind:layer.head, from 0), got "cross"',
  );
  assert.equal(
    fork({ ...base, reinitHeads: Array(1025).fill('cross:0.0') }),
    'train/fork params.reinitHeads must list at most 1024 heads, got 1025',
  );
  assert.equal(fork({ ...base, dropout: 1 }), 'train/fork params.dropout must be a number from 0 to 0.999, got 1');
  assert.equal(fork({ ...base, step: -1 }), 'train/fork params.step must be a whole number ≥ 0, got -1');
});

test('ablation/score params: the ablation and a bounded number of sentences', () => {
  const ablation = { heads: ['encoder_self:0.0'], mode: 'mean' };
  assert.equal(score({ runDir: '/runs/a', ablation, limit: 50 }), undefined);
  assert.equal(
    score({ runDir: '/runs/a', ablation, limit: 5001 }),
    'ablation/score params.limit must be a whole number from 1 to 5000, got 5001',
  );
  assert.equal(
    score({ runDir: '/runs/a', ablation: { heads: ['x'], mode: 'zero' } }),
    'ablation/score params.ablation.heads[0] must be a head id like cross:0.1 (kind:layer.head, from 0), got "x"',
  );
});
