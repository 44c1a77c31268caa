// Every panel's HTML export (issue 33 item 2): the dashboard, attention and Heads pages, fed their
// usual test messages, are asked for `exportImage` html; the file is opened from file:// with every
// other request blocked and counted (must be none) and checked against the view as drawn: the same
// header text, one <img> per drawn canvas whose pixels equal the canvas's (sampled), each plotly
// chart's SVG with the same traces and points, no script, the dark theme's background.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { POST_ATTENTION, V, assert, openFile, openPanel, panelHeader, posted, send, test } from './harness.mjs';

// POST_ATTENTION's run: the attention page shows no other run's maps
const HEADER = panelHeader('/runs/test', [10, 20, 30], { run: 'reverse-tiny', step: 30 });

/** What a page shows (run in the page: the view, or the exported file opened). */
const SHOWN = () => {
  const grid = (w, h) =>
    [0, 1, 2, 3, 4].flatMap((i) => [0, 1, 2, 3, 4].map((j) => [((i + 0.5) * w) / 5, ((j + 0.5) * h) / 5]));
  const samples = (ctx, w, h) =>
    grid(w, h).map(([x, y]) => Array.from(ctx.getImageData(Math.floor(x), Math.floor(y), 1, 1).data).join(','));
  const inPage = !document.querySelector('img[data-from="canvas"], [data-from="plotly"]');
  const pictures = inPage
    ? [...document.querySelectorAll('#app canvas')]
        .filter((c) => !c.closest('.js-plotly-plot') && c.width > 0 && c.height > 0)
        .map((c) => ({ w: c.width, h: c.height, px: samples(c.getContext('2d'), c.width, c.height) }))
    : [...document.querySelectorAll('img[data-from="canvas"]')].map((img) => {
        const c = document.createElement('canvas');
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        const ctx = c.getContext('2d');
        ctx.drawImage(img, 0, 0);
        return { w: c.width, h: c.height, px: samples(ctx, c.width, c.height) };
      });
  // Each chart: its traces, each with its line's vertices and its markers.
  const charts = [...document.querySelectorAll('#app .js-plotly-plot')].map((el) => ({
    id: el.id,
    svgs: el.querySelectorAll('svg.main-svg').length,
    traces: [...el.querySelectorAll('.trace')].map((t) => {
      const d = [...t.querySelectorAll('path.js-line')].map((p) => p.getAttribute('d') ?? '').join('');
      const type = [...t.classList].filter((c) => !/^trace[0-9a-f]{6}$/.test(c)).join(' ');
      return `${type}:${(d.match(/[ML]/g) ?? []).length}:${t.querySelectorAll('.point').length}`;
    }),
  }));
  return {
    header: document.getElementById('view-header').textContent,
    pictures,
    charts,
    scripts: document.querySelectorAll('script').length,
    background: getComputedStyle(document.body).backgroundColor,
  };
};

