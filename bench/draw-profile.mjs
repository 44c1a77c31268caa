/* global window, document, performance, MutationObserver, requestAnimationFrame, setTimeout -- run in Chromium */
// Where the attention view's drawing time goes (issue 34): the attention panel's page (served by
// scripts/panel-server.mjs as in the webview tests, headless Chromium through scripts/chromium.mjs)
// under the DevTools protocol's sampling Profiler and Tracing, for
//   (a) live snapshots after the first on the tiny shape (3 kinds × 2 layers × 4 heads, the probe's
//       7 source and 8 target tokens): what each new training snapshot costs the page;
//   (b) the 144-map grid (3 kinds × 6 layers × 8 heads) at 128 tokens, and (c) at 512 tokens.
// Each case: the message is built in the page first (untimed), then post → body[data-render-done]
// (and the next painted frame) is profiled. Prints per case the JS self time per function (top 15,
// named by function, bundle line and the webview/ source file it comes from) and the renderer main
// thread's own time per trace event (top 10: script, style, layout, paint, GC). A profile is a
// proportion, not a figure to compare across machines: a loaded machine scales it all.
//   node bench/draw-profile.mjs [--snapshots 10] [--reps 2] [--tokens 128,512] [--top 15]
import console from 'node:console';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { buildWebview } from '../scripts/build-webview.mjs';
import { servePanels } from '../scripts/panel-server.mjs';
import { launchChromium } from '../scripts/chromium.mjs';
import { root } from './lib/build.mjs';
import { machine, parseArgs } from './lib/common.mjs';

const args = parseArgs({ snapshots: 10, reps: 2, tokens: '128,512', top: 15 });

await buildWebview();
const bundle = readFileSync(join(root, 'dist', 'webview', 'attention.js'), 'utf8').split('\n');
// esbuild's unminified IIFE marks each source file with a `// path` comment line: line → source file.
const fileAt = [];
let current = '?';
for (const line of bundle) {
  const m = /^\s*\/\/ (\S+\.(?:ts|js))$/.exec(line);
  if (m) current = m[1];
  fileAt.push(current);
}

// In the page: build a message (Float32Arrays made there), keep it, post it later and time it.
const PAGE_HELPERS = () => {
  window.__posted = [];
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => undefined,
    setState: () => undefined,
  });
  window.__build = ({ S, T, L, H, step, seed }) => {
    let s = seed;
    const rand = () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646;
    const tok = (p, n) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    const maps = ['encoder_self', 'decoder_self', 'cross'].map((kind) => {
      const q = kind === 'encoder_self' ? S : T;
      const k = kind === 'decoder_self' ? T : S;
      const w = new Float32Array(L * H * q * k);
      for (let m = 0; m < L * H; m++) {
        for (let r = 0; r < q; r++) {
          const o = (m * q + r) * k;
          let sum = 0;
          for (let c = 0; c < k; c++) {
            const d = c - Math.round((r * k) / q) - (m % 5) + 2;
            sum += w[o + c] = Math.exp(-(d * d) / (2 + (m % 3) * 4)) + 0.05 * rand();
          }
          for (let c = 0; c < k; c++) w[o + c] /= sum;
        }
      }
      return { kind, shape: [L, H, q, k], weights: w };
    });
    window.__msg = {
      type: 'attention',
      v: 3,
      source: { runDir: '/bench/run', step, input: 'probe' },
      srcTokens: tok('s', S),
      tgtTokens: tok('t', T),
      maps,
    };
  };
  // Posts the built message; resolves after data-render-done moves and the next frame is painted.
  window.__postBuilt = () => {
    const g0 = Number(document.body.dataset.renderDone ?? 0);
    const t0 = performance.now();
    return new Promise((resolve) => {
      const done = () => requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0));
      const obs = new MutationObserver(() => {
        if (Number(document.body.dataset.renderDone ?? 0) <= g0) return;
        obs.disconnect();
        done();
      });
      obs.observe(document.body, { attributes: true, attributeFilter: ['data-render-done'] });
      // Transferred, as bench/draw-latency.mjs posts and as a webview receives the engine's
      // ArrayBuffers: a structured clone of 150 MB would otherwise be most of what is profiled.
      window.postMessage(
        window.__msg,
        '*',
        window.__msg.maps.map((m) => m.weights.buffer),
      );
    });
  };
};

/** Self time per function (ms) of a CDP Profiler profile, keyed by name, bundle line and source file. */
function selfTimes(profile, into) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const dt = (deltas[i + 1] ?? 0) / 1000; // a sample's time runs to the next sample
    const f = n.callFrame;
    const inBundle = f.url.endsWith('/attention.js');
    const where = inBundle
      ? `${fileAt[f.lineNumber] ?? '?'} (attention.js:${f.lineNumber + 1})`
      : f.url
        ? `${f.url.split('/').pop()}:${f.lineNumber + 1}`
        : '';
    const key = `${f.functionName || '(anonymous)'}  ${where}`.trim();
    into.set(key, (into.get(key) ?? 0) + dt);
  }
}

/** The renderer main thread's own time per trace event name (ms): each complete event less its children. */
function traceSelfTimes(events, into) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) return;
  const mine = events
    .filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const stack = [];
  for (const e of mine) {
    while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent) into.set(parent.name, (into.get(parent.name) ?? 0) - e.dur / 1000);
    into.set(e.name, (into.get(e.name) ?? 0) + e.dur / 1000);
    stack.push(e);
  }
}

