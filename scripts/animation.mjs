// README's animation: one cross-attention head of the tiny reverse run turning into an
// anti-diagonal as it learns (output token i reads source token n − 1 − i), one frame per attention
// snapshot of the run's probe pair (docs/RUN_FOLDER.md, snapshots/), drawn in viridis as the panels
// draw maps, with the step written and drawn as a progress bar. Written as an animated PNG
// (scripts/apng.mjs). The snapshots are read and the colours taken with the engine's and the
// pages' own code (src/engine/run/snapshots.ts, webview/lib/colormap.ts), bundled here by esbuild.
//   node scripts/animation.mjs [RUN] [--head cross:L.H] [--out FILE]
// Without RUN it trains the run scripts/pictures.json gives for anti-diagonal (`train`: the CLI's
// arguments; after `npm run build`) in a temporary folder. The head: --head, else the cross head
// whose last map weighs the anti-diagonal most. FILE: media/readme/anti-diagonal.png.
// scripts/pictures.mjs anti-diagonal runs this; test/lint/animation.test.ts checks the file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectCode } from './projectCode.mjs';
import { canvas, drawText, encodeApng, fillRect, textWidth } from './apng.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BACKGROUND = [0x1e, 0x1e, 0x1e]; // Default Dark Modern's editor
const FOREGROUND = [0xcc, 0xcc, 0xcc];
const MUTED = [0x3c, 0x3c, 0x3c];
const ACCENT = [0x37, 0x94, 0xff]; // --vscode-charts-blue
const CELL = 44;
const SCALE = 2; // font pixels
const PAD = 16;
/** Each frame's time on screen, and the last one's (the learnt map held before the loop restarts). */
const FRAME_MS = 250;
const LAST_MS = 2000;

function args(argv) {
  const opts = { run: undefined, head: undefined, out: join(repo, 'media', 'readme', 'anti-diagonal.png') };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--head') opts.head = argv[++i];
    else if (argv[i] === '--out') opts.out = resolve(argv[++i]);
    else opts.run = resolve(argv[i]);
  }
  return opts;
}

/** Trains the run pictures.json gives for anti-diagonal into a temporary folder; returns it. */
function trainRun() {
  const { train } = JSON.parse(readFileSync(join(repo, 'scripts', 'pictures.json'), 'utf8')).pictures['anti-diagonal'];
  const dir = join(mkdtempSync(join(tmpdir(), 'attn-animation-')), 'reverse-tiny');
  console.log(`animation: training ${train.join(' ')} in ${dir}`);
  const r = spawnSync(process.execPath, [join(repo, 'dist', 'cli.js'), 'train', ...train, '--out', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`animation: training failed (exit ${r.status})`);
  return dir;
}

/** The run's snapshots, ascending by step. */
function snapshots(run, readSnapshotFile) {
  const dir = join(run, 'snapshots');
  return readdirSync(dir)
    .filter((f) => /^step-\d+\.(safetensors|json)$/.test(f))
    .map((f) => readSnapshotFile(join(dir, f)))
    .sort((a, b) => a.step - b.step);
}

/** Head `h` of layer `l` of the probe pair's cross-attention: its rows. */
function crossMap(snapshot, l, h) {
  const maps = snapshot.pairs[0].maps.find((m) => m.kind === 'cross');
  if (!maps) throw new Error(`animation: step ${snapshot.step} has no cross-attention`);
  const [layers, heads, queries, keys] = maps.shape;
  if (l >= layers || h >= heads) throw new Error(`animation: no head cross:${l}.${h} (${layers} × ${heads})`);
  const base = (l * heads + h) * queries * keys;
  return Array.from({ length: queries }, (_, q) => maps.weights.subarray(base + q * keys, base + (q + 1) * keys));
}

/** The anti-diagonal's share of a map: target position q (after <s>) reads source position keys − 2 − q. */
function antiDiagonal(rows) {
  const keys = rows[0].length;
  const n = Math.min(rows.length, keys) - 1;
  let sum = 0;
  for (let q = 0; q < n; q++) sum += rows[q][keys - 2 - q];
  return n > 0 ? sum / n : 0;
}

function pickHead(last, head) {
  if (head) {
    const m = /^cross:(\d+)\.(\d+)$/.exec(head);
    if (!m) throw new Error(`animation: --head must be cross:L.H, got ${head}`);
    return { l: Number(m[1]), h: Number(m[2]) };
  }
  const [layers, heads] = last.pairs[0].maps.find((m) => m.kind === 'cross').shape;
  let best = { l: 0, h: 0, score: -1 };
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++) {
      const score = antiDiagonal(crossMap(last, l, h));
      if (score > best.score) best = { l, h, score };
    }
  return best;
}

