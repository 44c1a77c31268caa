/** Role swimlanes and a drop's heads (webview/lib/roleLanes.ts) on hand-built telemetry rows. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TelemetryRow } from '../../src/protocol/telemetry';
import { headRoles, positionalOffset } from '../../src/protocol/roles';
import { explainDrop, laneRole, roleLanes } from '../../webview/lib/roleLanes';

const HEADS = ['cross:0.0', 'cross:0.1', 'cross:0.2'];
/** A row of the three heads from each statistic's three values. */
const row = (step: number, stats: Record<string, number[]>): TelemetryRow => ({ step, pairs: 4, heads: HEADS, stats });

test('laneRole: the first role of the lane order a head has', () => {
  assert.equal(laneRole(['sink', 'mirrored']), 'mirrored');
  assert.equal(laneRole(['diffuse', 'aligned (task)', 'dead']), 'dead');
  assert.equal(laneRole([]), null);
});

test('roleLanes: one lane per head, rows of one role merged, each row reaching to the next', () => {
  // cross:0.0 diffuse (entropy_norm ≥ 0.9), then aligned (task) (align_err ≤ 0.1) from step 40;
  // cross:0.1 a sink throughout; cross:0.2 no role. Rows out of order on purpose.
  const rows = [
    row(40, { entropy_norm: [0.2, 0.5, 0.5], align_err: [0.05, 0.6, 0.6], sink_eos: [0, 0.8, 0] }),
    row(0, { entropy_norm: [0.95, 0.5, 0.5], align_err: [0.9, 0.6, 0.6], sink_eos: [0, 0.8, 0] }),
    row(20, { entropy_norm: [0.92, 0.5, 0.5], align_err: [0.7, 0.6, 0.6], sink_eos: [0, 0.7, 0] }),
    row(60, { entropy_norm: [0.2, 0.5, 0.5], align_err: [0.02, 0.6, 0.6], sink_eos: [0, 0.9, 0] }),
  ];
  assert.deepEqual(roleLanes(rows), [
    {
      head: 'cross:0.0',
      segments: [
        { from: 0, to: 40, role: 'diffuse' },
        { from: 40, to: 60, role: 'aligned (task)' },
      ],
    },
    { head: 'cross:0.1', segments: [{ from: 0, to: 60, role: 'sink' }] },
    { head: 'cross:0.2', segments: [{ from: 0, to: 60, role: null }] },
  ]);
});

test('explainDrop: rows widened by half the drop each side; role changes first, then the largest move', () => {
  // A drop from step 40 to 50: margin 5, so the rows compared are 20 (≤ 35) and 60 (≥ 55); row 40 is skipped.
  const rows = [
    row(0, { entropy_norm: [0.95, 0.5, 0.5], align_err: [0.9, 0.9, 0.9], confidence: [0.3, 0.1, 0.5] }),
    row(20, { entropy_norm: [0.95, 0.5, 0.5], align_err: [0.8, 0.9, 0.9], confidence: [0.3, 0.1, 0.5] }),
    row(40, { entropy_norm: [0.1, 0.1, 0.1], align_err: [0.5, 0.1, 0.1], confidence: [0.9, 0.9, 0.9] }),
    row(60, { entropy_norm: [0.3, 0.45, 0.48], align_err: [0.05, 0.85, 0.87], confidence: [0.8, 0.95, 0.55] }),
  ];
  const drop = { kind: 'drop' as const, from: 40, to: 50, lossFrom: 2, lossTo: 0.5, at: 45 };
  // cross:0.0: diffuse → aligned (task); align_err moved 0.75, more than entropy_norm's 0.65 or confidence's 0.5.
  // cross:0.1: no role change; confidence moved 0.85, more than anything of cross:0.0, yet it comes second.
  // cross:0.2: at most 0.05 moved, below 0.1: left out.
  assert.deepEqual(explainDrop(rows, drop), {
    before: 20,
    after: 60,
    heads: [
      { head: 'cross:0.0', before: ['diffuse'], after: ['aligned (task)'], stat: 'align_err', from: 0.8, to: 0.05 },
      { head: 'cross:0.1', before: [], after: [], stat: 'confidence', from: 0.1, to: 0.95 },
    ],
  });
  assert.equal(explainDrop(rows, drop, 1)!.heads.length, 1);
  assert.equal(explainDrop([rows[0]!], drop), undefined, 'one row: nothing to compare');
});

test('positional ±k: headRoles names the offset at ≥ 90%, once; the lane puts it after ±1', () => {
  const heads = ['encoder_self:0.0', 'encoder_self:0.1', 'decoder_self:0.0', 'decoder_self:0.1'];
  const roles = headRoles({
    heads,
    stats: {
      top_prev: [0.1, 0.95, 0, 0],
      top_offset: [-2, -1, 3, -3],
      top_offset_share: [0.9, 0.95, 0.92, 0.89],
    },
  });
  assert.deepEqual(roles, [['positional -2'], ['positional -1'], ['positional +3'], []]);
  assert.equal(positionalOffset('positional -2'), -2);
  assert.equal(positionalOffset('positional +11'), 11);
  assert.equal(positionalOffset('sink'), undefined);
  assert.equal(laneRole(['sink', 'positional -3']), 'positional -3');
  assert.equal(laneRole(['positional +2', 'positional +1']), 'positional +1');
  assert.equal(laneRole(['positional +2', 'positional -2', 'diffuse']), 'positional -2');
  assert.equal(laneRole(['positional +2', 'aligned']), 'aligned');
});
