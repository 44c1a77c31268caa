// The head inspector's first seconds (issue 26 item 7): it "shows nothing for its first ~5 s".
// plotly.js (3.5 MB, for the entropy chart only) was loaded before the panel's script, so on a
// busy machine the page could not say ready, nor draw its map, until plotly had run. Here the
// server holds plotly back: the page must start, draw the head's map, and draw the chart once
// plotly arrives. Counted by what is drawn, not timed.
import { join } from 'node:path';
import { V, artifacts, assert, headState, openPanel, openPanelPlotlyHeld, test } from './harness.mjs';

const SNAPSHOT = {
  source: { runDir: '/runs/first', step: 40, input: 'probe' },
  srcTokens: ['a', 'b', 'c'],
  tgtTokens: ['<s>', 'x', 'y'],
  maps: [{ kind: 'cross', shape: [1, 1, 3, 3], weights: [0.8, 0.1, 0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.8] }],
};

test('issue 26: the head inspector draws its map before plotly.js has loaded, and its chart after', async () => {
  const { page, ready, release } = await openPanelPlotlyHeld('head');
  try {
    assert(ready, 'the page said ready while plotly.js was still loading');
    await headState(page, {
      panel: 'head',
      header: null,
      head: { kind: 'cross', layer: 0, head: 0 },
      attention: SNAPSHOT,
      snapshots: [SNAPSHOT],
      losses: [],
      cursor: 40,
    });
    await page.waitForFunction(() => document.body.dataset.drawnStep === '40', null, { timeout: 10_000 });
    const drawn = await page.evaluate(() => {
      const c = document.getElementById('head-map');
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let lit = 0;
      for (let i = 3; i < px.length; i += 4) lit += px[i] > 0 ? 1 : 0;
      return { lit, plotly: typeof window.Plotly, title: document.getElementById('head-title').textContent };
    });
    assert(drawn.plotly === 'undefined', 'plotly.js was still held back when the map was drawn');
    assert(drawn.lit > 0, `the head's map has pixels before plotly loaded (${drawn.lit} lit)`);
    assert(drawn.title.includes('cross:0.0'), `the title names the head: ${drawn.title}`);
    release();
    await page.waitForSelector('#entropy .main-svg', { timeout: 20_000 });
    const bars = await page.locator('#entropy .bars path').count();
    assert(bars === 3, `the entropy chart drew one bar per query once plotly loaded: ${bars}`);
  } finally {
    release();
    await page.close();
  }
});

test('issue 26: a live snapshot adds itself to the inspector’s history; the history is not sent again', async () => {
  const page = await openPanel('head', { width: 1200, height: 900 });
  const at = (step) => ({ ...SNAPSHOT, source: { ...SNAPSHOT.source, step } });
  await headState(page, {
    panel: 'head',
    header: null,
    head: { kind: 'cross', layer: 0, head: 0 },
    attention: at(30),
    snapshots: [at(10), at(20), at(30)],
    losses: [],
    cursor: null,
  });
  await page.waitForFunction(() => document.body.dataset.drawnStep === '30', null, { timeout: 10_000 });
  // What the extension sends with each live snapshot: the attention and that snapshot alone.
  await page.evaluate(
    ({ s, v }) => {
      const snap = { ...s, maps: s.maps.map((m) => ({ ...m, weights: new Float32Array(m.weights) })) };
      window.postMessage({ type: 'attention', v, ...snap }, '*');
      window.postMessage({ type: 'snapshots', v, items: [snap] }, '*');
    },
    { s: at(40), v: V },
  );
  await page.waitForFunction(() => document.body.dataset.drawnStep === '40', null, { timeout: 10_000 });
  const slider = await page.evaluate(() => {
    const el = document.getElementById('step-slider');
    return { max: el.max, value: el.value };
  });
  assert(slider.max === '3', `the slider ranges over steps 10, 20, 30 and 40 (max 3): ${JSON.stringify(slider)}`);
  await page.close();
});

test('while plotly.js loads, each chart of the dashboard says so; once it has loaded, the charts draw', async () => {
  const { page, ready, release } = await openPanelPlotlyHeld('dashboard');
  const notes = () =>
    page.evaluate(() => [...document.querySelectorAll('.chart')].map((el) => getComputedStyle(el, '::before').content));
  try {
    assert(ready, 'the page said ready while plotly.js was still loading');
    const before = await notes();
    assert(
      before.length === 4 && before.every((c) => c === '"Loading the chart library…"'),
      `each chart says it is loading: ${before}`,
    );
    await page.screenshot({ path: join(artifacts, 'dashboard-plotly-loading.png') });
    release();
    await page.waitForSelector('#chart-loss .main-svg', { timeout: 20_000 });
    const after = await notes();
    assert(
      after.every((c) => c === 'none' || c === 'normal'),
      `no note once loaded: ${after}`,
    );
  } finally {
    release();
    await page.close();
  }
});
