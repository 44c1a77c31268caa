import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headMap } from '../../src/protocol/attention';
import { poolMax, poolMaxScalar, rowEntropy, topK } from '../../webview/lib/attention';
import { poolsWithSimd } from '../../webview/lib/poolMaxSimd';

const near = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) <= eps, `${a} ≉ ${b}`);

test('entropy of a uniform row is ln n, of a one-hot row 0', () => {
  for (const n of [2, 4, 7, 512]) {
    const w = new Float32Array(n).fill(1 / n);
    near(rowEntropy(w, 1, n)[0], Math.log(n), 1e-6);
    const hot = new Float32Array(n);
    hot[n - 1] = 1;
    assert.equal(rowEntropy(hot, 1, n)[0], 0);
  }
});

test('entropy by hand, per row, rows renormalised', () => {
  // [.5 .25 .25 0]: −(.5 ln .5 + 2·.25 ln .25) = .5 ln 2 + ln 2 = 1.5 ln 2 = 1.0397208
  // [2 2 0 0] is [.5 .5 0 0] after normalising: ln 2 = 0.6931472
  const w = new Float32Array([0.5, 0.25, 0.25, 0, 2, 2, 0, 0]);
  const h = rowEntropy(w, 2, 4);
  near(h[0], 1.0397208, 1e-6);
  near(h[1], 0.6931472, 1e-6);
  assert.equal(rowEntropy(new Float32Array(4), 1, 4)[0], 0, 'an all-zero (masked) row');
});

test('top-k by hand: largest first, ties to the earlier key', () => {
  const w = [0.1, 0.4, 0.05, 0.4, 0.05, 0.0, /* row 1 */ 0.3, 0.2, 0.1, 0.15, 0.2, 0.05];
  assert.deepEqual(topK(w, 0, 6, 3), [
    { key: 1, weight: 0.4 },
    { key: 3, weight: 0.4 },
    { key: 0, weight: 0.1 },
  ]);
  assert.deepEqual(topK(w, 1, 6, 2), [
    { key: 0, weight: 0.3 },
    { key: 1, weight: 0.2 },
  ]);
  assert.equal(topK(w, 1, 6, 10).length, 6);
});

// poolMax runs poolMax.wat on WebAssembly SIMD where it compiles (here: Node), poolMaxScalar in
// JavaScript: the same hand-worked cells from both. 4 columns take the SIMD lanes only, 2 and 5 the
// scalar tail too.
for (const [name, pool] of [
  ['poolMax', poolMax],
  ['poolMaxScalar', poolMaxScalar],
] as const) {
  test(`max-pooling 4×4 → 2×2 by hand, and 2×2 → 4×4 as blocks (${name})`, () => {
    const m = [1, 2, 0, 0, 3, 4, 0, 9, 0, 0, 5, 0, 7, 0, 0, 6];
    assert.deepEqual(Array.from(pool(m, 4, 4, 2, 2)), [4, 9, 7, 6]);
    assert.deepEqual(Array.from(pool([1, 2, 3, 4], 2, 2, 4, 4)), [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
    // 3 × 5 → 2 × 2, blocks of unequal size: rows {0}, {1, 2}; columns {0, 1}, {2, 3, 4}
    const odd = [1, 9, 2, 3, 0, 4, 0, 5, 8, 1, 7, 6, 0, 2, 3];
    assert.deepEqual(Array.from(pool(odd, 3, 5, 2, 2)), [9, 3, 7, 8]);
    // 512 → 96: a single peak survives
    const big = new Float32Array(512 * 512);
    big[300 * 512 + 17] = 1;
    const p = pool(big, 512, 512, 96, 96);
    assert.equal(Math.max(...p), 1);
    assert.equal(p[Math.floor((300 * 96) / 512) * 96 + Math.floor((17 * 96) / 512)], 1);
    // NaN is never the maximum (the scalar loop's v > m, f32x4.pmax's a < b ? b : a)
    assert.deepEqual(Array.from(pool([NaN, 1, 2, NaN, 0, 0, 0, 0], 2, 4, 1, 1)), [2]);
  });
}

test('poolMax on WebAssembly equals poolMaxScalar bit for bit, on random maps of odd shapes', () => {
  assert.equal(poolsWithSimd(), true, 'Node compiles poolMax.wat: the SIMD path is the one tested');
  let seed = 7;
  const rand = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  for (const [rows, cols, outRows, outCols] of [
    [512, 512, 96, 96],
    [300, 301, 96, 97],
    [7, 9, 3, 4],
    [5, 5, 9, 9],
    [1, 1, 1, 1],
    [130, 77, 64, 64],
  ] as const) {
    const map = Float32Array.from({ length: rows * cols }, () => rand());
    const simd = poolMax(map, rows, cols, outRows, outCols);
    const scalar = poolMaxScalar(map, rows, cols, outRows, outCols);
    assert.deepEqual(simd, scalar, `${rows} × ${cols} → ${outRows} × ${outCols}`);
    const inPlace = poolMax(map, rows, cols, outRows, outCols, { transient: true }); // the same cells, not copied out
    assert.deepEqual(Array.from(inPlace), Array.from(scalar), `in place: ${rows} × ${cols}`);
  }
});

test('headMap slices layer l, head h of [L, H, Tq, Tk] with the right tokens', () => {
  // L=2, H=3, cross: Tq = 2 target tokens, Tk = 3 source tokens; value = 100·l + 10·h + cell index.
  const w = new Float32Array(2 * 3 * 2 * 3);
  for (let l = 0; l < 2; l++)
    for (let h = 0; h < 3; h++) for (let c = 0; c < 6; c++) w[(l * 3 + h) * 6 + c] = 100 * l + 10 * h + c;
  const p = {
    source: { runDir: '/r', step: 1, input: 'probe' as const },
    srcTokens: ['a', 'b', 'c'],
    tgtTokens: ['x', 'y'],
    maps: [{ kind: 'cross' as const, shape: [2, 3, 2, 3] as [number, number, number, number], weights: w }],
  };
  const m = headMap(p, { kind: 'cross', layer: 1, head: 2 })!;
  assert.deepEqual(Array.from(m.weights), [120, 121, 122, 123, 124, 125]);
  assert.deepEqual([m.queries, m.keys, m.queryTokens, m.keyTokens], [2, 3, ['x', 'y'], ['a', 'b', 'c']]);
  assert.equal(headMap(p, { kind: 'cross', layer: 2, head: 0 }), undefined);
  assert.equal(headMap(p, { kind: 'encoder_self', layer: 0, head: 0 }), undefined);
});
