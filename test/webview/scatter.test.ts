// The canvas scatter's pure parts (webview/lib/scatter.ts) against values worked by hand, and the
// hit grid against a plain scan of every point (written here) on seeded random points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hitGrid, linearScale, nearest, niceTicks, paddedExtent, tickLabel } from '../../webview/lib/scatter';

test('linearScale maps a domain onto a range, flipped or not, and back', () => {
  const s = linearScale([0, 10], [100, 200]);
  assert.equal(s(5), 150);
  assert.equal(s(-2), 80);
  assert.equal(s.invert(150), 5);
  // y: data up, pixels down
  const y = linearScale([-0.15, 3.15], [700, 30]);
  assert.ok(Math.abs(y(0) - (700 - (0.15 / 3.3) * 670)) < 1e-9, `${y(0)}`);
  assert.ok(Math.abs(y(3.15) - 30) < 1e-9);
  // a zero-width domain: the middle of the range
  assert.equal(linearScale([2, 2], [0, 100])(2), 50);
});

test('niceTicks steps by 1, 2 or 5 × 10^k, inside the range, rounded', () => {
  // (5.25 + 0.25) / 12 = 0.458: 0.1 and 0.2 are under it, 0.5 the first over
  assert.deepEqual(niceTicks(-0.25, 5.25, 12), [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5]);
  // 0.6 / 3 = 0.2: step 0.2 from 0.2; 3 × 0.2 in floating point is 0.6000000000000001
  assert.deepEqual(niceTicks(0.1, 0.7, 3), [0.2, 0.4, 0.6]);
  // 900 / 4 = 225: step 500; -1000 and -500 lie in [-1200, -300]
  assert.deepEqual(niceTicks(-1200, -300, 4), [-1000, -500]);
  // 149 / 6 = 24.8: step 50
  assert.deepEqual(niceTicks(-37, 112, 6), [0, 50, 100]);
  assert.deepEqual(niceTicks(5, 0, 5), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(niceTicks(3, 3), [3]);
  assert.deepEqual(niceTicks(0, Number.NaN), []);
});

test('tickLabel writes the decimals the step needs and a minus sign', () => {
  assert.equal(tickLabel(-0.5, [-1, -0.5, 0]), '−0.5');
  assert.equal(tickLabel(1, [0, 0.5, 1]), '1.0');
  assert.equal(tickLabel(100, [0, 50, 100]), '100');
  assert.equal(tickLabel(0.04, [0.02, 0.04]), '0.04');
  assert.equal(tickLabel(-0, [-1, 0, 1]), '0');
});

test('paddedExtent widens the range by 5% of it each side', () => {
  assert.deepEqual(paddedExtent([0, 5, 3]), [-0.25, 5.25]);
  assert.deepEqual(paddedExtent([-1, 3]), [-1.2, 3.2]);
  assert.deepEqual(paddedExtent([2, 2]), [1.5, 2.5]);
  assert.deepEqual(paddedExtent([]), [0, 1]);
});

test('hitGrid files each point in its cell; nearest looks in the 3 × 3 cells round the pointer', () => {
  // a 24 × 24 box of 8 px cells (3 × 3): points in cells (0,0), (1,0), (2,2); one outside
  const g = hitGrid([3, 9, 20, -1], [3, 3, 17, 5], [10, 11, 12, 13], 24, 24, 8);
  assert.equal(g.cols, 3);
  assert.equal(g.rows, 3);
  assert.deepEqual([...g.start], [0, 1, 2, 2, 2, 2, 2, 2, 2, 3]);
  assert.deepEqual([...g.order], [0, 1, 2]);
  assert.equal(nearest(g, 5, 3, 8), 10); // 2 px from the first, 4 from the second
  assert.equal(nearest(g, 6, 3, 8), 11); // 3 px from both: the one drawn last
  assert.equal(nearest(g, 15, 15, 8), 12); // √(25 + 4) from it, in the diagonal cell
  assert.equal(nearest(g, 20, 9, 8), 12); // exactly 8 px
  assert.equal(nearest(g, 20, 8, 8), -1); // 9 px
  assert.equal(nearest(g, 0, 5, 8), 10); // the point outside the box is not there: √(9 + 4) to the first
  assert.equal(nearest(g, -30, -30, 8), -1);
  // the cell left of and above the pointer's: a point at (6, 6), the pointer 7 px right of or below it
  const one = hitGrid([6], [6], [7], 24, 24, 8);
  assert.equal(nearest(one, 13, 6, 8), 7);
  assert.equal(nearest(one, 6, 13, 8), 7);
  assert.equal(nearest(one, 13, 13, 8), -1); // √98 > 8
});

test('nearest agrees with a scan of every point on 3,000 seeded points', () => {
  let s = 11;
  const rand = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const n = 3000;
  const x = Array.from({ length: n }, () => rand() * 400);
  const y = Array.from({ length: n }, () => rand() * 300);
  const ids = Array.from({ length: n }, (_, i) => 5 * i);
  const g = hitGrid(x, y, ids, 400, 300, 8);
  let hits = 0;
  for (let k = 0; k < 2000; k++) {
    const px = rand() * 400;
    const py = rand() * 300;
    let best = -1;
    let bestD = Infinity;
    for (let j = 0; j < n; j++) {
      const d = Math.hypot(Math.fround(x[j]!) - px, Math.fround(y[j]!) - py);
      if (d <= 8 && d <= bestD) [best, bestD] = [j, d];
    }
    const want = best < 0 ? -1 : ids[best];
    assert.equal(nearest(g, px, py, 8), want, `pointer (${px}, ${py})`);
    if (want >= 0) hits++;
  }
  assert.ok(hits > 500, `${hits} pointers near a point`); // the comparison is not all misses
});
