// README's reproduction (issue 32 item 5). Olsson et al. (2022) saw induction heads form at a visible
// drop of the training loss. The same question on our own models: on the reverse task, at which step
// does cross-attention alignment form, and where does that step fall against the loss curve's
// plateau and drops? Over several seeds (default 3), each a `tiny` reverse run trained here.
//
// - Alignment forms at the first telemetry row where some cross-attention head of the last layer has
//   `align_err` below 0.5 (docs/TELEMETRY.md: the share of the probe pairs' target rows whose
//   largest weight is not on the source token the task takes that target token from).
// - The loss curve's phases come from `lossPhases` (webview/lib/lossPhases.ts, the rule the Heads
//   page draws and docs/TELEMETRY.md states), with its defaults, over every step's training loss. The
//   plateau ends where the first drop after the initial fall begins.
//
// Also where align_err starts to fall: the first row at least 0.1 below its first five rows' median.
//
// It prints one row per seed and draws media/readme/alignment-study.png (one panel per seed: the
// smoothed loss, the last layer's smallest align_err, both steps marked). The runs are kept in DIR.
//   node scripts/alignment-study.mjs [--seeds 1,2,3] [--steps 600] [--runs DIR] [--out FILE]
// After `npm run build`; a run already complete in DIR is read, not trained again.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectCode } from './projectCode.mjs';
import { canvas, drawText, encodeApng, fillRect, textWidth } from './apng.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Alignment has formed once a last-layer cross head's align_err is below this. */
const FORMED = 0.5;
const TRAIN = ['--task', 'reverse', '--config', 'tiny', '--telemetry-every', '10', '--snapshot-every', '100'];
const QUIET = ['--eval-every', '100', '--bleu-sentences', '0'];

function args(argv) {
  const o = { seeds: [1, 2, 3], steps: 600, runs: join(tmpdir(), 'alignment-study'), out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[++i];
    if (argv[i - 1] === '--seeds') o.seeds = v.split(',').map(Number);
    else if (argv[i - 1] === '--steps') o.steps = Number(v);
    else if (argv[i - 1] === '--runs') o.runs = resolve(v);
    else if (argv[i - 1] === '--out') o.out = resolve(v);
    else throw new Error(`alignment-study: unknown argument ${argv[i - 1]}`);
  }
  if (o.seeds.some((s) => !Number.isInteger(s)))
    throw new Error('alignment-study: --seeds takes whole numbers, e.g. 1,2,3');
  o.out ??= join(repo, 'media', 'readme', 'alignment-study.png');
  return o;
}

