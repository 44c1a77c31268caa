/**
 * WCAG 2 contrast (webview/lib/contrast.ts) against published and hand-worked values, and where the
 * Global Q/K view's light position scale stops (worked out apart in Python from matplotlib's viridis
 * stops: (38, 167, 131) at t = 0.6 has 3.03:1 on white, (71, 189, 111) at 0.7 has 2.39:1).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contrastRatio, cssRgb, relativeLuminance, viridisEndOn } from '../../webview/lib/contrast';

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

test('viridisEndOn: on white viridis keeps 3:1 up to about 0.6; on a dark page it is not cut', () => {
  const end = viridisEndOn([255, 255, 255], 3);
  assert.ok(end > 0.59 && end < 0.61, `end ${end}`);
  assert.equal(viridisEndOn([255, 255, 255], 1), 1); // every colour has 1:1
  assert.equal(viridisEndOn([0x1e, 0x1e, 0x1e], 3), 1); // viridis(0) is dark on dark: nothing to gain
});
