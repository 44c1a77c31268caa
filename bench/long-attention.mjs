/* global window -- the page functions below run in Chromium */
// Attention of long inputs (issue 12, "Big input"): 1,024, 2,048 and 4,096 source and target tokens
// on the paper's base shape (6 + 6 layers × 8 heads, d_model 512, d_ff 2048; random weights, vocabulary
// 1,000, max_len 512: sinusoidal positions extend past it), teacher-forced. Per size, a fresh
// `node dist/cli.js serve` answers attention/get as it answers the extension; this process plays the
// extension host, on the extension's own code path (bundled from src/): vscode-jsonrpc's reader,
// EngineClient's check of the result, Viewer's toAttentionInTurns (a kind per event-loop turn) and the
// panel's postMessage as VS Code 1.100 serializes it (bench/lib/host.mjs). Measured: (1) engine time
// (request → first byte of the reply) and peak RSS (VmHWM); (2) the reply's bytes on the wire; (3) the
// host's longest task from the reply's first byte to the post (a 1 ms timer's gaps), each step also
// timed alone, and the largest event-loop delay over the whole request for comparison (it spans the
// engine's compute, when this machine's load, not the host's work, delays the loop); (4) post → grid
// drawn in the attention panel's page in headless Chromium (body[data-render-done], and the next frame
// painted), the message staged in the page first as VS Code hands it over (typed arrays, transferred).
// Arrival → drawn is host time + post → drawn: the renderer's IPC hop in between is not measured.
// Then one attention/block (a zoom) at the largest size. Goals: no OOM; host never blocked > 50 ms;
// grid drawn < 2 s at 4,096. Needs `npm run build`.
//   node bench/long-attention.mjs [--tokens 1024,2048,4096] [--backend wasm]
import * as esbuild from 'esbuild';
import { Buffer } from 'node:buffer';
import console from 'node:console';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { servePanels } from '../scripts/panel-server.mjs';
import { loadEngine, root } from './lib/build.mjs';
import { machine, peakRssMiB, parseArgs, writeResult } from './lib/common.mjs';
import { PAGE_INIT, PAGE_POST, PAGE_STAGE, frameWatcher, taskSampler, vscodePostMessage } from './lib/host.mjs';
import { launchChromium } from '../scripts/chromium.mjs';

const args = parseArgs({ tokens: '1024,2048,4096', backend: '', vocab: 1000 });
for (const f of ['dist/cli.js', 'dist/webview/attention.js'])
  if (!existsSync(join(root, f))) throw new Error(`${f} is missing: run npm run build first`);

// The extension's own conversion, bundled from src/ (as draw-latency.mjs does).
const outfile = join(root, 'out', 'bench', 'long-ext.mjs');
await esbuild.build({
  stdin: {
    contents: [
      "export { toAttentionInTurns } from './src/extension/convert';",
      "export { blockFromWire, mapsFromWire } from './src/protocol/wire';",
      "export { attentionGet } from './src/protocol/methods';",
      "export { validate } from './src/protocol/rpc';",
      "export { WEBVIEW_PROTOCOL_VERSION } from './src/protocol/webview';",
    ].join('\n'),
    resolveDir: root,
    loader: 'ts',
    sourcefile: 'long-ext.ts',
  },
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  logLevel: 'warning',
});
const { toAttentionInTurns, blockFromWire, mapsFromWire, attentionGet, validate, WEBVIEW_PROTOCOL_VERSION } =
  await import(`${pathToFileURL(outfile).href}?t=${Date.now()}`);

// A checkpoint folder (config.json + model.safetensors) of the base shape with random weights.
const tmp = mkdtempSync(join(tmpdir(), 'long-attention-'));
const modelDir = join(tmp, 'base');
mkdirSync(modelDir);
{
  const E = await loadEngine();
  await E.initBackend('cpu');
  const config = E.configFromPreset('base', { src_vocab: args.vocab, tgt_vocab: args.vocab }, { dropout: 0 });
  const model = new E.Transformer(config, undefined, 1);
  await E.saveCheckpoint(model, join(modelDir, 'model.safetensors'), join(modelDir, 'config.json'));
  model.dispose();
}

const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = createRequire(import.meta.url)(
  'vscode-jsonrpc/node',
);
let engine;
let browser;
const { server, base } = await servePanels();
const cleanup = () => {
  if (engine && engine.exitCode === null && engine.signalCode === null) engine.kill();
  rmSync(tmp, { recursive: true, force: true });
};
process.on('exit', cleanup);

