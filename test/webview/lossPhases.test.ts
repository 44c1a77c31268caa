/** Loss drops and plateaus (webview/lib/lossPhases.ts) on synthetic curves, against values worked out by hand. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lossPhases, smoothLoss } from '../../webview/lib/lossPhases';

const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} ≉ ${b}`);

test('smoothLoss: the mean of rows i − h … i + h, clamped at the ends', () => {
  assert.deepEqual(smoothLoss([3, 0, 3, 6], 1), [1.5, 2, 3, 4.5]);
});

test('a flat curve, a linear fall over steps 40–50, then flat again: plateau, drop, plateau', () => {
  // loss 2 up to step 40, 2 − 0.2·(step − 40) to step 50, then 0; h = 1.
  const points = Array.from({ length: 100 }, (_, step) => ({
    step,
    loss: step <= 40 ? 2 : step <= 50 ? 2 - 0.2 * (step - 40) : 0,
  }));
  // By hand: s ranges 2 … 0 over 99 steps, R = 2/99, a drop falls ≥ 4/99 ≈ 0.040 a step, flat is ≤ 0.004.
  // s_39 = 2, s_40 = 5.8/3, s_41 = 1.8: the fall at 39 is (s_38 − s_40)/2 = 1/30 (neither), at 40 (2 − 1.8)/2 = 0.1.
  // Symmetrically the fall is 0.1 at row 50 and 1/30 at row 51; from row 52 on it is 0.
  const phases = lossPhases(points, { halfWindow: 1 });
  assert.deepEqual(
    phases.map((p) => [p.kind, p.from, p.to]),
    [
      ['plateau', 0, 38],
      ['drop', 40, 50],
      ['plateau', 52, 99],
    ],
  );
  const drop = phases[1]!;
  near(drop.lossFrom, 5.8 / 3, 'smoothed loss at the drop start');
  near(drop.lossTo, 0.2 / 3, 'smoothed loss at the drop end');
  // The steepest fall, 0.2 a step, holds on rows 42–48 (the two neighbours s_{i±1} both inside the ramp).
  assert.ok(drop.at >= 42 && drop.at <= 48, `steepest at ${drop.at}`);
  assert.equal(phases[0]!.at, 19);
  assert.equal(phases[2]!.at, 75);
});

test('a one-step spike on a flat curve is no drop: its recovery reaches no new low', () => {
  // loss 1, 1.3 at step 20; default h = ⌊100/50⌋ = 2: s = 1.06 on rows 18–22, 1 elsewhere.
  // Rows 21–24 fall 0.06/4 a step (≥ 2R, R = 0.06/99) but end at 1, not below the earlier 1: no drop.
  // Rows 16–19 rise (neither); row 20 is flat alone (too short); plateaus are 0–15 and 25–99.
  const points = Array.from({ length: 100 }, (_, step) => ({ step, loss: step === 20 ? 1.3 : 1 }));
  assert.deepEqual(
    lossPhases(points).map((p) => [p.kind, p.from, p.to]),
    [
      ['plateau', 0, 15],
      ['plateau', 25, 99],
    ],
  );
});

test('too few points, a constant curve and non-finite losses give no phases', () => {
  assert.deepEqual(lossPhases([1, 2, 3, 4].map((step) => ({ step, loss: 5 - step }))), []);
  assert.deepEqual(lossPhases([1, 2, 3, 4, 5, 6].map((step) => ({ step, loss: 1 }))), []);
  assert.deepEqual(lossPhases([1, 2, 3, 4].map((step) => ({ step, loss: step === 2 ? NaN : 1 }))), []);
});
