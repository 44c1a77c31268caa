/* global window, document, performance, MutationObserver -- the page functions below run in Chromium */
// Attention drawing latency, end to end: (1) a training step's end → its attention snapshot drawn
// in the attention panel, through the real path (`node dist/cli.js serve` on JSON-RPC/stdio,
// train/snapshot → the extension's attentionFromWire (decode and check, once) → postMessage into the
// panel's page in headless Chromium → body[data-render-done], as test/webview/browser/ waits);
// (2) post → drawn for synthetic 3 kinds × 6 layers × 8 heads at 128 and 512 tokens, against
// matplotlib (bench/draw_peer.py: the same grid as imshow subplots, Agg, saved to PNG);
// (3) peak RSS of the engine (VmHWM), of this process and of the peer. Needs `npm run build`.
//   node bench/draw-latency.mjs [--snapshots 60] [--every 2] [--config tiny] [--tokens 128,512] [--reps 3] [--backend wasm]
import * as esbuild from 'esbuild';
import console from 'node:console';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { servePanels } from '../scripts/panel-server.mjs';
import { root } from './lib/build.mjs';
import { machine, median, PYTHON, parseArgs, peakRssMiB, runPeer, writeResult } from './lib/common.mjs';
import { CHROMIUM, launchChromium } from '../scripts/chromium.mjs';

const args = parseArgs({ snapshots: 60, every: 2, config: 'tiny', tokens: '128,512', reps: 3, warmup: 1, backend: '' });
const L = 6,
  H = 8;
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.95 * xs.length) - 1)];
for (const f of ['dist/cli.js', 'dist/webview/attention.js'])
  if (!existsSync(join(root, f))) throw new Error(`${f} is missing: run npm run build first`);

// The extension's own conversion (protocol/wire.ts) and the protocol's one list of kinds, bundled from src/
// (as bench/lib/build.mjs does).
const outfile = join(root, 'out', 'bench', 'draw-ext.mjs');
await esbuild.build({
  stdin: {
    contents: [
      "export { attentionFromWire } from './src/protocol/wire';",
      "export { WEBVIEW_PROTOCOL_VERSION } from './src/protocol/webview';",
      "export { ATTENTION_KINDS } from './src/protocol/attention';",
    ].join('\n'),
    resolveDir: root,
    loader: 'ts',
    sourcefile: 'draw-ext.ts',
  },
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  logLevel: 'warning',
});
const {
  attentionFromWire,
  WEBVIEW_PROTOCOL_VERSION,
  ATTENTION_KINDS: KINDS,
} = await import(`${pathToFileURL(outfile).href}?t=${Date.now()}`);
/** What TrainingSession.onSnapshot + BasePanel.post do with a snapshot before webview.postMessage. */
function toMessage(wire) {
  return { type: 'attention', ...attentionFromWire(wire, 'train/snapshot attention'), v: WEBVIEW_PROTOCOL_VERSION };
}

// The attention panel's page as VS Code gives it to a webview (scripts/panel-server.mjs, the webview tests' server).
const { server, base } = await servePanels();

const tmp = mkdtempSync(join(tmpdir(), 'draw-latency-'));
let browser;
let engine;
const cleanup = () => {
  if (engine && engine.exitCode === null && engine.signalCode === null) engine.kill();
  rmSync(tmp, { recursive: true, force: true });
};
process.on('exit', cleanup);

