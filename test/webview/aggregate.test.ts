/**
 * Attention across heads: means worked by hand, rollout on a hand-worked 3-token example, and flow
 * against the sum over disjoint paths (two layers, by hand) and against a max-flow the test
 * computes itself on a three-layer graph (Ford–Fulkerson with depth-first paths over a dense
 * capacity matrix, unlike the code's breadth-first layered search).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attentionFlow, attentionRollout, meanOverHeads, meanOverLayers } from '../../webview/lib/aggregate';

const close = (a: ArrayLike<number>, b: number[], tol = 1e-6) =>
  b.forEach((v, i) => assert.ok(Math.abs(a[i]! - v) <= tol, `[${i}] ${a[i]} vs ${v}`));

// Two layers, one head, three tokens.
const A1 = [1, 0, 0, 0.5, 0.5, 0, 0, 0, 1];
const A2 = [0, 1, 0, 0, 1, 0, 1 / 3, 1 / 3, 1 / 3];
const TWO = { maps: [...A1, ...A2], shape: [2, 1, 3, 3] };

test('the mean of a layer’s heads, and of every layer and head', () => {
  // One layer, two heads over 2 × 2: ([1, 0, 0, 1] + [0, 1, 1, 0]) / 2.
  close(meanOverHeads([1, 0, 0, 1, 0, 1, 1, 0], [1, 2, 2, 2], 0), [0.5, 0.5, 0.5, 0.5]);
  close(meanOverLayers(TWO.maps, TWO.shape), [0.5, 0.5, 0, 0.25, 0.75, 0, 1 / 6, 1 / 6, 2 / 3]);
});

test('rollout = (½A₂ + ½I)(½A₁ + ½I), worked by hand', () => {
  // Ã₁ = [[1, 0, 0], [.25, .75, 0], [0, 0, 1]], Ã₂ = [[.5, .5, 0], [0, 1, 0], [1/6, 1/6, 2/3]].
  // Ã₂Ã₁ row 0 = .5·[1, 0, 0] + .5·[.25, .75, 0]; row 2 = 1/6·[1, 0, 0] + 1/6·[.25, .75, 0] + 2/3·[0, 0, 1].
  close(attentionRollout(TWO.maps, TWO.shape), [0.625, 0.375, 0, 0.25, 0.75, 0, 5 / 24, 0.125, 2 / 3]);
});

test('flow through two layers is the sum over middle tokens of min(Ã₁[m, j], Ã₂[i, m])', () => {
  const flow = attentionFlow(TWO.maps, TWO.shape)!;
  // i = 2, j = 0: min(1, 1/6) + min(.25, 1/6) + min(0, 2/3) = 1/3; i = 0, j = 1: min(0, .5) + min(.75, .5) = .5.
  close([flow[2 * 3 + 0]!, flow[0 * 3 + 1]!], [1 / 3, 0.5]);
});

/** Max-flow by depth-first augmenting paths on a dense capacity matrix (the test's own). */
function denseMaxFlow(cap: number[][], s: number, t: number): number {
  const r = cap.map((row) => [...row]);
  let total = 0;
  for (;;) {
    const seen = new Set<number>();
    const dfs = (u: number, f: number): number => {
      if (u === t) return f;
      seen.add(u);
      for (let v = 0; v < r.length; v++) {
        if (seen.has(v) || r[u]![v]! <= 1e-12) continue;
        const got = dfs(v, Math.min(f, r[u]![v]!));
        if (got > 0) {
          r[u]![v]! -= got;
          r[v]![u]! += got;
          return got;
        }
      }
      return 0;
    };
    const f = dfs(s, Infinity);
    if (f <= 0) return total;
    total += f;
  }
}

test('flow through three layers equals an independent max-flow on the same graph', () => {
  const n = 3;
  // Three layers of row-stochastic maps with overlapping paths.
  const layers = [
    [0.2, 0.5, 0.3, 0.6, 0.1, 0.3, 0.1, 0.1, 0.8],
    [0.7, 0.2, 0.1, 0.3, 0.3, 0.4, 0.5, 0.25, 0.25],
    [0.1, 0.8, 0.1, 0.4, 0.4, 0.2, 0.3, 0.3, 0.4],
  ];
  const flow = attentionFlow(layers.flat(), [3, 1, n, n])!;
  const nodes = 4 * n;
  const cap = Array.from({ length: nodes }, () => new Array<number>(nodes).fill(0));
  layers.forEach((a, l) => {
    for (let i = 0; i < n; i++)
      for (let m = 0; m < n; m++) cap[l * n + m]![(l + 1) * n + i] = 0.5 * a[i * n + m]! + (i === m ? 0.5 : 0);
  });
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const want = denseMaxFlow(cap, j, 3 * n + i);
      assert.ok(Math.abs(flow[i * n + j]! - want) < 1e-6, `flow ${j} → ${i}: ${flow[i * n + j]} vs ${want}`);
    }
});

test('no flow past 64 tokens (n² max-flows); rollout still', () => {
  const n = 65;
  const eye = Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0));
  assert.equal(attentionFlow(eye, [1, 1, n, n]), null);
  assert.equal(attentionRollout(eye, [1, 1, n, n])[0], 1);
});
