/** The beam tree's layout and paths, worked by hand on a small tree. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layoutTree, pathOf } from '../../webview/lib/beamLayout';

//  0 BOS ─┬─ 1 a ─┬─ 3 a ── 6 EOS
//         │       ├─ 4 EOS
//         │       └─ 5 b
//         └─ 2 b ──── 7 b
const nodes = [
  { id: 0, parent: -1, depth: 0, token: 0 },
  { id: 1, parent: 0, depth: 1, token: 10 },
  { id: 2, parent: 0, depth: 1, token: 11 },
  { id: 3, parent: 1, depth: 2, token: 10 },
  { id: 4, parent: 1, depth: 2, token: 1 },
  { id: 5, parent: 1, depth: 2, token: 11 },
  { id: 6, parent: 3, depth: 3, token: 1 },
  { id: 7, parent: 2, depth: 2, token: 11 },
];

test('leaves take rows in depth-first order; a parent sits midway between its first and last child', () => {
  const l = layoutTree(nodes);
  // Leaves in DFS order: 6 (row 0), 4 (1), 5 (2), 7 (3). 3 → 0; 1 → (0 + 2)/2 = 1; 2 → 3; 0 → (1 + 3)/2 = 2.
  assert.deepEqual(l.row, [2, 1, 3, 0, 1, 2, 0, 3]);
  assert.deepEqual(l.col, [0, 1, 1, 2, 2, 2, 3, 2]);
  assert.equal(l.rows, 4);
  assert.equal(l.cols, 4);
});

test('a token path is followed from the root as far as the tree holds it', () => {
  assert.deepEqual(pathOf(nodes, [10, 10, 1]), [1, 3, 6]);
  assert.deepEqual(pathOf(nodes, [11, 11, 1]), [2, 7], 'stops where the tree ends');
  assert.deepEqual(pathOf(nodes, [12]), []);
});

test('a deep chain does not overflow the stack', () => {
  const chain = Array.from({ length: 20_000 }, (_, i) => ({ id: i, parent: i - 1, depth: i }));
  const l = layoutTree(chain);
  assert.equal(l.rows, 1);
  assert.ok(l.row.every((r) => r === 0));
});
