// Which model is better after N minutes (issue 18): the engine and a PyTorch peer of its whole recipe
// (bench/equal_time.py) each train the `small` Transformer on English→German gettext for the same wall
// time, alone on the machine (the engine first, then the peer), on the very same batches in the same
// order (`attention-debugger batches`, from the engine run's own batch stream); then the engine scores
// both checkpoints with the same decoder (beam 4) on the same test split with its sacreBLEU-equal BLEU.
// Writes bench/results/equal-time.json and a plot of both validation-loss curves (by step and by wall
// time) to --png (bench/equal-time.png), drawn with plotly.js in headless Chromium.
//   node scripts/build.mjs && node bench/equal-time.mjs [--minutes 20] [--limit N] [--png FILE]
// Other options: --config small --lang de --warmup 400 --batch-tokens 2500 --eval-every (default
// max(5, 2.5 × minutes)) --seed 1 --beam 4 --backend wasm --batch-factor 3 (training batches written
// for the peer: this many times the engine's steps) --torch-threads (torch.set_num_threads; default: PyTorch's).
import console from 'node:console';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';
import { loadEngine, root } from './lib/build.mjs';
import { header, parseArgs, writeResult } from './lib/common.mjs';
import { mappedBlas, optimisedBlas, requireFairBlas, startPeer } from './lib/peer.mjs';
import { plotPng } from './lib/plot.mjs';

const args = parseArgs({
  minutes: 20,
  config: 'small',
  lang: 'de',
  warmup: 400,
  batchTokens: 2500,
  evalEvery: 0,
  seed: 1,
  beam: 4,
  limit: 0,
  backend: 'wasm',
  batchFactor: 3,
  torchThreads: 0,
  png: join('bench', 'equal-time.png'),
});
const evalEvery = args.evalEvery || Math.max(5, Math.round(2.5 * args.minutes));
const CLI = join(root, 'dist', 'cli.js');
if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run node scripts/build.mjs first');
const dir = join(root, 'out', 'bench', 'equal-time');
const runs = { engine: join(dir, 'engine'), peer: join(dir, 'pytorch') };
const batchesFile = join(dir, 'batches.bin');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const show = (p) => relative(root, p);