// In the page: post a message and resolve once the panel has drawn it (a newer data-render-done).
// `transfer`: the buffers handed over with it, as VS Code hands a webview its typed arrays
// (bench/lib/host.mjs), so no copy of the weights is timed.
const PAGE_HELPERS = () => {
  window.__postAndWait = (msg, transfer = []) => {
    const g0 = Number(document.body.dataset.renderDone ?? 0);
    const t0 = performance.now();
    return new Promise((resolve) => {
      const drawn = () => Number(document.body.dataset.renderDone ?? 0) > g0;
      const obs = new MutationObserver(() => {
        if (!drawn()) return;
        obs.disconnect();
        // `at`: the wall clock when drawn, as the page reads it (Node's Date.now() once evaluate
        // returned added Playwright's hop back, which no webview has).
        resolve({ ms: performance.now() - t0, at: performance.timeOrigin + performance.now() });
      });
      obs.observe(document.body, { attributes: true, attributeFilter: ['data-render-done'] });
      window.postMessage(msg, '*', transfer);
    });
  };
  window.__posted = [];
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => undefined,
    setState: () => undefined,
  });
};
// In the page: a synthetic all-layers × heads message (built there: a 512-token one is 150 MB), posted and timed.
const SYNTHETIC = async ({ n, L, H, kinds }) => {
  const maps = kinds.map((kind) => {
    const w = new Float32Array(L * H * n * n);
    for (let m = 0; m < L * H; m++) {
      for (let r = 0; r < n; r++) {
        const o = (m * n + r) * n;
        let sum = 0;
        for (let c = 0; c < n; c++) {
          const d = c - r - (m % 5) + 2;
          sum += w[o + c] = Math.exp(-(d * d) / (2 + (m % 3) * 4)) + 0.02 * Math.random();
        }
        for (let c = 0; c < n; c++) w[o + c] /= sum; // rows sum to 1
      }
    }
    return { kind, shape: [L, H, n, n], weights: w };
  });
  const tok = (p) => Array.from({ length: n }, (_, i) => `${p}${i}`);
  const msg = {
    type: 'attention',
    v: 3,
    source: { runDir: '/bench', step: n, input: 'probe' },
    srcTokens: tok('s'),
    tgtTokens: tok('t'),
    maps,
  };
  const { ms } = await window.__postAndWait(
    msg,
    maps.map((m) => m.weights.buffer),
  );
  return { ms, drawn: document.querySelectorAll('canvas.thumb[data-drawn="1"]').length };
};

