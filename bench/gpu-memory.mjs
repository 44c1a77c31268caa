// GPU memory of a training step on webgpu (issue 28), counted as the adapter allocates it
// (backend/webgpu/allocations.ts: every createBuffer added, every destroy taken off, tfjs's pool
// included), against the estimate (run/gpuMemory.ts WEBGPU_COUNTS); and the pool's trim
// (backend/webgpu/bufferPool.ts) before → after, on a fixed batch and on batches whose shape
// changes each step. Each case runs in a process of its own (the pool is chosen as the backend
// loads). Not part of npm test; on lavapipe the base case takes minutes.
//
//   node bench/gpu-memory.mjs [--cases tiny,issue,base] [--steps 2] [--no-pool]
//
// --no-pool: the first table only. BENCH_ENGINE_BUNDLE=<an earlier commit's out/bench/engine.js>
// measures that commit's engine (bench/lib/build.mjs), for a before → after in one sitting.
import { spawnSync } from 'node:child_process';
import console from 'node:console';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import process from 'node:process';
import { loadEngine } from './lib/build.mjs';
import { optimizerOf } from './lib/common.mjs';
import { makeBatch, TRAIN_SHAPES } from './lib/trainCase.mjs';

/**
 * name → [rows, len, vocab]: small batches that take a minute or two a case on lavapipe; base-16x64
 * and base-64x64 (some 3 and 12 minutes) check the growth per batch token that the projection to
 * 400 × 64 rests on; tiny-v8k, where the logits dominate, checks the loss's copies of them.
 */
const CASES = {
  tiny: [32, 32, 1000],
  issue: [16, 32, 8000],
  base: [8, 32, 8000],
  'base-16x64': [16, 64, 8000],
  'base-64x64': [64, 64, 8000],
  // the logits [B·T, V] dominate (62.5 MiB a copy), as at the paper's batch (2.4 GiB a copy)
  'tiny-v8k': [32, 32, 8000],
  // the paper's batch (the GPU bench's base-25k), and big on it: on a GPU only (`run.sh memory`),
  // as their logits pass what lavapipe binds (128 MiB)
  'base-400x64': [400, 64, 8000],
  'big-400x64': [400, 64, 8000],
};
const POOL_ENV = 'ATTENTION_DEBUGGER_GPU_POOL';
const mib = (b) => (b / 2 ** 20).toFixed(1);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

async function child(name, steps, vary) {
  const E = await loadEngine();
  await E.initBackend('webgpu');
  const [rows, len, vocab] = CASES[name];
  const [preset, overrides] = TRAIN_SHAPES[name.split('-')[0]];
  const config = E.configFromPreset(preset, { src_vocab: vocab, tgt_vocab: vocab }, overrides);
  const model = new E.Transformer(config, undefined, 1);
  const adam = optimizerOf(E);
  const times = [];
  for (let s = 0; s < steps; s++) {
    const batch = makeBatch(config, rows, vary ? len - 4 * (s % 4) : len, s + 1);
    const t0 = performance.now();
    await E.trainStep(model, adam, batch, { lr: 1e-4, labelSmoothing: 0.1, seed: s });
    times.push(performance.now() - t0);
  }
  const a = E.gpuAllocations();
  const e = E.trainingMemory(config, 2 * rows * len, 1, E.WEBGPU_COUNTS);
  process.stdout.write(
    JSON.stringify({ peak: a.peak, after: a.current, created: a.created, times, estimate: e.bytes, e }) + '\n',
  );
  process.exit(0);
}

function run(name, steps, pool, vary) {
  const self = fileURLToPath(import.meta.url);
  const argv = [self, '--child', name, '--steps', String(steps), ...(vary ? ['--vary'] : [])];
  const env = { ...process.env, [POOL_ENV]: pool };
  const r = spawnSync(process.execPath, argv, { env, encoding: 'utf8', maxBuffer: 1 << 26 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`${name} (${pool}) failed: ${r.stderr.split('\n').slice(-5).join('\n')}`);
  return JSON.parse(line);
}

if (process.argv.includes('--child')) {
  await child(arg('child'), Number(arg('steps', '2')), process.argv.includes('--vary'));
} else {
  const steps = Number(arg('steps', '2'));
  const names = arg('cases', 'tiny,issue,base').split(',');
  console.log(`GPU memory of ${steps} training steps on webgpu: allocated peak (wrapper) against the estimate`);
  console.log(
    '| case | batch (rows × len, V) | estimate MiB | peak MiB | estimate / peak | per token KiB (estimate) |',
  );
  console.log('|---|---|--:|--:|--:|--:|');
  for (const name of names) {
    const [rows, len, vocab] = CASES[name];
    const r = run(name, steps, 'trimmed', false);
    console.log(
      `| ${name} | ${rows} × ${len}, ${vocab} | ${mib(r.estimate)} | ${mib(r.peak)} | ${(r.estimate / r.peak).toFixed(2)} | ` +
        `${(r.e.perBatchToken / 1024).toFixed(1)} |`,
    );
  }
  if (process.argv.includes('--no-pool')) process.exit(0);
  const varied = Math.max(steps, 6);
  console.log(
    `\nThe pool before (tfjs's own) → after (trimmed each step), ${varied} steps, lengths len, len−4, len−8, len−12, …`,
  );
  console.log(
    '| case | peak MiB before → after | held after the last step MiB before → after | ms a step (mean of the last 3) before → after |',
  );
  console.log('|---|--:|--:|--:|');
  for (const name of names.filter((n) => n !== 'base')) {
    const [b, a] = ['tfjs', 'trimmed'].map((pool) => run(name, varied, pool, true));
    const ms = (r) => (r.times.slice(-3).reduce((x, y) => x + y, 0) / 3).toFixed(0);
    console.log(
      `| ${name} | ${mib(b.peak)} → ${mib(a.peak)} | ${mib(b.after)} → ${mib(a.after)} | ${ms(b)} → ${ms(a)} |`,
    );
  }
}