// 1. Both sides must multiply with an optimised BLAS: checked before anything is trained.
const { tf, initBackend, matMulDetail } = await loadEngine();
const backend = await initBackend(args.backend);
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}`;
const engineSide = { backend, matMul: matMulDetail() };
const probe = await startPeer('equal_time.py');
const blas = requireFairBlas(probe, engineSide);
await probe.finish();

// 2. The engine: prepares the data (gettext, BPE), trains for the budget, writes its checkpoint.
const trainArgs = [
  'train',
  '--gettext',
  args.lang,
  '--config',
  args.config,
  '--out',
  runs.engine,
  '--backend',
  args.backend,
  '--max-minutes',
  String(args.minutes),
  '--warmup',
  String(args.warmup),
  '--batch-tokens',
  String(args.batchTokens),
  '--eval-every',
  String(evalEvery),
  '--seed',
  String(args.seed),
  // Observation the peer does not do: no snapshots, telemetry or validation BLEU; one checkpoint at the end.
  '--snapshot-every',
  '0',
  '--bleu-sentences',
  '0',
  '--checkpoint-every',
  '1000000000',
];
console.log(`\n== engine: node dist/cli.js ${trainArgs.map((a) => (a.startsWith('/') ? show(a) : a)).join(' ')}`);
const engine = await trainEngine(trainArgs);
console.log(`engine: ${engine.summary.step} steps in ${args.minutes} min; peak RSS ${engine.rss.toFixed(0)} MiB`);

// 3. The batches the engine took, and more, from its run's own batch stream.
const steps = Math.max(Math.ceil(engine.summary.step * args.batchFactor), engine.summary.step + 50);
const written = cli(['batches', '--run', runs.engine, '--steps', String(steps), '--out', batchesFile]);
const batches = JSON.parse(written.stdout);
console.log(
  `batches: ${batches.validation} validation and ${steps} training batches, ${(batches.bytes / 2 ** 20).toFixed(1)} MiB`,
);

// 4. The peer alone, on those batches, for the same budget.
console.log(`\n== PyTorch: bench/equal_time.py on ${show(batchesFile)}, ${args.minutes} min`);
const peer = await startPeer('equal_time.py');
requireFairBlas(peer, engineSide);
const peerRun = await peer.request({
  engine_run: runs.engine,
  batches: batchesFile,
  out: runs.peer,
  minutes: args.minutes,
  ...(args.torchThreads ? { threads: args.torchThreads } : {}),
});
const peerEnd = await peer.finish();
console.log(`PyTorch: ${peerRun.steps} steps in ${args.minutes} min; peak RSS ${peerEnd.rss.toFixed(0)} MiB`);
if (peerRun.exhausted)
  console.error(`warning: the peer used up all ${steps} batches before its time was up: raise --batch-factor`);

// 5. One judge: the engine's decoder and BLEU on each checkpoint, the same test split.
const bleu = {};
for (const [side, run] of Object.entries(runs)) {
  const evalArgs = ['evaluate', '--run', run, '--beam', String(args.beam), '--backend', args.backend];
  if (args.limit) evalArgs.push('--limit', String(args.limit));
  console.log(`\n== ${side}: node dist/cli.js ${evalArgs.map((a) => (a.startsWith('/') ? show(a) : a)).join(' ')}`);
  const t0 = Date.now();
  const r = cli(evalArgs);
  const line = r.stdout.trim().split('\n').at(-1);
  bleu[side] = { score: Number(/^BLEU = ([\d.]+)/.exec(line)?.[1]), line, seconds: (Date.now() - t0) / 1000 };
  console.log(line);
}

// 6. The curves, the figure and the record.
const curves = {
  engine: valCurve(runs.engine, engine.startMs),
  peer: valCurve(runs.peer, peerRun.start_ms),
};
const peerSteps = new Map(curves.peer.map((p) => [p.step, p.val_loss]));
const both = curves.engine.filter((p) => peerSteps.has(p.step)).map((p) => p.val_loss - peerSteps.get(p.step));
const agreement = both.length
  ? { steps: both.length, mean: both.reduce((a, b) => a + b, 0) / both.length, maxAbs: Math.max(...both.map(Math.abs)) }
  : undefined;
const testSet = args.limit ? `the first ${args.limit} test sentences` : 'the test split';
const title = `equal time: ${args.config} on gettext ${args.lang}, ${args.minutes} min each; BLEU: beam ${args.beam}, ${testSet}`;
await plotPng(figure(curves, bleu, { engine: engine.summary.step, peer: peerRun.steps }), resolve(root, args.png));

header(title, engineInfo, peerEnd.info);
const row = (name, stepsReached, c, b) =>
  console.log(
    `${name.padEnd(8)} ${String(stepsReached).padStart(6)} steps  final val loss ${c.at(-1)?.val_loss.toFixed(3) ?? '-'}  BLEU ${b.score.toFixed(2)}  (${b.line})`,
  );
row('engine', engine.summary.step, curves.engine, bleu.engine);
row('PyTorch', peerRun.steps, curves.peer, bleu.peer);
if (agreement)
  console.log(
    `val loss engine − PyTorch at the ${agreement.steps} steps both reached: mean ${agreement.mean.toFixed(3)}, max |·| ${agreement.maxAbs.toFixed(3)}`,
  );
console.log(`plot: ${args.png}`);
writeResult('equal-time', {
  title,
  args: { ...args, evalEvery },
  engine: engineInfo,
  peer: peerEnd.info,
  blas,
  commands: {
    train: `node dist/cli.js ${trainArgs.map(show).join(' ')}`,
    batches: `node dist/cli.js batches --run ${show(runs.engine)} --steps ${steps} --out ${show(batchesFile)}`,
    evaluate: `node dist/cli.js evaluate --run RUN --beam ${args.beam} --backend ${args.backend}${args.limit ? ` --limit ${args.limit}` : ''}`,
  },
  steps: { engine: engine.summary.step, peer: peerRun.steps },
  seconds: { engine: engine.seconds, peer: peerRun.seconds },
  batches: { file: show(batchesFile), training: steps, validation: batches.validation, exhausted: peerRun.exhausted },
  rss: { engine: engine.rss, peer: peerEnd.rss },
  bleu,
  valLoss: curves,
  agreement,
  png: args.png,
});
process.exit(0);

/** Runs the CLI to the end; its stdout. */
function cli(argv) {
  const r = spawnSync(process.execPath, [CLI, ...argv], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`node dist/cli.js ${argv[0]} exited with ${r.status ?? r.signal}`);
  return r;
}

/**
 * `train` as a child process; its progress is echoed. The clock starts when it announces the run
 * (the line after which --max-minutes' timer starts); once it trains, its own mapped BLAS is checked.
 * Resolves with its JSON summary, the start time (ms since 1970), its wall seconds and peak RSS.
 */
function trainEngine(argv) {
  const child = spawn(process.execPath, [CLI, ...argv], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let startMs;
  let checked = false;
  let rss = 0;
  const poll = setInterval(() => {
    const m = /VmHWM:\s+(\d+) kB/.exec(readProc(`/proc/${child.pid}/status`));
    if (m) rss = Number(m[1]) / 1024;
  }, 2000);
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (startMs === undefined && /^new run .*: d_model/.test(line)) startMs = Date.now();
    if (!checked && startMs !== undefined && /^step \d+/.test(line)) {
      checked = true;
      if (optimisedBlas(mappedBlas(child.pid)).length === 0) {
        console.error(
          `bench: the engine's train process maps no optimised BLAS (${mappedBlas(child.pid).join(', ') || 'none'})`,
        );
        child.kill();
        process.exit(2);
      }
    }
    console.log(`  [engine] ${line}`);
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  return new Promise((resolve, reject) =>
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      if (code !== 0) return reject(new Error(`node dist/cli.js train exited with ${code ?? signal}`));
      if (startMs === undefined) return reject(new Error('train never printed its "new run …: d_model" line'));
      const seconds = (Date.now() - startMs) / 1000;
      resolve({ summary: JSON.parse(stdout.trim().split('\n').at(-1)), startMs, seconds, rss });
    }),
  );
}

