/* global window, document, performance, Plotly -- the page functions below run in Chromium */
// The Global Q/K view's drawing (issue 32 item 3): 500 pairs × 30 tokens × 2 roles = 30,000 points
// posted to the panel's page (scripts/panel-server.mjs: the page as VS Code serves it, under its CSP)
// in headless Chromium; (1) post → plotly's SVG scatter drawn (`plotly_afterplot` with every point's
// path in the DOM), for each colouring; (2) hover: the mouse moved onto a point → its label says that
// point's sentence (wall time from this process, CDP round trip included). Peer: the same traces as
// plotly's WebGL `scattergl` in a page without the panels' CSP (what the CSP rules out: regl's eval).
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
const figures = { points: n, pairs: args.pairs, tokens: args.tokens, svg: {}, webgl: {} };

/** Hovers `count` points (spread over the set) of the chart `id`; ms from the mouse's move to its label. */
async function hovers(page, id, count) {
  const ms = [];
  for (let h = 0; h < count; h++) {
    const i = Math.floor(((h + 0.5) * n) / count);
    const [px, py] = await page.evaluate(
      ({ id, x, y }) => {
        const gd = document.getElementById(id);
        const fl = gd._fullLayout;
        const r = gd.getBoundingClientRect();
        return [r.left + fl._size.l + fl.xaxis.l2p(x), r.top + fl._size.t + fl.yaxis.l2p(y)];
      },
      { id, x: view.points.x[i], y: view.points.y[i] },
    );
    await page.mouse.move(1, 1);
    const t0 = performance.now();
    await page.mouse.move(px, py);
    await page.waitForFunction(() => document.querySelector('.hoverlayer .hovertext'), null, { polling: 'raf' });
    ms.push(performance.now() - t0);
  }
  return ms;
}

try {
  // ---- (1), (2): the panel's page, SVG ---------------------------------------------------
  for (let rep = 0; rep < args.reps; rep++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.addInitScript(PAGE_HELPERS);
    await page.goto(`${base}/panel/global.html`);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 30000 });
    for (const by of ['token', 'position', 'role']) {
      const ms = await page.evaluate(
        async ({ msg, by, n }) => {
          const gd = document.getElementById('chart-global');
          const drawn = () => document.querySelectorAll('#chart-global .scatterlayer .point').length === n;
          const t0 = performance.now();
          if (by === 'token') window.postMessage(msg, '*');
          else {
            const sel = document.getElementById('colour-by');
            sel.value = by;
            sel.dispatchEvent(new window.Event('change'));
          }
          await new Promise((resolve) => {
            const look = () => (gd.data?.[0]?.marker && drawn() ? resolve() : window.requestAnimationFrame(look));
            look();
          });
          await new Promise((r) => window.requestAnimationFrame(() => r()));
          return performance.now() - t0;
        },
        { msg: { type: 'state', v: 3, state: stateOf(view) }, by, n },
      );
      (figures.svg[`draw_${by}_ms`] ??= []).push(Math.round(ms));
    }
    (figures.svg.hover_ms ??= []).push(...(await hovers(page, 'chart-global', args.hovers)).map(Math.round));
    if (rep === 0)
      figures.svg.traces = await page.evaluate(() =>
        document
          .getElementById('chart-global')
          .data.map((d) => ({ ...d, x: [...d.x], y: [...d.y], customdata: [...d.customdata] })),
      );
    await page.close();
  }

  // ---- peer: the same traces as scattergl, in a page without the panels' CSP ---------------
  const traces = figures.svg.traces.map((t) => ({ ...t, type: 'scattergl' }));
  delete figures.svg.traces;
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
    (figures.webgl.hover_ms ??= []).push(...(await hovers(page, 'gl', args.hovers)).map(Math.round));
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
  ['svg', 'webgl'].map((side) => [
    side,
    Object.fromEntries(Object.entries(figures[side]).map(([k, xs]) => [k, summary(xs)])),
  ]),
);
console.log(JSON.stringify({ machine: machine(), points: n, ...table }, null, 2));
writeResult('globalView', { ...figures, summary: table });
