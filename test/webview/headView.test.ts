/** The head view's pure part: which lines it draws from a known map, where, in which colour, and the head switches. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  headColor,
  headSlots,
  headsShown,
  headViewLayout,
  headViewLines,
  rowCenter,
  soloHead,
  toggleHead,
} from '../../webview/lib/headView';

// 2 layers × 2 heads, 2 queries × 3 keys. Layer 1, head 1: [[.7, .3, 0], [0, 0, 1]];
// head 2: [[.001, .499, .5], [.25, .25, .5]]. Layer 0 is all 9s, so reading the wrong layer shows.
const L1H1 = [0.7, 0.3, 0, 0, 0, 1];
const L1H2 = [0.001, 0.499, 0.5, 0.25, 0.25, 0.5];
const weights = new Float32Array([...new Array(12).fill(9), ...L1H1, ...L1H2]);
const shape = [2, 2, 2, 3];
const f = Math.fround;

test('the lines of a layer: one per shown head and pair at least the faintest weight, with its weight', () => {
  const { lines, total } = headViewLines(weights, shape, 1, [true, true]);
  // 0 and .001 are under 1/512 = .00195: head 1 keeps 3 lines, head 2 keeps 5.
  assert.deepEqual(lines, [
    { head: 0, q: 0, k: 0, w: f(0.7) },
    { head: 0, q: 0, k: 1, w: f(0.3) },
    { head: 0, q: 1, k: 2, w: 1 },
    { head: 1, q: 0, k: 1, w: f(0.499) },
    { head: 1, q: 0, k: 2, w: 0.5 },
    { head: 1, q: 1, k: 0, w: 0.25 },
    { head: 1, q: 1, k: 1, w: 0.25 },
    { head: 1, q: 1, k: 2, w: 0.5 },
  ]);
  assert.equal(total, 8);
  // Head 1 off: only head 2's five lines.
  const off = headViewLines(weights, shape, 1, [false, true]);
  assert.deepEqual(
    off.lines.map((l) => l.head),
    [1, 1, 1, 1, 1],
  );
  // With no threshold every pair is a line, zeros included: 2 heads × 2 × 3.
  assert.equal(headViewLines(weights, shape, 1, [true, true], { minWeight: 0 }).total, 12);
  assert.throws(() => headViewLines(weights, shape, 2, [true, true]), /layer 2 is not one of the 2 layers/);
});

test('past the line budget only the strongest lines are kept, in head, query, key order', () => {
  const { lines, total } = headViewLines(weights, shape, 1, [true, true], { maxLines: 3 });
  assert.equal(total, 8);
  // The three largest: 1 (head 1, q 1, k 2), .7 (head 1, q 0, k 0), then the first .5 (head 2, q 0, k 2).
  assert.deepEqual(
    lines.map((l) => [l.head, l.q, l.k]),
    [
      [0, 0, 0],
      [0, 1, 2],
      [1, 0, 2],
    ],
  );
});

test('layout: two text columns with the lines between, one row per token', () => {
  const l = headViewLayout(2, 5, { column: 100, gap: 150, rowHeight: 20, pad: 6, top: 4 });
  assert.deepEqual(l, {
    width: 350,
    height: 108,
    leftTextX: 94,
    lineX1: 100,
    lineX2: 250,
    rightTextX: 256,
    rowHeight: 20,
    top: 4,
  });
  assert.equal(rowCenter(l, 0), 14);
  assert.equal(rowCenter(l, 4), 94);
});

test('head colours: the six chart colours of the theme, then their mixes, all different to the 18th', () => {
  assert.equal(headColor(0), 'var(--vscode-charts-blue, #3794ff)');
  assert.equal(headColor(3), 'var(--vscode-charts-red, #f14c4c)');
  // Head 7 mixes blue with green (teal), not with orange, its opposite (grey).
  assert.match(headColor(6), /^color-mix\(in srgb, var\(--vscode-charts-blue.*50%, var\(--vscode-charts-green/);
  assert.match(headColor(12), /^color-mix\(in srgb, var\(--vscode-charts-blue.*var\(--vscode-editor-foreground/);
  const eighteen = Array.from({ length: 18 }, (_, i) => headColor(i));
  assert.equal(new Set(eighteen).size, 18);
  assert.equal(headColor(18), headColor(0));
});

test('head switches: a click toggles one head, a double click shows it alone or every head again', () => {
  assert.deepEqual(headsShown(3), [true, true, true]);
  assert.deepEqual(headsShown(3, [true, false, true]), [true, false, true]);
  assert.deepEqual(headsShown(2, [true, false, true]), [true, true], 'another head count starts over');
  assert.deepEqual(toggleHead([true, true, true], 1), [true, false, true]);
  assert.deepEqual(toggleHead([true, false, true], 1), [true, true, true]);
  assert.deepEqual(soloHead([true, true, true], 2), [false, false, true]);
  assert.deepEqual(soloHead([false, false, true], 2), [true, true, true]);
  assert.deepEqual(soloHead([false, true, true], 0), [true, false, false]);
  // The slots a hovered token's box is split into: one per head shown, in head order.
  assert.deepEqual(headSlots([true, false, true, true]), [0, -1, 1, 2]);
});
