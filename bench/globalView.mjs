/* global window, document, performance, Plotly -- the page functions below run in Chromium */
// The Global Q/K view's drawing (issue 32 item 3): 500 pairs × 30 tokens × 2 roles = 30,000 points
// posted to the panel's page (scripts/panel-server.mjs: the page as VS Code serves it, under its CSP)
// in headless Chromium, drawn on the page's own canvas; (1) post → drawn (the canvas says it drew
// that step, colouring and count, then one animation frame), for each colouring; (2) hover: the mouse
// moved onto a point → its label shows (wall time from this process, CDP round trip included). Peer:
// the same points as plotly's WebGL `scattergl` (two traces, hover texts) in a page without the
// panels' CSP (what the CSP rules out: regl's eval). The SVG page this replaced is measured by the
// script as it was (git show 83adf97:bench/globalView.mjs) on a tree of that commit.
// The goal: ≤ 2 s to draw, ≤ 100 ms a hover. Needs `npm run build`.
//   node bench/globalView.mjs [--pairs 500] [--tokens 30] [--reps 3] [--hovers 20]
import console from 'node:console';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servePanels } from '../scripts/panel-server.mjs';
import { launchChromium } from '../scripts/chromium.mjs';
import { root } from './lib/build.mjs';
import { machine, median, parseArgs, writeResult } from './lib/common.mjs';

const args = parseArgs({ pairs: 500, tokens: 30, reps: 3, hovers: 20 });
if (!existsSync(join(root, 'dist/webview/global.js')))
  throw new Error('dist/webview/global.js is missing: npm run build');

// A cross head's view: queries are the target side, keys the source side, `tokens` each; seeded coordinates.
function makeView() {
  let s = 7;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const word = (i) => String(4 + (i % 20));
  const pairs = Array.from({ length: args.pairs }, (_, p) => {
    const ids = Array.from({ length: args.tokens - 1 }, (_, i) => 4 + ((p + i) % 20));
    return {
      src: [...ids, 2],
      tgt: ids,
      words: { src: ids.map(word).join(' '), tgt: ids.map(word).join(' ') },
      srcTokens: [...ids.map(word), '</s>'],
      tgtTokens: ['<s>', ...ids.map(word)],
    };
  });
  const points = { x: [], y: [], role: [], sentence: [], position: [], token: [] };
  for (const role of ['q', 'k'])
    pairs.forEach((p, i) =>
      (role === 'q' ? p.tgtTokens : p.srcTokens).forEach((t, j) => {
        points.x.push(rand() * 5 + (role === 'k' ? 3 : 0));
        points.y.push(rand() * 5);
        points.role.push(role);
        points.sentence.push(i);
        points.position.push(j);
        points.token.push(t);
      }),
    );
  return {
    runDir: '/runs/bench',
    kind: 'cross',
    layer: 0,
    head: 0,
    step: 100,
    basisStep: 100,
    projection: 'pca',
    steps: [50, 100],
    pairs,
    points,
    explained: [0.5, 0.2],
    note: 'bench',
  };
}

const PAGE_HELPERS = () => {
  window.__posted = [];
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => undefined,
    setState: () => {},
  });
};

const view = makeView();
const n = view.points.x.length;
const { server, base } = await servePanels();
const tmp = mkdtempSync(join(tmpdir(), 'global-bench-'));
const browser = await launchChromium(tmp);
const figures = { points: n, pairs: args.pairs, tokens: args.tokens, canvas: {}, webgl: {} };

