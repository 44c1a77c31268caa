/**
 * The Global Q/K view's token key laid out (webview/global/tokenKey.ts planTokenKey), with a fake
 * canvas whose text is 7 px a code point: the rows a plot's height holds, the last saying how many
 * more, the count alone where no token row fits, a long token cut on whole code points, and the key
 * held to 30% of the canvas.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type TextMeasure, planTokenKey, tokenOrder } from '../../webview/global/tokenKey';

const ctx = {
  measureText: (s: string) => ({ width: 7 * Array.from(s).length }),
} satisfies TextMeasure;
const tokens = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);
// font 13 px: rows of 18 px
const plan = (ts: string[], plotHeight: number, canvasWidth = 1200) =>
  planTokenKey(ctx, ts, plotHeight, 13, canvasWidth);

test('every token has a row where the plot is tall enough; its width is the widest token, its dot and gaps', () => {
  const p = plan(['4', '5', '</s>'], 180);
  assert.deepEqual(
    p.rows.map((r) => [r.text, r.drawn, r.more]),
    [
      ['4', '4', false],
      ['5', '5', false],
      ['</s>', '</s>', false],
    ],
  );
  assert.equal(p.rowHeight, 18);
  assert.equal(p.width, 14 + 14 + 4 * 7 + 8); // gap, dot and its room, "</s>", gap
});

test('fewer rows than tokens: as many as fit, the last saying how many more; none fitting: the count', () => {
  // 100 px hold 5 rows of 18: 4 tokens, then "+16 more"
  let p = plan(tokens(20), 100);
  assert.deepEqual(
    p.rows.map((r) => r.text),
    ['t0', 't1', 't2', 't3', '+16 more'],
  );
  assert.deepEqual(
    p.rows.map((r) => r.more),
    [false, false, false, false, true],
  );
  // 30 px hold one row: no token fits beside the count, so the row says how many tokens there are
  p = plan(tokens(6), 30);
  assert.deepEqual(
    p.rows.map((r) => [r.text, r.more]),
    [['6 tokens', true]],
  );
  // exactly as many rows as tokens: no "more"
  p = plan(tokens(5), 90);
  assert.equal(p.rows.length, 5);
  assert.ok(p.rows.every((r) => !r.more));
});

test('a long token is cut with an ellipsis on whole code points, within 110 px; the key within 30% of the canvas', () => {
  const long = '🙂'.repeat(40); // 40 code points, 80 UTF-16 units
  let p = plan(['a', long], 180);
  const cut = p.rows[1]!.drawn;
  // 110 px at 7 px a code point: 14 emoji and the ellipsis (15 × 7 = 105)
  assert.equal(cut, `${'🙂'.repeat(14)}…`);
  assert.ok(!/[\uD800-\uDBFF]…$/.test(cut), 'no half of a surrogate pair before the ellipsis');
  assert.equal(p.width, 14 + 14 + 105 + 8);
  // a 300 px canvas: at most 30% (90 px) for the key, so 90 − 36 = 54 px of text: 7 code points
  p = plan(['a', long], 180, 300);
  assert.equal(p.rows[1]!.drawn, `${'🙂'.repeat(6)}…`);
  assert.ok(p.width <= 0.3 * 300, `key ${p.width} px in a 300 px canvas`);
});

test('tokens in the key: whole numbers by value first, then the rest by code units; a total order', () => {
  assert.deepEqual(['<s>', '10', '9', '</s>', 'b', '4', 'a', '007'].sort(tokenOrder), [
    '4',
    '007',
    '9',
    '10',
    '</s>',
    '<s>',
    'a',
    'b',
  ]);
  // '1a' < '4' < '10' on characters alone would close a cycle with '10' < '1a'; here numbers come first.
  const mixed = ['1a', '10', '4'];
  assert.deepEqual([...mixed].sort(tokenOrder), ['4', '10', '1a']);
  for (const a of mixed)
    for (const b of mixed) assert.equal(Math.sign(tokenOrder(a, b)) + Math.sign(tokenOrder(b, a)), 0, `${a} ${b}`);
});
