import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TelemetryRow } from '../../src/protocol/telemetry';
import { headColumns, sortHeads } from '../../webview/lib/heads';

// Three rows written out of order; the middle one lacks cross:0.1 and has a null for cross:0.0.
const ROWS: TelemetryRow[] = [
  { step: 20, pairs: 2, heads: ['encoder_self:0.0', 'cross:0.0', 'cross:0.1'], stats: { e: [0.5, 0.9, 0.1] } },
  { step: 10, pairs: 2, heads: ['encoder_self:0.0', 'cross:0.0', 'cross:0.1'], stats: { e: [0.7, 0.8, 0.3] } },
  { step: 15, pairs: 2, heads: ['encoder_self:0.0', 'cross:0.0'], stats: { e: [0.6, null] } },
];

test('headColumns lays one statistic out as heads × ascending steps, null where a row has no value', () => {
  const v = headColumns(ROWS, 'e');
  assert.deepEqual(v.steps, [10, 15, 20]);
  assert.deepEqual(v.heads, ['encoder_self:0.0', 'cross:0.0', 'cross:0.1']);
  assert.deepEqual(v.values, [
    [0.7, 0.6, 0.5],
    [0.8, null, 0.9],
    [0.3, null, 0.1],
  ]);
  assert.equal(v.min, 0.1);
  assert.equal(v.max, 0.9);
  assert.deepEqual(headColumns(ROWS, 'missing').values[0], [null, null, null]);
  assert.deepEqual([headColumns(ROWS, 'missing').min, headColumns([], 'e').max], [0, 0]);
});

test('sortHeads orders by latest value or mean, largest first, and filters by kind and words', () => {
  const v = headColumns(ROWS, 'e');
  // latest: cross:0.0 0.9, encoder 0.5, cross:0.1 0.1; mean: 0.85, 0.6, 0.2
  assert.deepEqual(sortHeads(v, 'latest', '', '').heads, ['cross:0.0', 'encoder_self:0.0', 'cross:0.1']);
  assert.deepEqual(sortHeads(v, 'mean', '', '').heads, ['cross:0.0', 'encoder_self:0.0', 'cross:0.1']);
  assert.deepEqual(sortHeads(v, 'name', '', '').heads, v.heads);
  const cross = sortHeads(v, 'name', 'cross', '');
  assert.deepEqual(cross.heads, ['cross:0.0', 'cross:0.1']);
  assert.deepEqual([cross.min, cross.max], [0.1, 0.9]);
  assert.deepEqual(sortHeads(v, 'name', '', ' 0.1 ').heads, ['cross:0.1']);
  assert.deepEqual(sortHeads(v, 'latest', 'encoder_self', '').values, [[0.7, 0.6, 0.5]]);
});