/** Asks the page for its HTML export, opens the file from file:// and checks it against the view. */
async function exportMatches(page, what, { pictures, charts }) {
  const before = (await posted(page, 'export')).length;
  await send(page, { type: 'exportImage', v: V, format: 'html' });
  await page.waitForFunction((n) => window.__posted.filter((m) => m.type === 'export').length > n, before, {
    timeout: 30000,
  });
  const m = (await posted(page, 'export'))[before];
  assert(
    m.format === 'html' && /\.html$/.test(m.name) && typeof m.text === 'string',
    `${what}: posted ${m.format} ${m.name}`,
  );
  const view = await page.evaluate(SHOWN);
  assert(
    view.pictures.length >= pictures,
    `${what}: the view drew ${view.pictures.length} canvases, want ≥ ${pictures}`,
  );
  assert(view.charts.length >= charts, `${what}: the view shows ${view.charts.length} charts, want ≥ ${charts}`);
  const dir = mkdtempSync(join(tmpdir(), 'ad-html-export-'));
  try {
    const file = join(dir, m.name);
    writeFileSync(file, m.text);
    const { page: opened, blocked } = await openFile(pathToFileURL(file).href);
    await opened.waitForFunction(() => [...document.images].every((i) => i.complete));
    const got = await opened.evaluate(SHOWN);
    await opened.close();
    assert(blocked.length === 0, `${what}: the file asked for ${blocked.length} URLs: ${blocked.slice(0, 3)}`);
    assert(m.text.includes(`default-src 'none'`), `${what}: the file's CSP loads nothing`);
    assert(got.scripts === 0, `${what}: the file holds ${got.scripts} scripts`);
    assert(
      got.header === view.header && /reverse-tiny/.test(got.header),
      `${what}: header “${got.header}” ≠ “${view.header}”`,
    );
    assert(
      got.pictures.length === view.pictures.length,
      `${what}: ${got.pictures.length} images for ${view.pictures.length} canvases`,
    );
    got.pictures.forEach((p, i) => {
      const c = view.pictures[i];
      assert(p.w === c.w && p.h === c.h, `${what}: image ${i} is ${p.w}×${p.h}, its canvas ${c.w}×${c.h}`);
      const off = p.px.findIndex((px, k) => px !== c.px[k]);
      assert(off < 0, `${what}: image ${i} sample ${off} is ${p.px[off]}, its canvas ${c.px[off]}`);
    });
    assert(got.charts.length === view.charts.length, `${what}: ${got.charts.length} charts for ${view.charts.length}`);
    got.charts.forEach((c, i) => {
      const v = view.charts[i];
      assert(c.id === v.id && c.svgs >= 1, `${what}: chart ${i} (${v.id}) is not there as SVG`);
      assert(c.traces.join() === v.traces.join(), `${what}: chart ${v.id} traces ${c.traces} ≠ ${v.traces}`);
    });
    assert(got.background === view.background, `${what}: background ${got.background} ≠ ${view.background}`);
    const [r, g, b] = got.background.match(/\d+/g).map(Number);
    assert(r + g + b < 3 * 80, `${what}: not the dark theme: ${got.background}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a panel’s HTML export matches its view: the dashboard, attention and Heads pages, from file://', async () => {
  const rows = Array.from({ length: 40 }, (_, i) => ({
    step: i + 1,
    loss: 5 - i * 0.1,
    lr: 1e-4,
    tokensPerSec: 1000,
    gradNorm: 1,
  }));
  const dash = await openPanel('dashboard');
  await send(dash, {
    type: 'state',
    v: V,
    state: { panel: 'dashboard', header: HEADER, rows, schedule: null, cursor: null, events: [] },
  });
  await dash.waitForFunction(() => document.getElementById('chart-loss').data?.[0]?.x.length === 40);
  await dash
    .locator('button', { hasText: /^HTML$/ })
    .first()
    .waitFor();
  await exportMatches(dash, 'dashboard', { pictures: 0, charts: 4 });
  await dash.close();

  const att = await openPanel('attention');
  await send(att, {
    type: 'state',
    v: V,
    state: { panel: 'attention', header: HEADER, attention: null, selected: null, roles: [] },
  });
  await att.evaluate(POST_ATTENTION, {
    S: 7,
    T: 6,
    L: 2,
    H: 2,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.05,
    step: 30,
  });
  await att.waitForFunction(() => document.body.dataset.renderDone);
  await att.click('canvas.thumb[data-kind="cross"][data-layer="1"][data-head="1"]');
  await att.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  await exportMatches(att, 'attention', { pictures: 12, charts: 1 });
  await att.close();

  const heads = await openPanel('heads');
  const telemetry = [10, 20, 30].map((step, i) => ({
    step,
    pairs: 4,
    heads: ['encoder_self:0.0', 'cross:0.0'],
    stats: { entropy_norm: [[0, 0.5, 0.25][i], [1, 0.125, 0.75][i]], confidence: [0.5, 0.5] },
  }));
  await send(heads, {
    type: 'state',
    v: V,
    state: { panel: 'heads', header: HEADER, telemetry, events: [], cursor: null },
  });
  await heads.waitForFunction(() => document.body.dataset.drawnCols === '3');
  await exportMatches(heads, 'heads', { pictures: 1, charts: 0 });
  await heads.close();
});