try {
  browser = await launchChromium(tmp);
  const openPage = async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await page.addInitScript(PAGE_HELPERS);
    await page.goto(`${base}/panel/attention.html`);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 30000 });
    return page;
  };

  // ---- (1) training step → drawn ---------------------------------------------------------
  const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = createRequire(import.meta.url)(
    'vscode-jsonrpc/node',
  );
  engine = spawn(
    process.execPath,
    [join(root, 'dist', 'cli.js'), 'serve', ...(args.backend ? ['--backend', args.backend] : [])],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  engine.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((resolve) => engine.on('exit', resolve));
  const conn = createMessageConnection(new StreamMessageReader(engine.stdout), new StreamMessageWriter(engine.stdin));
  const page = await openPage();
  const samples = []; // { step, arrived, drawn (the page's wall clock), convertMs, pageMs, shape }
  let queue = Promise.resolve();
  let failure;
  let ended;
  const endedP = new Promise((resolve) => conn.onNotification('train/ended', (e) => resolve((ended = e))));
  conn.onNotification('train/snapshot', (p) => {
    const arrived = Date.now();
    const t0 = performance.now();
    let msg;
    try {
      msg = toMessage(p.attention); // synchronously, as the extension's onSnapshot does
    } catch (err) {
      failure ??= err;
      return;
    }
    const convertMs = performance.now() - t0;
    queue = queue
      .then(async () => {
        const { ms: pageMs, at } = await page.evaluate((m) => window.__postAndWait(m), msg);
        samples.push({
          step: msg.source.step,
          arrived,
          drawn: at,
          convertMs,
          pageMs,
          shape: msg.maps.map((m) => m.shape),
        });
      })
      .catch((err) => (failure ??= err));
  });
  conn.onClose(() => (failure ??= new Error(`the engine closed the connection; its stderr:\n${stderr}`)));
  conn.listen();
  const info = await conn.sendRequest('engine/info');
  const runDir = join(tmp, 'run');
  const steps = args.snapshots * args.every;
  await conn.sendRequest('train/start', {
    runDir,
    data: { kind: 'task', task: 'reverse' },
    config: args.config,
    steps,
    snapshotEvery: args.every,
  });
  await Promise.race([
    endedP,
    exited.then((code) =>
      Promise.reject(new Error(`the engine exited (${code}) while training; its stderr:\n${stderr}`)),
    ),
  ]);
  await queue;
  if (failure) throw failure;
  if (ended.reason !== 'completed') throw new Error(`training ${ended.reason}: ${ended.message ?? ''}`);
  const engineRss = Number(/VmHWM:\s*(\d+)/.exec(readFileSync(`/proc/${engine.pid}/status`, 'utf8'))[1]) / 1024;
  // The notification carries no time; the engine stamps each step's end (Date.now()) in metrics.jsonl.
  const stepEnd = new Map(
    readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .map((r) => [r.step, r.time]),
  );
  conn.dispose();
  engine.stdin.end();
  await Promise.race([exited, sleep(10000)]);
  await page.close();
  if (samples.length !== args.snapshots) throw new Error(`drew ${samples.length} snapshots, want ${args.snapshots}`);
  const col = (f) => samples.map(f);
  const kindsShape = samples[0].shape.map((s) => `${s[2]}×${s[3]}`).join(', ');

  // ---- (2) all layers × heads at 128 and 512 tokens, and the peer ----------------------------
  const tokens = args.tokens.split(',').map(Number);
  const ours = {};
  const first = {}; // the first post of each size: a new shape, so the page builds its grid
  const synth = await openPage();
  for (const n of tokens) {
    const times = [];
    for (let i = 0; i < args.warmup + args.reps; i++) {
      const r = await synth.evaluate(SYNTHETIC, { n, L, H, kinds: KINDS });
      if (r.drawn !== KINDS.length * L * H)
        throw new Error(`${n} tokens: ${r.drawn} of ${KINDS.length * L * H} thumbnails drawn`);
      if (i === 0) first[n] = r.ms;
      if (i >= args.warmup) times.push(r.ms);
    }
    ours[n] = median(times);
  }
  const chromeVersion = browser.version();
  await browser.close();
  browser = undefined;

  const hasMpl = spawnSync(PYTHON, ['-c', 'import matplotlib'], { stdio: 'ignore' }).status === 0;
  const peer = hasMpl
    ? runPeer('draw_peer.py', [
        '--tokens',
        args.tokens,
        '--layers',
        String(L),
        '--heads',
        String(H),
        '--kinds',
        String(KINDS.length),
        '--reps',
        String(args.reps),
        '--warmup',
        String(args.warmup),
      ])
    : null;

  // ---- report ------------------------------------------------------------------------------
  const m = machine();
  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  console.log('# attention drawing latency: engine → extension conversion → attention panel in Chromium');
  console.log(`date ${m.date}; ${m.nproc} CPUs (${m.cpu}); load average ${m.load} (1/5/15 min); node ${m.node}`);
  console.log(
    `engine: node dist/cli.js serve${args.backend ? ` --backend ${args.backend}` : ''}, ${info.version}, backend ${info.backend}; matMul ${info.matmul}`,
  );
  console.log(
    `webview: dist/webview/attention.js in headless Chromium ${chromeVersion} (${CHROMIUM}, --disable-gpu, 1400×900), drawn = body[data-render-done]`,
  );
  console.log(
    `peer:   ${peer ? `matplotlib ${peer.matplotlib} (${peer.backend}), numpy ${peer.numpy}, Python ${peer.python}` : `${PYTHON}: matplotlib not importable`}`,
  );
  console.log('');
  console.log(
    `## (1) training → drawn: preset ${args.config}, reverse task, ${steps} steps, snapshot every ${args.every}: ${samples.length} snapshots of the probe sentence (maps ${samples[0].shape[0][0]} layers × ${samples[0].shape[0][1]} heads; ${kindsShape})`,
  );
  console.log(`${'interval'.padEnd(46)}  ${'median'.padStart(8)}  ${'p95'.padStart(8)}  unit`);
  const row = (name, xs) =>
    console.log(`${name.padEnd(46)}  ${fmt(median(xs)).padStart(8)}  ${fmt(p95(xs)).padStart(8)}  ms`);
  row(
    'step end → train/snapshot arrival',
    col((s) => s.arrived - stepEnd.get(s.step)),
  );
  row(
    'train/snapshot arrival → drawn',
    col((s) => s.drawn - s.arrived),
  );
  row(
    '  convert (attentionFromWire: base64 → Float32Array, checked)',
    col((s) => s.convertMs),
  );
  row(
    '  in the page: postMessage → data-render-done',
    col((s) => s.pageMs),
  );
  row(
    'step end → drawn',
    col((s) => s.drawn - stepEnd.get(s.step)),
  );
  console.log(
    "step end: the engine's Date.now() after the step, from the run's metrics.jsonl (train/snapshot carries no time); the snapshot is computed after it",
  );
  console.log("drawn: the page's wall clock at data-render-done (performance.timeOrigin + now())");
  console.log('');
  console.log(
    `## (2) post → drawn, ${KINDS.length} kinds × ${L} layers × ${H} heads (${KINDS.length * L * H} maps), median of ${args.reps} after ${args.warmup} warm-up`,
  );
  const w = 12;
  console.log(
    `${'case'.padEnd(w)}  ${'new shape'.padStart(10)}  ${'webview'.padStart(10)}  ${'matplotlib'.padStart(10)}  ${'ratio'.padStart(7)}  unit`,
  );
  for (const n of tokens) {
    const pm = peer?.results.find((r) => r.tokens === n)?.median_s;
    const peerCol =
      pm === undefined
        ? `n/a (apt-get install python3-matplotlib)  ${'n/a'.padStart(7)}`
        : `${fmt(pm * 1000).padStart(10)}  ${((pm * 1000) / ours[n]).toFixed(3).padStart(7)}`;
    console.log(
      `${`${n} tokens`.padEnd(w)}  ${fmt(first[n]).padStart(10)}  ${fmt(ours[n]).padStart(10)}  ${peerCol}  ms per grid`,
    );
  }
  console.log(
    'new shape: the first post of that size (the page builds its cards); webview: the later posts, every map with new values',
  );
  console.log('ratio = matplotlib time / webview time (>1: the webview draws faster)');
  console.log(
    `peak RSS: engine ${engineRss.toFixed(0)} MiB (VmHWM), bench ${peakRssMiB().toFixed(0)} MiB, matplotlib ${peer ? `${peer.rss_mib.toFixed(0)} MiB` : 'n/a'}`,
  );
  const stat = (f) => ({ median: median(col(f)), p95: p95(col(f)) });
  writeResult('draw-latency', {
    args,
    engine: `${info.version}, backend ${info.backend}; matMul ${info.matmul}`,
    webview: `Chromium ${chromeVersion}`,
    peer: peer ? { matplotlib: peer.matplotlib, backend: peer.backend, numpy: peer.numpy, python: peer.python } : null,
    rss: { engine: engineRss, bench: peakRssMiB(), peer: peer?.rss_mib ?? null },
    results: {
      stepEndToArrivalMs: stat((s) => s.arrived - stepEnd.get(s.step)),
      arrivalToDrawnMs: stat((s) => s.drawn - s.arrived),
      convertMs: stat((s) => s.convertMs),
      pageMs: stat((s) => s.pageMs),
      stepEndToDrawnMs: stat((s) => s.drawn - stepEnd.get(s.step)),
      gridMs: Object.fromEntries(
        tokens.map((n) => [
          n,
          {
            webview: ours[n],
            newShape: first[n],
            matplotlib: peer ? (peer.results.find((r) => r.tokens === n)?.median_s ?? NaN) * 1000 : null,
          },
        ]),
      ),
    },
  });
} finally {
  await browser?.close().catch(() => {});
  server.close();
  cleanup();
}
process.exit(0);