/** The extension's path from attention/get's reply to the panel (EngineClient.request, Viewer.showSelected, Panel.post). */
async function hostPath(reply) {
  const bad = validate(attentionGet.checkResult, reply, 'attention/get', 'result');
  if (bad) throw new Error(`engine sent a malformed reply: ${bad}`);
  const attention = await toAttentionInTurns(reply.attention, 'attention/get result.attention');
  return {
    reply,
    attention,
    post: vscodePostMessage({ type: 'attention', ...attention, roles: [], v: WEBVIEW_PROTOCOL_VERSION }),
  };
}

/** Each step of hostPath alone (ms): the reply's parse, its check, the largest kind's decoding, the post. */
function stepsAlone(reply, attention) {
  const t = (f) => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  };
  const frame = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: reply }));
  return {
    parse: t(() => JSON.parse(frame.toString('utf8'))),
    check: t(() => validate(attentionGet.checkResult, reply, 'attention/get', 'result')),
    decode: Math.max(...reply.attention.maps.map((m) => t(() => mapsFromWire(m, 'map')))),
    post: t(() => vscodePostMessage({ type: 'attention', ...attention, roles: [], v: WEBVIEW_PROTOCOL_VERSION })),
  };
}

/** Starts an engine and a connection, with a watch on the frames it writes. */
function startEngine() {
  engine = spawn(
    process.execPath,
    [join(root, 'dist', 'cli.js'), 'serve', ...(args.backend ? ['--backend', args.backend] : [])],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  engine.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const watch = frameWatcher(); // before the reader's listener: a frame's last byte is stamped before its parse
  engine.stdout.on('data', watch.onData);
  const conn = createMessageConnection(new StreamMessageReader(engine.stdout), new StreamMessageWriter(engine.stdin));
  conn.listen();
  const exited = new Promise((resolve) => engine.on('exit', (code, signal) => resolve(`${code ?? signal}`)));
  const vmHwm = () => Number(/VmHWM:\s*(\d+)/.exec(readFileSync(`/proc/${engine.pid}/status`, 'utf8'))[1]) / 1024;
  return { conn, frames: watch.frames, exited, vmHwm, stderr: () => stderr };
}

const ids = (n, first) => [first, ...Array.from({ length: n - 2 }, (_, i) => 3 + ((i * 7919) % (args.vocab - 3))), 2];
const results = [];
let info;
let blockRow;
try {
  browser = await launchChromium(tmp);
  const sizes = args.tokens.split(',').map(Number);
  for (const n of sizes) {
    const e = startEngine();
    info = await e.conn.sendRequest('engine/info');
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    await page.addInitScript(PAGE_INIT);
    await page.goto(`${base}/panel/attention.html`);
    await page.waitForFunction(() => window.__posted.some((m) => m.type === 'ready'), null, { timeout: 30000 });
    const input = { kind: 'ids', src: ids(n, 3), tgt: ids(n, 1).slice(0, -1).concat(5) };
    const framesBefore = e.frames.length;
    const whole = monitorEventLoopDelay({ resolution: 1 });
    whole.enable(); // over the whole request: the engine's compute included
    const tasks = taskSampler();
    const t0 = performance.now();
    const { reply, attention, post } = await Promise.race([
      e.conn.sendRequest('attention/get', { runDir: modelDir, input }).then(hostPath),
      e.exited.then((c) => Promise.reject(new Error(`the engine exited (${c}) at ${n} tokens:\n${e.stderr()}`))),
    ]);
    const posted = performance.now();
    await sleep(20);
    tasks.stop();
    whole.disable();
    const frame = e.frames.slice(framesBefore).reduce((a, f) => (f.bytes > a.bytes ? f : a)); // the reply
    const hostLongest = tasks.longest(frame.t0, posted);
    const staged = { text: post.text, b64: post.buffers.map((b) => Buffer.from(b).toString('base64')) };
    await page.evaluate(PAGE_STAGE, staged);
    const drawn = await page.evaluate(PAGE_POST);
    if (drawn.thumbs !== 144) throw new Error(`${n} tokens: ${drawn.thumbs} of 144 thumbnails drawn`);
    if (n === sizes[sizes.length - 1]) {
      const b0 = performance.now();
      const bBefore = e.frames.length;
      const [q0, k0] = [Math.min(1000, n - 256), Math.min(2000, n - 256)];
      const r = { kind: 'cross', layer: 5, head: 7, q0, q1: q0 + 256, k0, k1: k0 + 256 };
      const wireBlock = await e.conn.sendRequest('attention/block', { runDir: modelDir, input, ...r });
      const block = blockFromWire(wireBlock, 'attention/block result');
      const bytes = e.frames.slice(bBefore).reduce((a, f) => Math.max(a, f.bytes), 0);
      blockRow = { ms: performance.now() - b0, bytes, shape: block.shape };
    }
    results.push({
      n,
      engineMs: frame.t0 - t0,
      rss: e.vmHwm(),
      bytes: frame.bytes,
      steps: stepsAlone(reply, attention),
      hostMs: posted - frame.t0,
      hostLongest,
      wholeMax: whole.max / 1e6,
      drawnMs: drawn.drawn,
      paintedMs: drawn.painted,
      postBytes: post.bytes,
      shape: attention.maps[0].shape,
      pool: attention.maps[0].pool,
    });
    e.conn.dispose();
    engine.stdin.end();
    await Promise.race([e.exited, sleep(10000)]);
    await page.close();
  }
  const chromeVersion = browser.version();
  await browser.close();
  browser = undefined;

  const m = machine();
  const mb = (b) => `${(b / 1e6).toFixed(2)} MB`;
  console.log(
    '# attention of long inputs: base shape (6 + 6 layers × 8 heads, d_model 512), random weights, teacher-forced',
  );
  console.log(`date ${m.date}; ${m.nproc} CPUs (${m.cpu}); load average ${m.load} (1/5/15 min); node ${m.node}`);
  console.log(`engine: node dist/cli.js serve, ${info.version}, backend ${info.backend}; matMul ${info.matmul}`);
  console.log(`webview: dist/webview/attention.js in headless Chromium ${chromeVersion}, 1400×900`);
  console.log('');
  const head = [
    'tokens',
    'engine s',
    'engine RSS',
    'reply',
    'parse / check / decode / post ms',
    'host: 1st byte → posted',
    'host longest task',
    'whole-span max delay',
    'post → drawn / painted',
    'arrival → drawn / painted',
    'maps',
  ];
  console.log(head.join(' | '));
  const ms = (x) => `${x.toFixed(0)} ms`;
  for (const r of results)
    console.log(
      [
        `${r.n} + ${r.n}`,
        (r.engineMs / 1000).toFixed(1),
        `${r.rss.toFixed(0)} MiB`,
        mb(r.bytes),
        [r.steps.parse, r.steps.check, r.steps.decode, r.steps.post].map((x) => x.toFixed(1)).join(' / '),
        ms(r.hostMs),
        `${r.hostLongest.toFixed(1)} ms`,
        ms(r.wholeMax),
        `${ms(r.drawnMs)} / ${ms(r.paintedMs)}`,
        `${ms(r.hostMs + r.drawnMs)} / ${ms(r.hostMs + r.paintedMs)}`,
        `${r.shape.join('×')} pooled ${r.pool.rows}×${r.pool.cols}`,
      ].join(' | '),
    );
  console.log(
    "engine: attention/get request → first byte of the reply; RSS: VmHWM of that size's fresh engine; reply: its frame on stdout; " +
      "parse: JSON.parse of the frame (bytes → text included), check: EngineClient's check of the result, decode: the largest " +
      "kind's base64 → Float32Array, post: VS Code's serialization of the panel's message (each timed alone); host: the reply's " +
      "first byte → the message serialized for the page, the host's longest task within it (a 1 ms timer's largest gap − 1), " +
      'and the largest event-loop delay over the whole request (the engine computing in its own process included); post → ' +
      'drawn: window.postMessage (buffers transferred) → body[data-render-done], painted: the next frame after it; arrival → ' +
      'drawn: host + post → drawn',
  );
  if (blockRow)
    console.log(
      `attention/block at ${results[results.length - 1].n}: cross L6 H8, 256 × 256 tokens → ${blockRow.shape.join('×')} weights, ${blockRow.ms.toFixed(0)} ms, ${mb(blockRow.bytes)} on the wire`,
    );
  const worst = Math.max(...results.map((r) => r.hostLongest));
  const last = results[results.length - 1];
  const arrival = last.hostMs + last.paintedMs;
  console.log(
    `goals: no OOM (${results.length} of ${sizes.length} sizes answered); host's longest task ≤ 50 ms: ${worst <= 50 ? 'met' : 'NOT met'} (${worst.toFixed(1)} ms); ` +
      `grid drawn and painted < 2 s after the reply's arrival at ${last.n}: ${arrival < 2000 ? 'met' : 'NOT met'} (${arrival.toFixed(0)} ms); bench RSS ${peakRssMiB().toFixed(0)} MiB`,
  );
  writeResult('long-attention', {
    args,
    engine: `${info.version}, backend ${info.backend}; matMul ${info.matmul}`,
    webview: `Chromium ${chromeVersion}`,
    peer: null,
    rss: { bench: peakRssMiB() },
    results,
    block: blockRow ?? null,
  });
} finally {
  await browser?.close().catch(() => {});
  server.close();
  cleanup();
}
process.exit(0);
