import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colorize, colormapLut, plotlyColorscale, viridis } from '../../webview/lib/colormap';

// matplotlib's viridis: #440154 at 0, #21918c/#21908d at 0.5, #fde725 at 1.
test('viridis endpoints and midpoint are matplotlib’s', () => {
  assert.deepEqual(viridis(0), [0x44, 0x01, 0x54]);
  assert.deepEqual(viridis(1), [0xfd, 0xe7, 0x25]);
  // the quartiles as d3/matplotlib list them: #3b528b at 0.25, #5ec962 at 0.75
  const q1 = viridis(0.25);
  const q3 = viridis(0.75);
  assert.ok(
    [0x3b, 0x52, 0x8b].every((c, i) => Math.abs(c - q1[i]) <= 1),
    `${q1}`,
  );
  assert.ok(
    [0x5e, 0xc9, 0x62].every((c, i) => Math.abs(c - q3[i]) <= 3),
    `${q3}`,
  );
  const mid = viridis(0.5);
  assert.ok(Math.abs(mid[0] - 0x21) <= 1 && Math.abs(mid[1] - 0x91) <= 1 && Math.abs(mid[2] - 0x8c) <= 1, `${mid}`);
});

test('clamps out-of-range and NaN', () => {
  assert.deepEqual(viridis(-3), viridis(0));
  assert.deepEqual(viridis(7), viridis(1));
  assert.deepEqual(viridis(Number.NaN), viridis(0));
});

test('lightness rises monotonically (readable as ordered on dark and light backgrounds)', () => {
  const lum = ([r, g, b]: readonly number[]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
  let prev = -1;
  for (let i = 0; i <= 64; i++) {
    const l = lum(viridis(i / 64));
    assert.ok(l >= prev - 0.5, `lightness drops at ${i / 64}`);
    prev = l;
  }
  // both ends stay apart from a dark (#1e1e1e) and a light (#ffffff) editor background
  assert.ok(lum(viridis(1)) - lum([0x1e, 0x1e, 0x1e]) > 150);
  assert.ok(lum([255, 255, 255]) - lum(viridis(0)) > 200);
});

test('colorize maps 0 and vmax to the ends, opaque', () => {
  const lut = colormapLut();
  const px = colorize([0, 0.5, 1, 2], 1, lut);
  assert.deepEqual(Array.from(px.slice(0, 4)), [0x44, 0x01, 0x54, 255]);
  assert.deepEqual(Array.from(px.slice(8, 12)), [0xfd, 0xe7, 0x25, 255]);
  assert.deepEqual(Array.from(px.slice(12, 16)), [0xfd, 0xe7, 0x25, 255], 'above vmax clamps');
  // vmax scales: 0.25 of vmax 0.25 is the top
  assert.deepEqual(Array.from(colorize([0.25], 0.25, lut)), [0xfd, 0xe7, 0x25, 255]);
});

test('the plotly colorscale runs 0 → 1 through the same colours', () => {
  const cs = plotlyColorscale();
  assert.deepEqual(cs[0], [0, 'rgb(68,1,84)']);
  assert.deepEqual(cs[cs.length - 1], [1, 'rgb(253,231,37)']);
});
