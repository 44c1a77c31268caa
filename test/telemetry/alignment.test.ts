/** align_err and the `aligned (task)` role on hand-built cross maps, against values worked out by hand. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AttentionMaps } from '../../src/protocol/attention';
import { taskAlignment } from '../../src/engine/data/tasks';
import { alignmentError } from '../../src/engine/telemetry/alignment';
import { telemetryRow } from '../../src/engine/telemetry/telemetry';
import { headRoles } from '../../src/protocol/roles';

/** [1, heads, Q, K] cross maps from each head's rows. */
function cross(heads: number[][][]): AttentionMaps {
  return {
    kind: 'cross',
    shape: [1, heads.length, heads[0].length, heads[0][0].length],
    weights: Float32Array.from(heads.flat(2)),
  };
}
/** A row of K keys with its weight on key k. */
const onKey = (k: number, K: number): number[] => Array.from({ length: K }, (_, j) => (j === k ? 0.7 : 0.3 / (K - 1)));

test('taskAlignment: copy, reverse, and sort with ties kept in source order', () => {
  assert.deepEqual(taskAlignment('copy', [7, 5, 9]), [0, 1, 2]);
  assert.deepEqual(taskAlignment('reverse', [7, 5, 9]), [2, 1, 0]);
  // 5 3 5 3 4 sorts to 3 3 4 5 5: the 3s at 1 then 3, the 4 at 4, the 5s at 0 then 2.
  assert.deepEqual(taskAlignment('sort', [5, 3, 5, 3, 4]), [1, 3, 4, 0, 2]);
});

test('alignmentError: share of target rows whose largest weight misses the aligned key', () => {
  // Reverse of a 3-token source: K = 4 keys (3 tokens + EOS), Q = 4 rows (BOS + 3 tokens); rows 0–2 count.
  const align = taskAlignment('reverse', [4, 5, 6]); // [2, 1, 0]
  const exact = [onKey(2, 4), onKey(1, 4), onKey(0, 4), onKey(3, 4)];
  const oneOff = [onKey(2, 4), onKey(2, 4), onKey(0, 4), onKey(0, 4)]; // row 1 misses; row 3 (EOS) is not counted
  const copying = [onKey(0, 4), onKey(1, 4), onKey(2, 4), onKey(3, 4)]; // the diagonal: rows 0 and 2 miss
  const e = alignmentError([{ maps: [cross([exact, oneOff, copying])], align }]);
  assert.deepEqual(e, [0, 1 / 3, 2 / 3]);
  // Over two pairs the rows pool: a 1-token pair whose one row hits adds 1 row and 0 misses.
  const e2 = alignmentError([
    { maps: [cross([exact, oneOff, copying])], align },
    {
      maps: [
        cross([
          [onKey(0, 2), onKey(1, 2)],
          [onKey(0, 2), onKey(1, 2)],
          [onKey(1, 2), onKey(1, 2)],
        ]),
      ],
      align: [0],
    },
  ]);
  assert.deepEqual(e2, [0, 1 / 4, 3 / 4]);
});

test('telemetryRow writes align_err for cross heads only, and headRoles labels `aligned (task)` at ≤ 10%', () => {
  const self = (kind: 'encoder_self' | 'decoder_self', n: number): AttentionMaps => ({
    kind,
    shape: [1, 1, n, n],
    weights: new Float32Array(n * n).fill(1 / n),
  });
  // Sort of 10 tokens, two heads: one misses 1 row of 10 (10%: aligned), one misses 2 (20%: not).
  const src = [9, 4, 8, 4, 7, 5, 6, 5, 10, 4];
  const align = taskAlignment('sort', src); // [1, 3, 9, 5, 7, 6, 4, 2, 0, 8]
  const K = 11;
  const good = [...align.map((k, q) => onKey(q === 0 ? 0 : k, K)), onKey(10, K)];
  const poor = [...align.map((k, q) => onKey(q < 2 ? 10 : k, K)), onKey(10, K)];
  const maps = [self('encoder_self', K), self('decoder_self', 11), cross([good, poor])];
  const row = telemetryRow(100, [{ maps, align }]);
  assert.deepEqual(row.heads, ['encoder_self:0.0', 'decoder_self:0.0', 'cross:0.0', 'cross:0.1']);
  assert.deepEqual(row.stats.align_err, [null, null, 0.1, 0.2]);
  const roles = headRoles(row);
  assert.ok(roles[2]!.includes('aligned (task)'), `cross:0.0 roles ${roles[2]}`);
  assert.ok(!roles[3]!.includes('aligned (task)'), `cross:0.1 roles ${roles[3]}`);
  // Without the task's alignment (a corpus run) the row has no align_err at all.
  assert.equal(telemetryRow(100, [{ maps }]).stats.align_err, undefined);
});
