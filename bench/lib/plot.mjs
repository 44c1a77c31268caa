/* global document, Plotly -- the page function runs in Chromium */
// A plotly.js figure (the webview's own plotly.js-dist-min) drawn in headless Chromium
// (scripts/chromium.mjs) and saved as a PNG: for benchmarks that report a curve.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from '../../scripts/chromium.mjs';

const PLOTLY = createRequire(import.meta.url).resolve('plotly.js-dist-min');

/** Draws { data, layout } (plotly's figure) at width × height CSS pixels and writes it to `png`. */
export async function plotPng(figure, png, { width = 1200, height = 520, scale = 2 } = {}) {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-plot-'));
  const browser = await launchChromium(tmp);
  try {
    const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: scale });
    await page.setContent(`<html><body style="margin:0;background:#fff"><div id="plot"></div></body></html>`);
    await page.addScriptTag({ path: PLOTLY });
    await page.evaluate(
      ({ data, layout, w, h }) =>
        Plotly.newPlot(document.getElementById('plot'), data, { ...layout, width: w, height: h }, { staticPlot: true }),
      { data: figure.data, layout: figure.layout, w: width, h: height },
    );
    await page.locator('#plot').screenshot({ path: png });
  } finally {
    await browser.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
