import { test } from 'node:test';
import assert from 'node:assert/strict';
// The engine's schedule, imported only in tests (the webview never imports the engine).
import { plannedLrCurve } from '../../src/engine/train/schedule';
import { assembleLr, peakMarks, xSpan } from '../../webview/lib/lr';
import type { MetricRow } from '../../src/protocol/metrics';

const close = (a: number, b: number, rel = 1e-5) => assert.ok(Math.abs(a - b) <= rel * Math.abs(b), `${a} ≉ ${b}`);
// eq. 3 by hand, d_model 512, warmup 4000 (see test/train/schedule.test.ts):
//   512^-0.5 = 0.0441941738, 4000^-1.5 = 3.95284708e-6
//   step 1: 0.0441941738 · 3.95284708e-6 = 1.74693e-7 · step 4000: (512 · 4000)^-0.5 = 6.98771e-4 (the peak)
//   step 20000: (512 · 20000)^-0.5 = 10240000^-0.5 = 1/3200 = 3.125e-4
// plannedLrCurve(20000, …, 201) samples 200 steps evenly plus the peak: steps 1, 4000 and 20000 are
// among them by its contract (ends and peak); no value below is taken from the engine.
const HAND: [number, number][] = [
  [1, 1.74693e-7],
  [4000, 6.98771e-4],
  [20000, 3.125e-4],
];
// d_model 16, warmup 4, 8 steps (the plan gives every step of a run this short):
//   16^-0.5 = 0.25, 4^-1.5 = 1/8: steps 1–4 rise by 0.25 · s/8 = 0.03125 · s to the peak 0.125 at step 4;
//   then 0.25 · s^-0.5: step 5 0.25/2.2360680 = 0.1118034, 6: 0.1020621, 7: 0.0944911, 8: 0.25/2.8284271 = 0.0883883
const SHORT = [0.03125, 0.0625, 0.09375, 0.125, 0.1118034, 0.1020621, 0.0944911, 0.0883883];

test('the planned curve drawn equals d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) at hand-worked steps', () => {
  const t = assembleLr(plannedLrCurve(20000, { dModel: 512 }, 201), []);
  for (const [s, lr] of HAND) {
    const i = t.planned.x.indexOf(s);
    assert.ok(i >= 0, `step ${s} missing from the planned trace`);
    close(t.planned.y[i], lr);
  }
  assert.deepEqual(t.peak?.step, 4000);
  close(t.peak!.lr, 6.98771e-4);
  assert.deepEqual(t.xRange, [1, 20000], 'the x axis spans the whole run, ahead of training');
  for (let i = 1; i < t.planned.x.length; i++) assert.ok(t.planned.x[i] > t.planned.x[i - 1], 'sorted, no duplicates');

  const short = assembleLr(plannedLrCurve(8, { dModel: 16, warmupSteps: 4 }), []);
  assert.deepEqual(short.planned.x, [1, 2, 3, 4, 5, 6, 7, 8], 'every step of a short run');
  short.planned.y.forEach((y, i) => close(y, SHORT[i]!, 1e-6));
  assert.deepEqual(short.peak?.step, 4);
  close(short.peak!.lr, 0.125);
});

test('actual points ride on the plan and are downsampled; unsorted or duplicated plans are cleaned', () => {
  // The logged rate of a run: eq. 3 written out here (d_model 512, warmup 4000), peaking at step 4000.
  const eq3 = (s: number) => 512 ** -0.5 * Math.min(s ** -0.5, s * 4000 ** -1.5);
  const rows: MetricRow[] = Array.from({ length: 5000 }, (_, i) => ({
    step: i + 1,
    loss: 1,
    lr: eq3(i + 1),
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
  const peak = t.actual.x.indexOf(4000);
  assert.ok(peak >= 0, 'the peak of the actual lr is kept by min/max downsampling');
  close(t.actual.y[peak]!, 6.98771e-4);
  assert.deepEqual(t.xRange, [1, 5000]);
});

test('no plan yet: no peak, the range follows the logged steps', () => {
  const t = assembleLr([], []);
  assert.equal(t.peak, undefined);
  assert.equal(t.xRange, undefined);
});

test('the warmup note sits right of its line, unless the line is in the right half of the span the axis shows', () => {
  const t = { grid: '#444', muted: '#999' };
  const side = (m: { annotations: object[] }) => (m.annotations[0] as { xanchor: string }).xanchor;
  const peak = { step: 4000, lr: 7e-4 };
  assert.equal(side(peakMarks(peak, [1, 20000], t)), 'left', 'warmup 4,000 of 20,000 steps: room on the right');
  assert.equal(side(peakMarks(peak, [1, 4000], t)), 'right', 'warmup as long as the run: the line is the right edge');
  // Another run of 20,000 steps overlaid: the axis spans it too (autorange), so there is room on the right.
  const span = xSpan([{ x: [1, 2000, 4000] }, { x: [1, 10000, 20000] }, { x: [] }]);
  assert.deepEqual(span, [1, 20000]);
  assert.equal(side(peakMarks(peak, span, t)), 'left');
  assert.equal(xSpan([{ x: [] }]), undefined);
  // No plan: no line, no note.
  assert.deepEqual(peakMarks(undefined, [1, 10], t), { shapes: [], annotations: [] });
  const shape = peakMarks(peak, [1, 20000], t).shapes[0] as { x0: number; x1: number };
  assert.deepEqual([shape.x0, shape.x1], [4000, 4000]);
});