/** Trains seed `seed` into DIR/seed-N unless a completed run of `steps` steps is there; returns its folder. */
function trainSeed(runs, seed, steps) {
  const dir = join(runs, `seed-${seed}`);
  const status = join(dir, 'status.json');
  if (existsSync(status)) {
    const s = JSON.parse(readFileSync(status, 'utf8'));
    if (s.state === 'completed' && s.step === steps) return dir;
    throw new Error(
      `alignment-study: ${dir} holds a run that is ${s.state} at step ${s.step}: remove it or pick --runs`,
    );
  }
  mkdirSync(runs, { recursive: true });
  const argv = [
    ...TRAIN,
    ...QUIET,
    '--steps',
    String(steps),
    '--checkpoint-every',
    String(steps),
    '--seed',
    String(seed),
  ];
  console.log(`alignment-study: training seed ${seed}: train ${argv.join(' ')} --out ${dir}`);
  const r = spawnSync(process.execPath, [join(repo, 'dist', 'cli.js'), 'train', ...argv, '--out', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`alignment-study: training seed ${seed} failed (exit ${r.status})`);
  return dir;
}

/** One run's curves and the two steps the study compares. */
function study(dir, seed, { lossPhases, smoothLoss, readJsonLines }) {
  const points = readJsonLines(join(dir, 'metrics.jsonl'))
    .filter((m) => typeof m.loss === 'number' && Number.isFinite(m.loss))
    .map((m) => ({ step: m.step, loss: m.loss }));
  const phases = lossPhases(points);
  const drops = phases.filter((p) => p.kind === 'drop');
  // The initial fall is the first drop when it starts at the first steps; the plateau ends at the next.
  const second = drops.find((d, i) => i > 0 || d.from > points[0].step + 0.05 * points.length);
  const rows = readJsonLines(join(dir, 'telemetry.jsonl'));
  const last = rows[0].heads.filter((h) => h.startsWith('cross:')).map((h) => Number(h.split(':')[1].split('.')[0]));
  const lastLayer = Math.max(...last);
  const curve = rows.map((r) => {
    const errs = r.heads
      .map((h, i) => (h.startsWith(`cross:${lastLayer}.`) ? r.stats.align_err?.[i] : null))
      .filter((v) => typeof v === 'number');
    if (!errs.length)
      throw new Error(`alignment-study: ${dir} step ${r.step} has no align_err: run from a tree with it`);
    return { step: r.step, err: Math.min(...errs) };
  });
  const formed = curve.find((c) => c.err < FORMED)?.step ?? null;
  // Where it starts: the first row at least 0.1 below the first five rows' median.
  const early = curve
    .slice(0, 5)
    .map((c) => c.err)
    .sort((a, b) => a - b)[2];
  const starts = curve.find((c) => c.err <= early - 0.1)?.step ?? null;
  const h = Math.max(1, Math.floor(points.length / 50)); // lossPhases' default smoothing
  const smooth = smoothLoss(
    points.map((p) => p.loss),
    h,
  ).map((loss, i) => ({ step: points[i].step, loss }));
  return {
    seed,
    dir,
    points: smooth,
    curve,
    phases,
    plateauEnd: second?.from ?? null,
    drop: second ?? null,
    starts,
    formed,
  };
}

// ---- the figure ----------------------------------------------------------------------------
const BG = [0x1e, 0x1e, 0x1e];
const FG = [0xcc, 0xcc, 0xcc];
const GRID = [0x3c, 0x3c, 0x3c];
const BLUE = [0x37, 0x94, 0xff]; // the loss, as the dashboard draws it
const ORANGE = [0xd1, 0x86, 0x16]; // align_err
const S = 2; // font scale
const W = 1280;
const PANEL = 250;
const L = 90; // left margin (loss axis)
const R = 80; // right margin (align_err axis)

function line(c, pts, rgb) {
  for (let i = 1; i < pts.length; i++) {
    const [x0, y0] = pts[i - 1];
    const [x1, y1] = pts[i];
    const n = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    for (let k = 0; k <= n; k++)
      fillRect(c, Math.round(x0 + ((x1 - x0) * k) / n), Math.round(y0 + ((y1 - y0) * k) / n), 2, 2, rgb);
  }
}

function dashedV(c, x, y0, y1, rgb) {
  for (let y = y0; y < y1; y += 8) fillRect(c, Math.round(x), y, 2, 4, rgb);
}

function figure(results, steps) {
  const top = 76;
  const c = canvas(W, top + results.length * PANEL + 20, BG);
  drawText(
    c,
    "Reverse task, tiny model: loss (blue, left) and the last layer's smallest align_err (orange, right)",
    16,
    12,
    S,
    FG,
  );
  drawText(c, `dashed: the plateau's end (blue), alignment formed, align_err < ${FORMED} (orange)`, 16, 32, S, FG);
  const maxLoss = Math.max(...results.flatMap((r) => r.points.map((p) => p.loss)));
  results.forEach((r, i) => {
    const y0 = top + i * PANEL + 24;
    const hgt = PANEL - 60;
    const x = (step) => L + ((W - L - R) * step) / steps;
    const yl = (loss) => y0 + hgt - (hgt * loss) / maxLoss;
    const ye = (err) => y0 + hgt - hgt * err; // align_err 0 at the bottom, 1 at the top
    fillRect(c, L, y0 + hgt, W - L - R, 1, GRID);
    fillRect(c, L, y0, 1, hgt, GRID);
    fillRect(c, W - R, y0, 1, hgt, GRID);
    for (let s = 0; s <= steps; s += 100) {
      fillRect(c, x(s), y0 + hgt, 1, 5, GRID);
      drawText(c, String(s), x(s) - textWidth(String(s), S) / 2, y0 + hgt + 8, S, FG);
    }
    drawText(c, `seed ${r.seed}`, L, y0 - 20, S, FG);
    drawText(c, maxLoss.toFixed(1), L - 8 - textWidth(maxLoss.toFixed(1), S), y0, S, BLUE);
    drawText(c, '0', L - 8 - textWidth('0', S), y0 + hgt - 14, S, BLUE);
    drawText(c, 'err 1', W - R + 8, y0, S, ORANGE);
    drawText(c, '0', W - R + 8, y0 + hgt - 14, S, ORANGE);
    for (let px = L; px < W - R; px += 10) fillRect(c, px, Math.round(ye(FORMED)), 4, 1, GRID);
    line(
      c,
      r.points.map((p) => [x(p.step), yl(p.loss)]),
      BLUE,
    );
    line(
      c,
      r.curve.map((p) => [x(p.step), ye(p.err)]),
      ORANGE,
    );
    if (r.plateauEnd !== null) dashedV(c, x(r.plateauEnd), y0, y0 + hgt, BLUE);
    if (r.formed !== null) dashedV(c, x(r.formed), y0, y0 + hgt, ORANGE);
  });
  return c;
}

const o = args(process.argv.slice(2));
const code = await projectCode([
  "export { lossPhases, smoothLoss } from './webview/lib/lossPhases';",
  "export { readJsonLines } from './src/engine/io/jsonLines';",
]);
const results = o.seeds.map((seed) => study(trainSeed(o.runs, seed, o.steps), seed, code));
console.log(
  'seed  plateau ends  drop (start … steepest … end)  align_err falls from  alignment formed  formed − plateau end',
);
for (const r of results) {
  const d = r.drop ? `${r.drop.from} … ${r.drop.at} … ${r.drop.to}` : 'none found';
  const gap = r.formed !== null && r.plateauEnd !== null ? String(r.formed - r.plateauEnd) : 'n/a';
  console.log(
    `${String(r.seed).padEnd(6)}${String(r.plateauEnd ?? 'n/a').padEnd(14)}${d.padEnd(33)}` +
      `${String(r.starts ?? 'never').padEnd(22)}${String(r.formed ?? 'never').padEnd(18)}${gap}`,
  );
}
mkdirSync(dirname(o.out), { recursive: true });
const png = encodeApng([figure(results, o.steps)], [1000], { Title: 'alignment against the loss plateau' });
writeFileSync(o.out, png);
writeFileSync(
  join(o.runs, 'alignment-study.json'),
  `${JSON.stringify(
    results.map(({ points: _p, curve, ...r }) => ({ ...r, curve })),
    null,
    1,
  )}\n`,
);
console.log(`alignment-study: ${o.out}; runs and their figures' data in ${o.runs}`);
