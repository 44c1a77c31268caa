/* global window, document, Plotly, setTimeout, getComputedStyle -- page functions below run in the browser (page.evaluate) */
// Webview tests in a real browser: builds the panels' bundles, serves each panel's page (the HTML
// the panel classes give VS Code, from src/extension/panels/html.ts; scripts/panel-server.mjs) on
// 127.0.0.1 with a dark VS Code theme and a fake acquireVsCodeApi that records what the page posts, opens it in Debian's
// headless Chromium through playwright-core, posts protocol messages into it and checks what is
// DRAWN: canvas pixels, plotly's SVG paths and trace data, the DOM. Expected values come from
// independent sources (matplotlib's viridis colours, eq. 3 of the paper worked here), never from
// the webview's own code. Screenshots go to test-artifacts/webview/.
//   node scripts/test-webview.mjs            (run by scripts/run-tests.mjs after the unit tests)
//   WEBVIEW_TEST_GREP=<text>                 runs only tests whose name contains <text>
// Prints `ok`/`FAIL` per test and a last line `N passed, N failed`; exits non-zero on failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWebview } from './build-webview.mjs';
import { DARK_THEME, LIGHT_THEME, servePanels } from './panel-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const artifacts = join(root, 'test-artifacts', 'webview');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const grep = process.env.WEBVIEW_TEST_GREP ?? '';
const started = Date.now();

// ---- independent expectations --------------------------------------------------------------

// matplotlib's viridis at t = 0, 1/8, …, 1 (the published colour values, not the webview's table).
const VIRIDIS = { 0: '#440154', 0.125: '#472c7a', 0.25: '#3b518b', 0.375: '#2c718e', 0.5: '#21908d', 1: '#fde725' };
const hexRgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
// Eq. (3): lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), d_model 512, warmup 4000.
const D_MODEL = 512;
const WARMUP = 4000;
const lrAt = (s) => D_MODEL ** -0.5 * Math.min(s ** -0.5, s * WARMUP ** -1.5);

// ---- setup ---------------------------------------------------------------------------------

function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() === 0) {
    console.log('webview tests: installing Debian chromium');
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
}

// ---- page helpers --------------------------------------------------------------------------

const FAKE_VSCODE = () => {
  window.__posted = [];
  let state;
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => state,
    setState: (s) => {
      state = s;
      window.__state = s;
    },
  });
};

let browser;
let base;
const problems = []; // console errors, CSP violations and page errors, per page

async function openPanel(
  panel,
  viewport = { width: 1400, height: 900 },
  theme = 'dark',
  init = undefined,
  initArg = undefined,
) {
  const page = await browser.newPage({ viewport });
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text()))
      problems.push(`${panel}: console ${m.type()}: ${m.text()} ${m.location()?.url ?? ''}`);
  });
  page.on('pageerror', (e) => problems.push(`${panel}: page error: ${e.message}`));
  await page.addInitScript(FAKE_VSCODE);
  if (init) await page.addInitScript(init, initArg);
  await page.goto(`${base}/panel/${panel}.html?theme=${theme}`);
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 20000 });
  return page;
}

const posted = (page, type) => page.evaluate((t) => window.__posted.filter((m) => m.type === t), type);
const send = (page, msg) => page.evaluate((m) => window.postMessage(m, '*'), msg);

function assert(cond, what) {
  if (!cond) throw new Error(what);
}
function close(a, b, rel, what) {
  assert(Math.abs(a - b) <= rel * Math.abs(b), `${what}: ${a} ≉ ${b}`);
}

// The payload builder runs in the page: Float32Arrays are made there (a 512-token message is
// 150 MB, which would not pass through CDP as JSON).
const POST_ATTENTION = ({ S, T, L, H, kinds, fill, step }) => {
  const tok = (p, n) => Array.from({ length: n }, (_, i) => `${p}${i}`);
  const maps = kinds.map((kind) => {
    const q = kind === 'encoder_self' ? S : T;
    const k = kind === 'decoder_self' ? T : S;
    const w = new Float32Array(L * H * q * k);
    for (let m = 0; m < L * H; m++) {
      for (let r = 0; r < q; r++) {
        // A diagonal band plus noise, normalised per row; `fill` seeds differences between heads.
        let sum = 0;
        const o = (m * q + r) * k;
        for (let c = 0; c < k; c++) {
          const d = c - Math.round((r * k) / q) - (m % 5) + 2;
          const v = Math.exp(-(d * d) / (2 + (m % 3) * 4)) + fill * Math.random();
          w[o + c] = v;
          sum += v;
        }
        for (let c = 0; c < k; c++) w[o + c] /= sum;
      }
    }
    return { kind, shape: [L, H, q, k], weights: w };
  });
  window.postMessage({ type: 'attention', v: 1, step, srcTokens: tok('s', S), tgtTokens: tok('t', T), maps }, '*');
};