function readProc(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** [{ step, val_loss, minutes }] from a run's metrics.jsonl; minutes since `startMs`. */
function valCurve(run, startMs) {
  return readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => typeof r.val_loss === 'number')
    .map((r) => ({ step: r.step, val_loss: r.val_loss, minutes: (r.time - startMs) / 60000 }));
}

/** Validation loss by step (left) and by wall time (right), engine and PyTorch on each. */
function figure(c, b, reached) {
  const color = { engine: '#1f77b4', peer: '#d62728' };
  const name = (side) =>
    `${side === 'engine' ? 'engine' : 'PyTorch'}: ${reached[side]} steps, BLEU ${b[side].score.toFixed(2)}`;
  const data = [];
  for (const side of ['engine', 'peer'])
    for (const [axis, x] of [
      ['', 'step'],
      ['2', 'minutes'],
    ])
      data.push({
        x: c[side].map((p) => p[x]),
        y: c[side].map((p) => p.val_loss),
        name: name(side),
        legendgroup: side,
        showlegend: axis === '',
        mode: 'lines+markers',
        line: { color: color[side] },
        xaxis: `x${axis}`,
        yaxis: `y${axis}`,
      });
  return {
    data,
    layout: {
      title: { text: title },
      grid: { rows: 1, columns: 2, pattern: 'independent' },
      xaxis: { title: { text: 'step (same batches on both sides)' } },
      xaxis2: { title: { text: 'wall time (minutes)' } },
      yaxis: { title: { text: 'validation loss (label-smoothed, per token)' } },
      yaxis2: { title: { text: 'validation loss' } },
      legend: { orientation: 'h', x: 0.5, xanchor: 'center', y: -0.18 },
      margin: { t: 60, b: 110 },
    },
  };
}