/** Hovers `count` points (spread over the set); ms from the mouse's move to its label. `place` gives a point's page pixel. */
async function hovers(page, count, place, labelShown) {
  const ms = [];
  for (let h = 0; h < count; h++) {
    const i = Math.floor(((h + 0.5) * n) / count);
    const [px, py] = await place(i);
    await page.mouse.move(1, 1);
    await page.waitForFunction(labelShown, false, { polling: 'raf' });
    const t0 = performance.now();
    await page.mouse.move(px, py);
    await page.waitForFunction(labelShown, true, { polling: 'raf' });
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** Point i's page pixel on the canvas: its plot box and data range (data-box, data-domain). */
const canvasPlace = (page) => (i) =>
  page.evaluate(
    ({ x, y }) => {
      const c = document.getElementById('global-canvas');
      const r = c.getBoundingClientRect();
      const [left, top, w, hgt] = c.dataset.box.split(' ').map(Number);
      const [x0, x1, y0, y1] = c.dataset.domain.split(' ').map(Number);
      return [r.left + left + ((x - x0) / (x1 - x0)) * w, r.top + top + hgt - ((y - y0) / (y1 - y0)) * hgt];
    },
    { x: view.points.x[i], y: view.points.y[i] },
  );

/** Point i's page pixel on a plotly chart `id` (plotly's own axis maps). */
const plotlyPlace = (page, id) => (i) =>
  page.evaluate(
    ({ id, x, y }) => {
      const gd = document.getElementById(id);
      const fl = gd._fullLayout;
      const r = gd.getBoundingClientRect();
      return [r.left + fl._size.l + fl.xaxis.l2p(x), r.top + fl._size.t + fl.yaxis.l2p(y)];
    },
    { id, x: view.points.x[i], y: view.points.y[i] },
  );

/** The peer's two traces (queries as dots, keys as rings), coloured by token, each point's hover text. */
function peerTraces() {
  const HUES = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948'];
  const HUES2 = ['#b07aa1', '#ff9da7', '#9c755f', '#bab0ac', '#17becf', '#bcbd22'];
  const tokens = [...new Set(view.points.token)].sort();
  const hue = new Map(tokens.map((t, i) => [t, [...HUES, ...HUES2][i % 12]]));
  const pt = view.points;
  return ['q', 'k'].map((role) => {
    const idx = pt.role.flatMap((r, i) => (r === role ? [i] : []));
    const text = (i) => {
      const p = view.pairs[pt.sentence[i]];
      return `sentence ${pt.sentence[i]} · ${role} “${pt.token[i]}” at position ${pt.position[i]}<br>${p.srcTokens.join(' ')}`;
    };
    return {
      type: 'scattergl',
      mode: 'markers',
      x: idx.map((i) => pt.x[i]),
      y: idx.map((i) => pt.y[i]),
      customdata: idx,
      text: idx.map(text),
      hovertemplate: '%{text}<extra></extra>',
      marker: { size: 6, symbol: role === 'q' ? 'circle' : 'circle-open', color: idx.map((i) => hue.get(pt.token[i])) },
    };
  });
}

try {
  // ---- (1), (2): the panel's page, canvas -------------------------------------------------
  for (let rep = 0; rep < args.reps; rep++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.addInitScript(PAGE_HELPERS);
    await page.goto(`${base}/panel/global.html`);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 30000 });
    for (const by of ['token', 'position', 'role']) {
      const ms = await page.evaluate(
        async ({ msg, by, want }) => {
          const t0 = performance.now();
          if (by === 'token') window.postMessage(msg, '*');
          else {
            const sel = document.getElementById('colour-by');
            sel.value = by;
            sel.dispatchEvent(new window.Event('change'));
          }
          await new Promise((resolve) => {
            const look = () =>
              document.getElementById('global-canvas')?.dataset.drawn === want
                ? resolve()
                : window.requestAnimationFrame(look);
            look();
          });
          await new Promise((r) => window.requestAnimationFrame(() => r()));
          return performance.now() - t0;
        },
        { msg: { type: 'state', v: 3, state: stateOf(view) }, by, want: `${view.step} ${by} ${n}` },
      );
      (figures.canvas[`draw_${by}_ms`] ??= []).push(Math.round(ms));
    }
    const shown = (on) => document.getElementById('global-hover').hidden === !on;
    (figures.canvas.hover_ms ??= []).push(
      ...(await hovers(page, args.hovers, canvasPlace(page), shown)).map(Math.round),
    );
    await page.close();
  }

  // ---- peer: the same points as scattergl, in a page without the panels' CSP ---------------
  const traces = peerTraces();
  const plotlyJs = readFileSync(join(root, 'node_modules/plotly.js-dist-min/plotly.min.js'), 'utf8');
  for (let rep = 0; rep < args.reps; rep++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.setContent('<html><body><div id="gl" style="width:1360px;height:800px"></div></body></html>');
    await page.addScriptTag({ content: plotlyJs });
    const ms = await page.evaluate(async (traces) => {
      const t0 = performance.now();
      await Plotly.react(document.getElementById('gl'), traces, { hovermode: 'closest', margin: { l: 56, t: 32 } });
      await new Promise((r) => window.requestAnimationFrame(() => r()));
      return document.querySelector('.no-webgl') ? -1 : performance.now() - t0;
    }, traces);
    (figures.webgl.draw_token_ms ??= []).push(Math.round(ms));
    const shown = (on) => !!document.querySelector('.hoverlayer .hovertext') === on;
    (figures.webgl.hover_ms ??= []).push(
      ...(await hovers(page, args.hovers, plotlyPlace(page, 'gl'), shown)).map(Math.round),
    );
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
  rmSync(tmp, { recursive: true, force: true });
}

function stateOf(v) {
  const header = {
    runDir: v.runDir,
    run: 'bench',
    step: null,
    input: 'probe',
    live: false,
    checkpoints: v.steps,
    vocab: true,
  };
  return {
    panel: 'global',
    header,
    runDir: v.runDir,
    head: { kind: v.kind, layer: 0, head: 0 },
    view: v,
    busy: null,
    error: null,
  };
}

const summary = (xs) => ({ median: median(xs), max: Math.max(...xs) });
const table = Object.fromEntries(
  ['canvas', 'webgl'].map((side) => [
    side,
    Object.fromEntries(Object.entries(figures[side]).map(([k, xs]) => [k, summary(xs)])),
  ]),
);
console.log(JSON.stringify({ machine: machine(), points: n, ...table }, null, 2));
writeResult('globalView', { ...figures, summary: table });