// ---- tests ---------------------------------------------------------------------------------

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('each panel loads under its CSP and posts ready with its name', async () => {
  for (const panel of ['dashboard', 'attention', 'head', 'positional']) {
    const page = await openPanel(panel);
    const ready = await posted(page, 'ready');
    assert(
      ready.length === 1 && ready[0].panel === panel && ready[0].v === 1,
      `${panel} posted ${JSON.stringify(ready)}`,
    );
    const hasPlotly = await page.evaluate(
      () => typeof window.Plotly === 'object' && typeof window.Plotly.react === 'function',
    );
    assert(hasPlotly, `${panel}: plotly did not load from node_modules`);
    await page.close();
  }
});

test('a known 4×4 attention matrix is drawn with viridis colours in the right cells', async () => {
  const page = await openPanel('attention');
  // Rows are queries, columns keys; values on the 1/8 grid so each cell is a published viridis stop.
  const M = [
    [1, 0, 0, 0],
    [0.5, 0.5, 0, 0],
    [0.25, 0.25, 0.25, 0.25],
    [0.125, 0.375, 0.5, 0],
  ];
  await page.evaluate((m) => {
    window.postMessage(
      {
        type: 'attention',
        v: 1,
        step: 7,
        srcTokens: ['a', 'b', 'c', 'd'],
        tgtTokens: ['w', 'x'],
        maps: [{ kind: 'encoder_self', shape: [1, 1, 4, 4], weights: new Float32Array(m.flat()) }],
      },
      '*',
    );
  }, M);
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const px = await page.evaluate(() => {
    const c = document.querySelector('canvas.thumb[data-kind="encoder_self"][data-layer="0"][data-head="0"]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const at = (x, y) => Array.from(d.data.slice((y * c.width + x) * 4, (y * c.width + x) * 4 + 4));
    const cell = c.width / 4;
    return {
      w: c.width,
      h: c.height,
      cells: [0, 1, 2, 3].map((r) =>
        [0, 1, 2, 3].map((k) => at(Math.floor(k * cell + cell / 2), Math.floor(r * cell + cell / 2))),
      ),
      edge: at(Math.floor(cell) - 1, 0),
    };
  });
  assert(px.w === 96 && px.h === 96, `thumbnail is ${px.w}×${px.h}, want 96×96`);
  for (let r = 0; r < 4; r++) {
    for (let k = 0; k < 4; k++) {
      const want = hexRgb(VIRIDIS[M[r][k]]);
      const got = px.cells[r][k];
      const off = Math.max(...want.map((v, i) => Math.abs(v - got[i])));
      assert(
        off <= 3 && got[3] === 255,
        `cell query ${r} key ${k} (w=${M[r][k]}): got rgba(${got}), want ${VIRIDIS[M[r][k]]}`,
      );
    }
  }
  // The last pixel of cell (0,0) still belongs to it: cells are exact 24-pixel blocks.
  assert(
    hexRgb(VIRIDIS[1]).every((v, i) => Math.abs(v - px.edge[i]) <= 3),
    `cell (0,0) edge pixel is rgba(${px.edge})`,
  );
  await page.screenshot({ path: join(artifacts, 'attention-4x4.png') });
  await page.close();
});

test('clicking a thumbnail posts openHead with its layer and head and opens it large', async () => {
  const page = await openPanel('attention');
  await page.evaluate(POST_ATTENTION, {
    S: 7,
    T: 6,
    L: 2,
    H: 3,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.05,
    step: 100,
  });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  const n = await page.locator('canvas.thumb').count();
  assert(n === 18, `want 2 layers × 3 heads × 3 kinds = 18 thumbnails, got ${n}`);
  await page.click('canvas.thumb[data-kind="cross"][data-layer="1"][data-head="2"]');
  await page.waitForFunction(() => window.__posted.some((m) => m.type === 'openHead'));
  const open = await posted(page, 'openHead');
  assert(open.length === 1, `posted ${open.length} openHead messages`);
  const o = open[0];
  assert(o.kind === 'cross' && o.layer === 1 && o.head === 2 && o.v === 1, `openHead was ${JSON.stringify(o)}`);
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  const detail = await page.evaluate(() => {
    const d = document.getElementById('detail').data[0];
    return {
      rows: d.z.length,
      cols: d.z[0].length,
      x: d.x,
      y: d.y,
      sel: document.querySelectorAll('canvas.thumb.selected').length,
      state: window.__state,
    };
  });
  // cross attention: target (6) queries × source (7) keys, axes labelled with the tokens.
  assert(detail.rows === 6 && detail.cols === 7, `detail heatmap is ${detail.rows}×${detail.cols}, want 6×7`);
  assert(detail.x[3].startsWith('s3') && detail.y[5].startsWith('t5'), `axis labels ${detail.x[3]}, ${detail.y[5]}`);
  assert(detail.sel === 1, `${detail.sel} thumbnails marked selected`);
  assert(
    detail.state?.head?.layer === 1 && detail.state.head.head === 2,
    `setState got ${JSON.stringify(detail.state)}`,
  );
  // Hovering the heatmap shows a value (plotly's hover layer).
  const box = await page.locator('#detail .nsewdrag').first().boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForSelector('#detail .hoverlayer .hovertext', { timeout: 5000 });
  const hover = await page.evaluate(() => document.querySelector('#detail .hoverlayer .hovertext').textContent);
  assert(/weight 0\.\d{4}/.test(hover), `hover text: ${hover}`);
  await page.screenshot({ path: join(artifacts, 'attention-grid.png'), fullPage: true });
  await page.close();
});

test('a 512-token message draws all 144 thumbnails without hanging the page', async () => {
  const page = await openPanel('attention');
  const t0 = Date.now();
  await page.evaluate(POST_ATTENTION, {
    S: 512,
    T: 512,
    L: 6,
    H: 8,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.02,
    step: 5000,
  });
  // While drawing, the page must keep answering: poll it; each poll is a task between slices.
  let polls = 0;
  let midway = 0;
  for (;;) {
    const s = await page.evaluate(() => ({
      drawn: Number(document.body.dataset.thumbsDrawn ?? 0),
      done: !!document.body.dataset.renderDone,
    }));
    polls++;
    if (s.done) break;
    if (s.drawn > 0) midway++;
    if (Date.now() - t0 > 180000) throw new Error(`only ${s.drawn} of 144 thumbnails after 180 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = Date.now() - t0;
  const drawn = await page.evaluate(() => document.querySelectorAll('canvas.thumb[data-drawn="1"]').length);
  assert(drawn === 144, `${drawn} of 144 thumbnails drawn`);
  // A thumbnail really holds the map: its diagonal band is bright, its far corner dark.
  const corners = await page.evaluate(() => {
    const c = document.querySelector('canvas.thumb[data-kind="encoder_self"][data-layer="0"][data-head="2"]');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const lum = (x, y) => d[(y * c.width + x) * 4] + d[(y * c.width + x) * 4 + 1] + d[(y * c.width + x) * 4 + 2];
    const m = Math.floor(c.width / 2);
    return { diag: lum(m, m), corner: lum(c.width - 1, 0), w: c.width };
  });
  assert(
    corners.w >= 40 && corners.w <= 96 && corners.diag > corners.corner + 200,
    `thumbnail not drawn from the map: ${JSON.stringify(corners)}`,
  );
  console.log(
    `    512 tokens, 3 kinds × 6 layers × 8 heads: posted and drawn in ${ms} ms; page answered ${midway} polls mid-drawing (${polls} in all)`,
  );
  await page.screenshot({ path: join(artifacts, 'attention-512.png') });
  // Opening a 512 × 512 head large: plotly gets a max-pooled 256 × 256 map, not 262,144 cells.
  const t1 = Date.now();
  await page.click('canvas.thumb[data-kind="cross"][data-layer="5"][data-head="7"]');
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.z?.length === 256, null, {
    timeout: 60000,
  });
  const z = await page.evaluate(() => {
    const d = document.getElementById('detail').data[0];
    return { rows: d.z.length, cols: d.z[0].length, title: document.getElementById('detail-title').textContent };
  });
  assert(z.cols === 256 && z.title.includes('max-pooled'), `large view ${z.rows}×${z.cols}, “${z.title}”`);
  console.log(`    opened a 512 × 512 head large in ${Date.now() - t1} ms`);
  await page.close();
});

test('the dashboard plots the planned LR curve with the shape of eq. 3, actual points on it, downsampled losses', async () => {
  const page = await openPanel('dashboard');
  const total = 20000;
  const steps = [1];
  for (let s = 100; s <= total; s += 100) steps.push(s);
  const points = steps.map((step) => ({ step, lr: lrAt(step) }));
  await send(page, { type: 'schedule', v: 1, totalSteps: total, warmupSteps: WARMUP, dModel: D_MODEL, points });
  // 6000 logged steps with one loss spike at step 3333 that downsampling must keep.
  const rows = [];
  for (let s = 1; s <= 6000; s++) {
    const row = {
      step: s,
      loss: 8 * Math.exp(-s / 1500) + 1.5 + 0.05 * Math.sin(s),
      lr: lrAt(s),
      tokensPerSec: 2000 + 100 * Math.sin(s / 50),
      gradNorm: 1 + 0.5 * Math.cos(s / 80),
    };
    if (s === 3333) row.loss = 42;
    if (s % 500 === 0) row.valLoss = row.loss + 0.2;
    rows.push(row);
  }
  // Sent in batches, as training streams them.
  for (let i = 0; i < rows.length; i += 1000)
    await send(page, { type: 'metrics', v: 1, rows: rows.slice(i, i + 1000) });
  await page.waitForFunction(
    () => {
      const d = document.getElementById('chart-loss').data;
      return d && d[0].x[d[0].x.length - 1] === 6000 && document.getElementById('chart-lr').data?.length === 2;
    },
    null,
    { timeout: 20000 },
  );
  const got = await page.evaluate(() => {
    const lr = document.getElementById('chart-lr');
    const loss = document.getElementById('chart-loss').data;
    const xa = lr._fullLayout.xaxis;
    const ya = lr._fullLayout.yaxis;
    // The drawn SVG path of the planned trace: its highest point must sit at step 4000.
    const path = lr.querySelectorAll('.scatterlayer .trace')[0].querySelector('path.js-line').getAttribute('d');
    return {
      planned: { x: Array.from(lr.data[0].x), y: Array.from(lr.data[0].y), name: lr.data[0].name },
      actual: { x: Array.from(lr.data[1].x), y: Array.from(lr.data[1].y) },
      xRange: xa.range,
      path,
      px4000: xa.d2p(4000),
      pxPeakY: ya.d2p(lr.data[0].y.reduce((a, b) => Math.max(a, b))),
      lossTraces: loss.length,
      lossN: loss[0].x.length,
      lossMax: Math.max(...loss[0].y),
      valN: loss[1]?.x.length,
    };
  });
  // The planned curve: eq. 3 worked by hand at three steps (0.0441941738 · …).
  const plannedAt = (s) => got.planned.y[got.planned.x.indexOf(s)];
  close(plannedAt(1), 1.74693e-7, 1e-5, 'planned lr at step 1');
  close(plannedAt(4000), 6.98771e-4, 1e-5, 'planned lr at step 4000 (peak)');
  close(plannedAt(16000), 3.49386e-4, 1e-5, 'planned lr at step 16000 (half the peak)');
  assert(
    got.planned.x.length === points.length,
    `planned trace has ${got.planned.x.length} points, sent ${points.length}`,
  );
  // Shape: linear warmup (y ∝ x) then ∝ x^-0.5 through the whole run, drawn ahead of training.
  for (let i = 1; i < got.planned.x.length; i++) {
    const [x0, x1, y0, y1] = [got.planned.x[i - 1], got.planned.x[i], got.planned.y[i - 1], got.planned.y[i]];
    if (x1 <= WARMUP) close(y1 / y0, x1 / x0, 1e-6, `warmup is linear between ${x0} and ${x1}`);
    if (x0 >= WARMUP) close(y1 / y0, Math.sqrt(x0 / x1), 1e-6, `decay is ∝ step^-0.5 between ${x0} and ${x1}`);
  }
  assert(
    got.planned.x[got.planned.x.length - 1] === total && got.xRange[1] >= total * 0.99,
    `x axis ends at ${got.xRange[1]}, the run at ${total}`,
  );
  // The SVG path: the topmost vertex is at x = step 4000.
  const verts = [...got.path.matchAll(/[ML]([\d.eE+-]+),([\d.eE+-]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  const top = verts.reduce((a, b) => (b[1] < a[1] ? b : a));
  assert(verts.length >= 10, `planned path has ${verts.length} vertices`);
  assert(
    Math.abs(top[0] - got.px4000) <= 1.5 && Math.abs(top[1] - got.pxPeakY) <= 1.5,
    `path peaks at (${top}), step 4000 is at x=${got.px4000}`,
  );
  // Actual points lie on the plan (the engine logs the lr it used).
  for (let i = 0; i < got.actual.x.length; i += 97)
    close(got.actual.y[i], lrAt(got.actual.x[i]), 1e-9, `actual lr at step ${got.actual.x[i]}`);
  assert(got.actual.x.length <= 1500, `actual lr trace has ${got.actual.x.length} points`);
  // Loss: train and validation traces; 6000 points cut to ≤ 1500 and the spike kept.
  assert(got.lossTraces === 2 && got.valN === 12, `loss traces ${got.lossTraces}, validation points ${got.valN}`);
  assert(got.lossN <= 1500 && got.lossN >= 1000, `train loss shows ${got.lossN} points`);
  assert(got.lossMax === 42, `the loss spike was lost: max shown ${got.lossMax}`);
  // The page uses SVG traces only (scattergl needs unsafe-eval).
  assert((await page.locator('.gl-container canvas').count()) === 0, 'a WebGL trace was drawn');
  // Exports: CSV of every logged row.
  await page.click('button:has-text("Export CSV")');
  const csv = (await posted(page, 'export')).find((m) => m.format === 'csv');
  assert(
    csv &&
      csv.text.split('\n')[0] === 'step,loss,lr,tokensPerSec,gradNorm,valLoss,valBleu' &&
      csv.text.trim().split('\n').length === 6001,
    'CSV export',
  );
  // The Export View command's image request: the loss chart comes back as PNG and as SVG data: URLs.
  for (const format of ['png', 'svg']) {
    await send(page, { type: 'exportImage', v: 1, format });
    await page.waitForFunction(
      (f) => window.__posted.some((m) => m.type === 'export' && m.format === f && m.dataUrl),
      format,
      { timeout: 20000 },
    );
  }
  const images = (await posted(page, 'export')).filter((m) => m.dataUrl);
  assert(
    images.find((m) => m.format === 'png').dataUrl.startsWith('data:image/png;base64,iVBORw0KGgo'),
    'PNG export is a PNG',
  );
  assert(
    /^data:image\/svg\+xml,.*%3Csvg|^data:image\/svg\+xml,.*<svg/.test(
      images.find((m) => m.format === 'svg').dataUrl.slice(0, 400),
    ),
    'SVG export is SVG',
  );
  await page.screenshot({ path: join(artifacts, 'dashboard.png'), fullPage: true });
  // Zoom survives a live update (fixed uirevision).
  await page.evaluate(() => Plotly.relayout(document.getElementById('chart-loss'), { 'xaxis.range': [1000, 2000] }));
  await send(page, {
    type: 'metrics',
    v: 1,
    rows: [{ step: 6001, loss: 1.5, lr: lrAt(6001), tokensPerSec: 2000, gradNorm: 1 }],
  });
  await page.waitForFunction(() => document.getElementById('chart-loss').data[0].x.at(-1) === 6001);
  const range = await page.evaluate(() => document.getElementById('chart-loss')._fullLayout.xaxis.range);
  assert(range[0] === 1000 && range[1] === 2000, `zoom lost after an update: x range ${range}`);
  await page.close();
});

test('an image asked for as the page loads (a webview shown again) has the data sent before it', async () => {
  // A hidden webview is torn down and reloads when shown; VS Code then delivers the messages it
  // queued (state, exportImage) right after the page says ready, before it has painted a frame.
  const rows = [1, 2, 3, 4].map((step) => ({ step, loss: 10 - step, lr: lrAt(step), tokensPerSec: 1000, gradNorm: 1 }));
  const queued = [
    { type: 'state', v: 1, state: { panel: 'dashboard', rows, schedule: null } },
    { type: 'exportImage', v: 1, format: 'svg' },
  ];
  const page = await openPanel(
    'dashboard',
    undefined,
    'dark',
    (messages) => {
      const api = window.acquireVsCodeApi;
      window.acquireVsCodeApi = () => {
        const vscode = api();
        const postMessage = vscode.postMessage;
        vscode.postMessage = (m) => {
          postMessage(m);
          if (m.type === 'ready') for (const q of messages) window.postMessage(q, '*');
        };
        return vscode;
      };
    },
    queued,
  );
  await page.waitForFunction(
    () => window.__posted.some((m) => (m.type === 'export' && m.dataUrl) || m.type === 'error'),
    null,
    { timeout: 20000 },
  );
  const [reply] = await page.evaluate(() => window.__posted.filter((m) => m.type === 'export' || m.type === 'error'));
  assert(reply.type === 'export', `the panel answered ${JSON.stringify(reply)}`);
  const svg = decodeURIComponent(reply.dataUrl.slice(reply.dataUrl.indexOf(',') + 1));
  const traces = svg.match(/class="trace scatter/g) ?? [];
  assert(traces.length === 1, `one train-loss trace in the exported SVG, found ${traces.length}`);
  // A page that survived being hidden is pinged by the extension and must say ready again.
  await send(page, { type: 'ping', v: 1 });
  await page.waitForFunction(() => window.__posted.filter((m) => m.type === 'ready').length === 2, null, {
    timeout: 10000,
  });
  await page.close();
});

test('a malformed message shows an error naming the field, posts error, and the panel goes on', async () => {
  const page = await openPanel('attention');
  // Weights as a JSON array instead of a Float32Array.
  await send(page, {
    type: 'attention',
    v: 1,
    step: 1,
    srcTokens: ['a'],
    tgtTokens: [],
    maps: [{ kind: 'encoder_self', shape: [1, 1, 1, 1], weights: [0.5] }],
  });
  await page.waitForSelector('#error:not([hidden])');
  const text = await page.locator('#error').innerText();
  assert(text.includes('attention.maps[0].weights must be a Float32Array'), `error banner: ${text}`);
  const errs = await posted(page, 'error');
  assert(errs.length === 1 && errs[0].message.includes('maps[0].weights'), `posted ${JSON.stringify(errs)}`);
  await page.screenshot({ path: join(artifacts, 'attention-error.png') });
  // Wrong protocol version, wrong shape, unknown type: each named.
  const cases = [
    [{ type: 'metrics', v: 99, rows: [] }, 'metrics.v must be protocol version 1'],
    [
      {
        type: 'attention',
        v: 1,
        step: 1,
        srcTokens: ['a', 'b'],
        tgtTokens: [],
        maps: [{ kind: 'encoder_self', shape: [1, 1, 3, 2], weights: 'x' }],
      },
      'weights must be a Float32Array',
    ],
    [{ type: 'frobnicate', v: 1 }, 'message.type must be one of'],
    [null, 'message must be an object'],
  ];
  for (const [m, want] of cases) {
    await send(page, m);
    await page
      .waitForFunction((w) => document.getElementById('error').textContent.includes(w), want, { timeout: 5000 })
      .catch(async () => {
        throw new Error(`want an error with “${want}”, banner says “${await page.locator('#error').innerText()}”`);
      });
  }
  const shape = {
    type: 'attention',
    v: 1,
    step: 1,
    srcTokens: ['a', 'b'],
    tgtTokens: [],
    maps: [{ kind: 'encoder_self', shape: [1, 1, 3, 2], weights: null }],
  };
  await page.evaluate(
    (m) => window.postMessage({ ...m, maps: [{ ...m.maps[0], weights: new Float32Array(6) }] }, '*'),
    shape,
  );
  await page.waitForFunction(() => document.getElementById('error').textContent.includes('shape[2] must be 2'));
  // A good message afterwards draws, and the banner goes away.
  await page.evaluate(POST_ATTENTION, { S: 5, T: 4, L: 1, H: 2, kinds: ['encoder_self'], fill: 0, step: 2 });
  await page.waitForFunction(() => document.body.dataset.renderDone && document.getElementById('error').hidden);
  await page.close();
});

test('the head inspector shows entropy, top-k and a snapshot slider that redraws the map', async () => {
  const page = await openPanel('head', { width: 1400, height: 1000 });
  const made = await page.evaluate(() => {
    const S = 4;
    const mk = (step, rows) => ({
      step,
      srcTokens: ['the', 'cat', 'sat', '.'],
      tgtTokens: ['die', 'Katze'],
      maps: [{ kind: 'encoder_self', shape: [1, 1, S, S], weights: new Float32Array(rows.flat()) }],
    });
    const uniform = Array.from({ length: S }, () => Array(S).fill(0.25));
    const sharp = [
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0.1, 0.2, 0.3, 0.4],
      [0.5, 0.25, 0.25, 0],
    ];
    window.postMessage(
      {
        type: 'state',
        v: 1,
        state: {
          panel: 'head',
          head: { kind: 'encoder_self', layer: 0, head: 0 },
          attention: mk(200, sharp),
          snapshots: [mk(100, uniform)],
        },
      },
      '*',
    );
    return true;
  });
  assert(made, 'posting state');
  await page.waitForFunction(
    () => document.body.dataset.drawnStep === '200' && document.getElementById('entropy').data,
  );
  const latest = await page.evaluate(() => ({
    ent: Array.from(document.getElementById('entropy').data[0].x),
    top: [...document.querySelectorAll('#topk tr')].map((tr) => [...tr.children].map((c) => c.textContent)),
    slider: [document.getElementById('step-slider').value, document.getElementById('step-slider').max],
  }));
  // Row entropies worked by hand: one-hot → 0; [.1,.2,.3,.4] → 1.27985; [.5,.25,.25,0] → 1.03972.
  const want = [
    0,
    0,
    -(0.1 * Math.log(0.1) + 0.2 * Math.log(0.2) + 0.3 * Math.log(0.3) + 0.4 * Math.log(0.4)),
    1.5 * Math.log(2),
  ];
  want.forEach((w, i) =>
    assert(Math.abs(latest.ent[i] - w) < 1e-6, `entropy of row ${i}: ${latest.ent[i]}, want ${w}`),
  );
  close(want[2], 1.27985, 1e-5, 'hand value');
  assert(
    latest.slider[0] === '1' && latest.slider[1] === '1',
    `slider at ${latest.slider} (want the newest of 2 frames)`,
  );
  // Top-3 of row 2 ([.1,.2,.3,.4] over the cat sat .): ., sat, cat.
  assert(
    latest.top[3][1].startsWith('. ‹3› 0.400') &&
      latest.top[3][2].startsWith('sat ‹2›') &&
      latest.top[3][3].startsWith('cat ‹1›'),
    `top-k row: ${latest.top[3]}`,
  );
  await page.screenshot({ path: join(artifacts, 'head-inspector.png'), fullPage: true });
  const before = await page.evaluate(() => document.getElementById('head-map').toDataURL());
  await page.locator('#step-slider').fill('0');
  await page.waitForFunction(() => document.body.dataset.drawnStep === '100');
  const earlier = await page.evaluate(() => ({
    url: document.getElementById('head-map').toDataURL(),
    ent: Array.from(document.getElementById('entropy').data[0].x),
    state: window.__state,
  }));
  assert(earlier.url !== before, 'the map did not change with the slider');
  earlier.ent.forEach((e, i) => assert(Math.abs(e - Math.log(4)) < 1e-6, `uniform row ${i} entropy ${e}, want ln 4`));
  assert(earlier.state?.snapshotStep === 100, `setState got ${JSON.stringify(earlier.state)}`);
  // Every pixel of the uniform map has one colour.
  const flat = await page.evaluate(() => {
    const c = document.getElementById('head-map');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 4; i < d.length; i += 4) if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2]) return false;
    return true;
  });
  assert(flat, 'a uniform map is not one colour');
  await page.close();
});

test('the positional view draws the PE matrix as a heatmap', async () => {
  const page = await openPanel('positional');
  await page.evaluate(() => {
    const n = 64;
    const d = 32;
    const v = new Float32Array(n * d);
    for (let p = 0; p < n; p++)
      for (let i = 0; i < d; i += 2) {
        const a = p / 10000 ** (i / d);
        v[p * d + i] = Math.sin(a);
        v[p * d + i + 1] = Math.cos(a);
      }
    window.postMessage({ type: 'positional', v: 1, shape: [n, d], values: v }, '*');
  });
  await page.waitForFunction(() => document.getElementById('pe').data);
  const z = await page.evaluate(() => document.getElementById('pe').data[0].z);
  assert(z.length === 64 && z[0].length === 32, `heatmap is ${z.length}×${z[0].length}`);
  close(z[1][0], Math.sin(1), 1e-6, 'PE(1, 0) = sin 1');
  assert(z[0][1] === 1, 'PE(0, 1) = cos 0');
  await page.screenshot({ path: join(artifacts, 'positional.png') });
  await page.close();
});

test('panels follow the VS Code theme (dark and light): text, background and plotly colours', async () => {
  for (const [theme, vars] of [
    ['dark', DARK_THEME],
    ['light', LIGHT_THEME],
  ]) {
    const page = await openPanel('dashboard', { width: 1400, height: 900 }, theme);
    await send(page, {
      type: 'schedule',
      v: 1,
      totalSteps: 8000,
      warmupSteps: WARMUP,
      dModel: D_MODEL,
      points: [1, 1000, 2000, 4000, 6000, 8000].map((step) => ({ step, lr: lrAt(step) })),
    });
    await send(page, {
      type: 'metrics',
      v: 1,
      rows: Array.from({ length: 3000 }, (_, i) => ({
        step: i + 1,
        loss: 6 * Math.exp(-i / 800) + 1.8,
        lr: lrAt(i + 1),
        tokensPerSec: 1500,
        gradNorm: 1.2,
      })),
    });
    await page.waitForFunction(() => document.getElementById('chart-loss').data?.[0]?.x.length > 0);
    const got = await page.evaluate(() => {
      const gd = document.getElementById('chart-loss');
      const cs = getComputedStyle(document.body);
      return {
        bg: cs.backgroundColor,
        fg: cs.color,
        paper: gd._fullLayout.paper_bgcolor,
        font: gd._fullLayout.font.color,
      };
    });
    const rgb = (hex) => `rgb(${hexRgb(hex).join(', ')})`;
    assert(
      got.bg === rgb(vars['--vscode-editor-background']) && got.fg === rgb(vars['--vscode-editor-foreground']),
      `${theme}: body ${got.fg} on ${got.bg}`,
    );
    assert(
      got.paper === vars['--vscode-editor-background'] && got.font === vars['--vscode-editor-foreground'],
      `${theme}: plotly ${got.font} on ${got.paper}`,
    );
    await page.screenshot({ path: join(artifacts, `dashboard-${theme}.png`) });
    await page.close();
  }
  const page = await openPanel('attention', { width: 1400, height: 900 }, 'light');
  await page.evaluate(POST_ATTENTION, {
    S: 9,
    T: 7,
    L: 2,
    H: 4,
    kinds: ['encoder_self', 'decoder_self', 'cross'],
    fill: 0.05,
    step: 300,
  });
  await page.waitForFunction(() => document.body.dataset.renderDone);
  await page.click('canvas.thumb[data-kind="encoder_self"][data-layer="1"][data-head="1"]');
  await page.waitForFunction(() => document.getElementById('detail').data?.[0]?.type === 'heatmap');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(artifacts, 'attention-light.png') });
  await page.close();
});

test('no CSP violations, console errors or page errors on any page', async () => {
  assert(problems.length === 0, problems.slice(0, 5).join('\n'));
});

// ---- run -----------------------------------------------------------------------------------

let passed = 0;
let failed = 0;
let server;
try {
  ensureChromium();
  mkdirSync(artifacts, { recursive: true });
  await buildWebview();
  ({ server, base } = await servePanels());
  const { chromium } = await import('playwright-core');
  const home = mkdtempSync(join(tmpdir(), 'webview-test-'));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_CACHE_HOME: join(home, 'cache') },
  });
  process.on('exit', () => rmSync(home, { recursive: true, force: true }));
  for (const t of tests) {
    if (grep && !t.name.includes(grep)) continue;
    const t0 = Date.now();
    try {
      await t.fn();
      passed++;
      console.log(`ok ${t.name} (${Date.now() - t0} ms)`);
    } catch (err) {
      failed++;
      console.log(
        `FAIL ${t.name}\n    ${String(err?.stack ?? err)
          .split('\n')
          .slice(0, 4)
          .join('\n    ')}`,
      );
    }
  }
} catch (err) {
  failed++;
  console.log(`FAIL webview test setup: ${err?.stack ?? err}`);
} finally {
  await browser?.close().catch(() => {});
  server?.close();
}
console.log(`webview tests: ${((Date.now() - started) / 1000).toFixed(1)} s, screenshots in ${artifacts}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
