/** Jensen–Shannon divergence worked by hand, head ranking, and the diverging scale's end points. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Attention } from '../../src/protocol/attention';
import { divergingRgb, headDivergence, incomparable, jsDivergence, rankHeads } from '../../webview/lib/diff';

const near = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-6, `${a} vs ${b}`);

test('JS divergence: 0 for equal rows, ln 2 for disjoint ones, and a worked case', () => {
  near(jsDivergence([0.3, 0.7], [0.3, 0.7]), 0);
  near(jsDivergence([1, 0], [0, 1]), Math.log(2));
  // p = [.5, .5], q = [1, 0], m = [.75, .25]: ½(.5 ln(.5/.75) + .5 ln(.5/.25)) + ½(1 · ln(1/.75)) = 0.2157616.
  near(
    jsDivergence([0.5, 0.5], [1, 0]),
    0.5 * (0.5 * Math.log(0.5 / 0.75) + 0.5 * Math.log(2)) + 0.5 * Math.log(4 / 3),
  );
  near(jsDivergence([0.5, 0.5], [1, 0]), 0.2157616);
  // A head: the mean of its rows' divergences, (ln 2 + 0) / 2.
  near(headDivergence([1, 0, 0.5, 0.5], [0, 1, 0.5, 0.5], 2, 2), Math.log(2) / 2);
});

const pair = (w: number[][]): Attention => ({
  source: { runDir: '/r', step: 1, input: 'probe' },
  srcTokens: ['a', '</s>'],
  tgtTokens: ['<s>', 'x'],
  maps: [{ kind: 'encoder_self', shape: [1, 2, 2, 2], weights: new Float32Array(w.flat()) }],
});

test('heads are ranked by how much they changed; different pairs are refused', () => {
  const a = pair([
    [1, 0, 1, 0],
    [0.5, 0.5, 0.5, 0.5],
  ]);
  const b = pair([
    [1, 0, 1, 0],
    [1, 0, 0, 1],
  ]);
  const ranked = rankHeads(a, b);
  assert.deepEqual(
    ranked.map((r) => `${r.kind}:${r.layer}.${r.head}`),
    ['encoder_self:0.1', 'encoder_self:0.0'],
  );
  near(ranked[0]!.js, 0.2157616); // both rows: [.5, .5] against a one-hot row
  near(ranked[1]!.js, 0);
  assert.equal(incomparable(a, b), undefined);
  assert.equal(incomparable(a, { ...b, srcTokens: ['b', '</s>'] }), 'the two show different sentence pairs');
});

test('the diverging scale: ColorBrewer RdBu’s blue at −1, near-white at 0, red at +1', () => {
  assert.deepEqual(divergingRgb(-1), [33, 102, 172]);
  assert.deepEqual(divergingRgb(0), [247, 247, 247]);
  assert.deepEqual(divergingRgb(1), [178, 24, 43]);
  assert.deepEqual(divergingRgb(5), [178, 24, 43], 'clamped');
});
