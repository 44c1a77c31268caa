import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transformerLr, peakLr, plannedLrCurve } from '../../src/engine/train/schedule';

// Hand-worked values for d_model = 512, warmup_steps = 4000:
//   512^-0.5 = 1/22.627417 = 0.0441941738
//   4000^-1.5 = 1/(4000 · 63.2455532) = 1/252982.2128 = 3.95284708e-6
//   step 1:     min(1, 3.95284708e-6) = 3.95284708e-6 → 0.0441941738 · 3.95284708e-6 = 1.74693e-7
//   step 4000:  4000^-0.5 = 0.0158113883 (both arms equal) → 6.98771e-4 (the peak)
//   step 16000: 16000^-0.5 = 0.00790569415 → 3.49386e-4 (half the peak: 4× the steps, ½ the rate)
const base = { dModel: 512 };
const close = (a: number, b: number, rel = 1e-5) => assert.ok(Math.abs(a - b) <= rel * Math.abs(b), `${a} ≉ ${b}`);

test('eq. 3 at step 1, the peak and 4× the peak step', () => {
  close(transformerLr(1, base), 1.74693e-7);
  close(transformerLr(4000, base), 6.98771e-4);
  close(transformerLr(16000, base), 3.49386e-4);
  close(peakLr(base), 6.98771e-4);
});

test('warmup is linear and factor scales the curve', () => {
  close(transformerLr(2000, base), 6.98771e-4 / 2);
  close(transformerLr(4000, { dModel: 512, factor: 2 }), 2 * 6.98771e-4);
  // d_model 256, warmup 100: peak = (256·100)^-0.5 = 1/160 = 0.00625
  close(transformerLr(100, { dModel: 256, warmupSteps: 100 }), 0.00625);
});

test('rejects steps before 1', () => {
  assert.throws(() => transformerLr(0, base), RangeError);
});

test('planned curve: at most N points, ends included, peak included', () => {
  const curve = plannedLrCurve(100000, base, 50);
  assert.ok(curve.length <= 50);
  assert.equal(curve[0]!.step, 1);
  assert.equal(curve[curve.length - 1]!.step, 100000);
  const peak = curve.find((p) => p.step === 4000);
  assert.ok(peak);
  close(peak.lr, 6.98771e-4);
  for (let i = 1; i < curve.length; i++) assert.ok(curve[i]!.step > curve[i - 1]!.step);
  const short = plannedLrCurve(10, base, 50);
  assert.deepEqual(
    short.map((p) => p.step),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
});