const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'blink',
  'v8',
  'v8.execute',
  'cc',
  'gpu',
].join(',');

/** One post of the built message under the Profiler or Tracing (never both: each skews the other). */
async function measured(page, cdp, mode, acc) {
  if (mode === 'profile') {
    await cdp.send('Profiler.start');
    const wall = await page.evaluate(() => window.__postBuilt());
    const { profile } = await cdp.send('Profiler.stop');
    selfTimes(profile, acc.js);
    return acc.walls.profile.push(wall);
  }
  const events = [];
  const onData = (e) => events.push(...e.value);
  cdp.on('Tracing.dataCollected', onData);
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', { categories: TRACE_CATEGORIES, transferMode: 'ReportEvents' });
  acc.walls.trace.push(await page.evaluate(() => window.__postBuilt()));
  await cdp.send('Tracing.end');
  await complete;
  cdp.off('Tracing.dataCollected', onData);
  traceSelfTimes(events, acc.trace);
}

const newAcc = () => ({ js: new Map(), trace: new Map(), walls: { profile: [], trace: [] } });

function print(label, acc) {
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  const n = acc.walls.profile.length;
  const t = acc.walls.trace.length;
  const total = [...acc.js.values()].reduce((a, b) => a + b, 0);
  const mainTotal = [...acc.trace.values()].filter((v) => v > 0).reduce((a, b) => a + b, 0);
  const ms = (xs) => xs.map((w) => w.toFixed(0)).join(', ');
  console.log(`## ${label}`);
  console.log(`post → drawn and painted: ${ms(acc.walls.profile)} ms profiled; ${ms(acc.walls.trace)} ms traced`);
  console.log(`JS self time per post (Profiler, 100 µs samples), top ${args.top} of ${(total / n).toFixed(1)} ms:`);
  console.log(`${'ms/post'.padStart(8)}  ${'share'.padStart(6)}  function  source`);
  for (const [k, v] of sorted(acc.js).slice(0, args.top))
    console.log(`${(v / n).toFixed(2).padStart(8)}  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  console.log(`renderer main thread, own time per trace event (Tracing), top 10 of ${(mainTotal / t).toFixed(1)} ms:`);
  for (const [k, v] of sorted(acc.trace).slice(0, 10))
    console.log(`${(v / t).toFixed(2).padStart(8)}  ${((100 * v) / mainTotal).toFixed(1).padStart(5)}%  ${k}`);
  console.log('');
}

let seed = 1;
const build = (page, shape) => page.evaluate((s) => window.__build(s), { ...shape, step: seed, seed: seed++ });

const { server, base } = await servePanels();
const tmp = mkdtempSync(join(tmpdir(), 'draw-profile-'));
let browser;
try {
  browser = await launchChromium(tmp);
  const m = machine();
  let commit = '';
  try {
    commit = readFileSync(join(root, '.git', 'HEAD'), 'utf8').trim();
    if (commit.startsWith('ref: ')) commit = readFileSync(join(root, '.git', commit.slice(5)), 'utf8').trim();
  } catch {
    /* no git folder: no commit named */
  }
  console.log('# attention drawing profile: the attention panel in headless Chromium, CDP Profiler + Tracing');
  console.log(
    `date ${m.date}; commit ${commit.slice(0, 7)} (and the working tree); ${m.nproc} CPUs; load average ${m.load}; ` +
      `Chromium ${browser.version()}, --disable-gpu, 1400×900`,
  );
  console.log('');
  const openPage = async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await page.addInitScript(PAGE_HELPERS);
    await page.goto(`${base}/panel/attention.html`);
    await page.waitForFunction(() => window.__posted.some((x) => x.type === 'ready'), null, { timeout: 30000 });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 }); // µs
    return { page, cdp };
  };
  {
    // (a) a live snapshot after the first: every post on one page, the shape unchanged, the weights new.
    const shape = { S: 7, T: 8, L: 2, H: 4 };
    const { page, cdp } = await openPage();
    await build(page, shape);
    await page.evaluate(() => window.__postBuilt());
    const acc = newAcc();
    for (const mode of ['profile', 'trace'])
      for (let i = 0; i < args.snapshots; i++) {
        await build(page, shape);
        await measured(page, cdp, mode, acc);
      }
    print(
      `(a) live snapshot after the first, tiny shape (3 kinds × 2 layers × 4 heads, 7 + 8 tokens), ` +
        `${args.snapshots} posts`,
      acc,
    );
    await page.close();
  }
  for (const [i, n] of args.tokens.split(',').map(Number).entries()) {
    // The grid: its first post on a fresh page, then further posts of the same shape with new weights.
    const shape = { S: n, T: n, L: 6, H: 8 };
    const first = newAcc();
    const again = newAcc();
    for (const mode of ['profile', 'trace']) {
      const { page, cdp } = await openPage();
      await build(page, shape);
      await measured(page, cdp, mode, first);
      for (let r = 0; r < args.reps; r++) {
        await build(page, shape);
        await measured(page, cdp, mode, again);
      }
      await page.close();
    }
    const c = String.fromCharCode(98 + 2 * i);
    const d = String.fromCharCode(99 + 2 * i);
    print(`(${c}) 144 maps (3 kinds × 6 layers × 8 heads) at ${n} tokens: the first post on a fresh page`, first);
    print(`(${d}) the same, ${args.reps} further posts of that shape (new weights) on the same page`, again);
  }
} finally {
  await browser?.close().catch(() => {});
  server.close();
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
