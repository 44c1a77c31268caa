import { test } from 'node:test';
import assert from 'node:assert/strict';
// The engine's schedule, imported only in tests (the webview never imports the engine).
import { plannedLrCurve, transformerLr } from '../../src/engine/train/schedule';
import { assembleLr } from '../../webview/lib/lr';
import type { MetricRow } from '../../src/protocol/metrics';

const close = (a: number, b: number, rel = 1e-5) => assert.ok(Math.abs(a - b) <= rel * Math.abs(b), `${a} ≉ ${b}`);
// eq. 3 by hand, d_model 512, warmup 4000 (see test/train/schedule.test.ts):
//   step 1: 1.74693e-7 · step 2000: 3.493855e-4 · step 4000: 6.98771e-4 (peak) · step 16000: 3.49386e-4
const HAND: [number, number][] = [
  [1, 1.74693e-7],
  [2000, 3.493855e-4],
  [4000, 6.98771e-4],
  [16000, 3.49386e-4],
];

test('the planned curve drawn equals d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) at hand-worked steps', () => {
  const points = plannedLrCurve(20000, { dModel: 512 }, 201);
  // make sure the hand-worked steps are in the plan
  for (const [s] of HAND)
    if (!points.some((p) => p.step === s)) points.push({ step: s, lr: transformerLr(s, { dModel: 512 }) });
  const t = assembleLr(points, []);
  for (const [s, lr] of HAND) {
    const i = t.planned.x.indexOf(s);
    assert.ok(i >= 0, `step ${s} missing from the planned trace`);
    close(t.planned.y[i], lr);
  }
  assert.deepEqual(t.peak?.step, 4000);
  close(t.peak!.lr, 6.98771e-4);
  assert.deepEqual(t.xRange, [1, 20000], 'the x axis spans the whole run, ahead of training');
  for (let i = 1; i < t.planned.x.length; i++) assert.ok(t.planned.x[i] > t.planned.x[i - 1], 'sorted, no duplicates');
});

test('actual points ride on the plan and are downsampled; unsorted or duplicated plans are cleaned', () => {
  const rows: MetricRow[] = Array.from({ length: 5000 }, (_, i) => ({
    step: i + 1,
    loss: 1,
    lr: transformerLr(i + 1, { dModel: 512 }),
    tokensPerSec: 1,
    gradNorm: 1,
  }));
  const t = assembleLr(
    [
      { step: 100, lr: 2 },
      { step: 1, lr: 1 },
      { step: 100, lr: 2 },
    ],
    rows,
    500,
  );
  assert.deepEqual(t.planned, { x: [1, 100], y: [1, 2] });
  assert.ok(t.actual.x.length <= 500);
  assert.equal(t.actual.x[t.actual.x.length - 1], 5000);
  assert.ok(t.actual.x.includes(4000), 'the peak of the actual lr is kept by min/max downsampling');
  assert.deepEqual(t.xRange, [1, 5000]);
});

test('no plan yet: no peak, the range follows the logged steps', () => {
  const t = assembleLr([], []);
  assert.equal(t.peak, undefined);
  assert.equal(t.xRange, undefined);
});