/** One frame: the title, the map with its tokens, the step as a progress bar. */
function frame(snap, rows, { l, h }, lastStep, viridis) {
  const { src, tgt } = snap.pairs[0];
  const line = 7 * SCALE;
  const labelW = Math.max(...tgt.map((t) => textWidth(t, SCALE))) + 10;
  const mapX = PAD + labelW;
  const mapY = PAD + line + 12 + line + 8;
  const width = Math.max(
    mapX + src.length * CELL + PAD,
    PAD * 2 + textWidth(`cross:${l}.${h}  step ${lastStep}`, SCALE),
  );
  const height = mapY + tgt.length * CELL + 14 + 10 + 8 + line + PAD;
  const c = canvas(width, height, BACKGROUND);
  drawText(c, `cross:${l}.${h}`, PAD, PAD, SCALE, FOREGROUND);
  src.forEach((t, k) => {
    const w = textWidth(t, SCALE);
    drawText(c, t, mapX + k * CELL + (CELL - w) / 2, PAD + line + 12, SCALE, FOREGROUND);
  });
  rows.forEach((row, q) => {
    const t = tgt[q];
    drawText(c, t, mapX - 10 - textWidth(t, SCALE), mapY + q * CELL + (CELL - line) / 2, SCALE, FOREGROUND);
    row.forEach((w, k) => fillRect(c, mapX + k * CELL, mapY + q * CELL, CELL - 1, CELL - 1, viridis(w)));
  });
  const barY = mapY + tgt.length * CELL + 14;
  fillRect(c, PAD, barY, width - 2 * PAD, 10, MUTED);
  fillRect(c, PAD, barY, ((width - 2 * PAD) * snap.step) / lastStep, 10, ACCENT);
  drawText(c, `step ${snap.step} / ${lastStep}`, PAD, barY + 18, SCALE, FOREGROUND);
  return c;
}

async function main() {
  const opts = args(process.argv.slice(2));
  // The engine's snapshot reader and the pages' viridis.
  const { readSnapshotFile, viridis } = await projectCode([
    "export { readSnapshotFile } from './src/engine/run/snapshots';",
    "export { viridis } from './webview/lib/colormap';",
  ]);
  const run = opts.run ?? trainRun();
  try {
    const snaps = snapshots(run, readSnapshotFile);
    if (snaps.length < 2) throw new Error(`animation: ${run} has ${snaps.length} snapshots; it needs two at least`);
    const last = snaps.at(-1);
    const head = pickHead(last, opts.head);
    const lastStep = last.step;
    const frames = snaps.map((s) => frame(s, crossMap(s, head.l, head.h), head, lastStep, viridis));
    const delays = frames.map((_, i) => (i === frames.length - 1 ? LAST_MS : FRAME_MS));
    const steps = snaps.map((s) => s.step).join(',');
    const comment = `cross:${head.l}.${head.h} of the probe pair, steps ${steps}`;
    writeFileSync(opts.out, encodeApng(frames, delays, { Comment: comment }));
    console.log(`animation: ${opts.out}: ${frames.length} frames, ${comment}`);
  } finally {
    if (!opts.run) rmSync(dirname(run), { recursive: true, force: true });
  }
}

await main();
