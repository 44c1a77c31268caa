import { test } from 'node:test';
import assert from 'node:assert/strict';
import { column, downsampleMinMax } from '../../webview/lib/downsample';

test('short series come back unchanged', () => {
  assert.deepEqual(downsampleMinMax([1, 2, 3], [5, 4, 6], 10), { x: [1, 2, 3], y: [5, 4, 6] });
});

test('a worked example: 10 points into 6 keeps first, last and each bucket’s min and max', () => {
  // maxPoints 6 → 2 buckets over the 8 interior points (indices 1–4 and 5–8).
  const x = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const y = [5, 3, 9, 1, 4, 6, 0, 7, 2, 8];
  // bucket 1 (i 1–4: 3 9 1 4): min 1 at i3, max 9 at i2 → i2, i3; bucket 2 (i 5–8: 6 0 7 2): min 0 at i6, max 7 at i7.
  assert.deepEqual(downsampleMinMax(x, y, 6), { x: [0, 2, 3, 6, 7, 9], y: [5, 9, 1, 0, 7, 8] });
});

test('long noisy series: at most N points, extrema kept, x increasing', () => {
  const n = 100_000;
  const x = Array.from({ length: n }, (_, i) => i + 1);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const y = x.map((s) => 5 * Math.exp(-s / 20000) + rand());
  y[31337] = 100; // a spike
  y[77777] = -50; // a dip
  for (const N of [1500, 100, 7]) {
    const d = downsampleMinMax(x, y, N);
    assert.ok(d.x.length <= N, `${d.x.length} > ${N}`);
    assert.equal(Math.max(...d.y), 100);
    assert.equal(Math.min(...d.y), -50);
    assert.equal(d.x[0], 1);
    assert.equal(d.x[d.x.length - 1], n);
    for (let i = 1; i < d.x.length; i++) assert.ok(d.x[i] > d.x[i - 1]);
    // every kept point is an original point
    for (let i = 0; i < d.x.length; i += 37) assert.equal(d.y[i], y[d.x[i] - 1]);
  }
  assert.ok(downsampleMinMax(x, y, 1500).x.length >= 1400, 'uses its budget');
});

test('column skips rows without the value', () => {
  const rows = [{ s: 1, v: 2 }, { s: 2 }, { s: 3, v: Number.NaN }, { s: 4, v: 0 }];
  assert.deepEqual(
    column(
      rows,
      (r) => r.s,
      (r) => r.v,
    ),
    { x: [1, 4], y: [2, 0] },
  );
});

test('rejects a budget below 4', () => {
  assert.throws(() => downsampleMinMax([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 3), RangeError);
});
