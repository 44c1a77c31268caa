/**
 * WCAG 2 contrast (webview/lib/contrast.ts) against published and hand-worked values, and where the
 * Global Q/K view's position scale stops on a light page and starts on a dark one (worked out apart
 * in Python from matplotlib's viridis stops: (38, 167, 131) at t = 0.6 has 3.03:1 on white,
 * (71, 189, 111) at 0.7 has 2.39:1; on the dark pages, below).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contrastRatio, cssRgb, relativeLuminance, viridisSpanOn } from '../../webview/lib/contrast';

test('contrastRatio: WCAG 2 values', () => {
  assert.equal(contrastRatio([0, 0, 0], [255, 255, 255]), 21);
  assert.equal(contrastRatio([255, 255, 255], [0, 0, 0]), 21); // either order
  assert.equal(contrastRatio([30, 30, 30], [30, 30, 30]), 1);
  assert.ok(Math.abs(contrastRatio([0x77, 0x77, 0x77], [255, 255, 255]) - 4.48) < 0.01); // #777 on white: 4.48:1
  assert.ok(Math.abs(relativeLuminance([255, 0, 0]) - 0.2126) < 1e-12);
});

test('cssRgb: the forms VS Code gives its theme colours; null for the rest', () => {
  assert.deepEqual(cssRgb('#ffffff'), [255, 255, 255]);
  assert.deepEqual(cssRgb(' #1E1E1E '), [30, 30, 30]);
  assert.deepEqual(cssRgb('#fa0'), [255, 170, 0]);
  assert.deepEqual(cssRgb('#1e1e1e80'), [30, 30, 30]);
  assert.deepEqual(cssRgb('rgb(12, 34, 56)'), [12, 34, 56]);
  assert.deepEqual(cssRgb('rgba(12 34 56 / 0.5)'), [12, 34, 56]);
  assert.equal(cssRgb('white'), null);
  assert.equal(cssRgb('#12345'), null);
});

test('viridisSpanOn: on white viridis keeps 3:1 from 0 up to about 0.6, its yellow end cut', () => {
  const [start, end] = viridisSpanOn([255, 255, 255], 3);
  assert.equal(start, 0);
  assert.ok(end > 0.59 && end < 0.61, `end ${end}`);
  assert.deepEqual(viridisSpanOn([255, 255, 255], 1), [0, 1]); // every colour has 1:1
  assert.deepEqual(viridisSpanOn([128, 128, 128], 30), [0, 1]); // none has 30:1: nothing to gain by cutting
});

test('viridisSpanOn: on a dark page viridis keeps 3:1 from its 0.375 stop up to its yellow end', () => {
  // #1f1f1f (luminance 0.0137): the stop at 0.25 (#3b518b) has 2.15:1, the stop at 0.375 (#2c718e)
  // 3.03:1, and one step of 1/256 below it, (44, 112, 142), 2.99:1; yellow (#fde725) 13.06:1.
  assert.deepEqual(viridisSpanOn([0x1f, 0x1f, 0x1f], 3), [0.375, 1]);
  // #1e1e1e: (44, 112, 142), viridis at 95/256 rounded, has 3.03:1 and (45, 111, 142) at 94/256 3.00:1 (2.998).
  assert.deepEqual(viridisSpanOn([0x1e, 0x1e, 0x1e], 3), [95 / 256, 1]);
});
