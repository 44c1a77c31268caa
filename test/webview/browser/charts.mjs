// Compare and fork charts (issue 26 item 12): eight runs on the dashboard, one diverging to 3,000,
// the selected run a fork over its parent. Checked from plotly's own layout and the DOM: the
// legend beside the plot area (no overlap), the y axis not stretched to 3,000, the selected run's
// trace last (on top), the parent dimmed, and the fork's frozen head named in the header.
import { join } from 'node:path';
import { V, artifacts, assert, metricRows, openPanel, panelHeader, send, test } from './harness.mjs';

/** A loss falling from about 8 to about 2 by step 200, a little apart per run. */
const falling = (k) => (s) => 2 + 6 * Math.exp(-s / 40) + 0.05 * k;

const FORK_HEADER = panelHeader('/runs/tiny-fork40', [], {
  fork: { parent: '/runs/tiny-parent', step: 40, edits: 'frozen cross:1.0; lr × 0.5' },
});

test('Compare charts: 8 runs, one diverged, a fork over its parent: legend outside, y clipped, fork on top', async () => {
  const page = await openPanel('dashboard', { width: 1400, height: 900 });
  await send(page, {
    type: 'state',
    v: V,
    state: {
      panel: 'dashboard',
      header: FORK_HEADER,
      rows: metricRows(41, 200, falling(-4)),
      schedule: null,
      cursor: null,
      events: [],
    },
  });
  const overlays = [{ run: 'tiny-parent', runDir: '/runs/tiny-parent', rows: metricRows(1, 200, falling(0)) }];
  for (let k = 1; k <= 6; k++)
    overlays.push({
      run: `tiny-lr-sweep-${k}`,
      runDir: `/runs/tiny-lr-sweep-${k}`,
      rows: metricRows(1, 200, falling(k)),
    });
  // Diverges from step 120: the loss climbs to 3,000.
  const diverged = (s) => (s < 120 ? falling(7)(s) : Math.min(3000, falling(7)(s) * 1.1 ** (s - 120)));
  overlays.push({ run: 'tiny-diverged', runDir: '/runs/tiny-diverged', rows: metricRows(1, 200, diverged) });
  await page.waitForFunction(
    () => Number(document.body.dataset.drawn) >= 1 && document.getElementById('chart-loss').data,
  );
  const before = await page.evaluate(() => Number(document.body.dataset.drawn));
  await send(page, { type: 'overlay', v: V, runs: overlays });
  // Drawn (the page counts each whole redraw) with every run on every chart.
  await page.waitForFunction(
    (n) =>
      Number(document.body.dataset.drawn) > n &&
      ['loss', 'lr', 'tps', 'grad'].every(
        (c) => (document.getElementById(`chart-${c}`).data ?? []).filter((d) => d.name.includes('tiny-')).length >= 8,
      ),
    before,
    { timeout: 10000 },
  );

  const seen = await page.evaluate(() => {
    const gd = document.getElementById('chart-loss');
    const box = gd.getBoundingClientRect();
    const s = gd._fullLayout._size; // the plot area, in the chart's own pixels
    const plot = { left: box.left + s.l, top: box.top + s.t, right: box.left + s.l + s.w, bottom: box.top + s.t + s.h };
    const lg = gd.querySelector('.legend')?.getBoundingClientRect();
    const entries = [...gd.querySelectorAll('.legend .traces')].map((e) => e.textContent);
    return {
      plot,
      legend: lg && { left: lg.left, top: lg.top, right: lg.right, bottom: lg.bottom },
      chart: { left: box.left, right: box.right },
      entries,
      yaxis: { type: gd._fullLayout.yaxis.type, range: gd._fullLayout.yaxis.range },
      data: gd.data.map((d) => ({
        name: d.name,
        width: d.line?.width ?? 0,
        opacity: d.opacity ?? 1,
        maxY: Math.max(...d.y),
      })),
      header: document.getElementById('view-header').textContent,
    };
  });
  await page.screenshot({ path: join(artifacts, 'compare-charts-dark.png') });
  const { plot, legend } = seen;
  assert(legend, 'a legend is drawn');
  const overlap =
    legend.left < plot.right && legend.right > plot.left && legend.top < plot.bottom && legend.bottom > plot.top;
  assert(!overlap, `the legend ${JSON.stringify(legend)} overlaps the plot area ${JSON.stringify(plot)}`);
  assert(legend.right <= seen.chart.right + 1, `the legend is cut at the chart's right edge: ${JSON.stringify(seen)}`);
  assert(seen.entries.length >= 9, `every run has a legend entry: ${JSON.stringify(seen.entries)}`);

  // The y axis: not stretched to 3,000 (or logarithmic); the healthy curves (max ≈ 8.3) use the height.
  const top = seen.yaxis.range[1];
  assert(
    seen.yaxis.type === 'log' || (top < 3000 && top < 20),
    `y axis ${JSON.stringify(seen.yaxis)}: the diverged run flattens the others`,
  );
  const clipped = seen.entries.find((e) => e.includes('tiny-diverged'));
  assert(/clipped/.test(clipped ?? ''), `the clipped run says so in the legend: ${JSON.stringify(seen.entries)}`);

  // The selected run (the fork: 'train') is drawn last, thicker than the others; the parent dimmed.
  const last = seen.data[seen.data.length - 1];
  assert(last.name === 'train', `the last trace (drawn on top) is ${last.name}, not the selected run's`);
  const others = seen.data.filter((d) => d.name.includes('tiny-'));
  assert(
    others.every((d) => d.width < last.width),
    `the selected run is thicker: ${JSON.stringify(seen.data)}`,
  );
  const parent = seen.data.find((d) => d.name.startsWith('tiny-parent'));
  assert(parent.opacity < 1 && parent.width < last.width, `the parent is dimmed: ${JSON.stringify(parent)}`);

  // The header names the fork, its parent and its edits (the frozen head).
  assert(
    /fork of tiny-parent at step 40/.test(seen.header) && seen.header.includes('cross:1.0'),
    `header: ${seen.header}`,
  );
  await page.close();
});
