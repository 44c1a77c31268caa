// Training throughput, target tokens per second, of one training step: teacher-forced forward
// with dropout, the label-smoothed loss (ε 0.1), backward, the global gradient norm, Adam
// (0.9, 0.98, 1e-9), all on one fixed batch; the engine's trainStep against bench/torch_model.py.
// Both sides stay warm (the peer is one long-lived process) and run alternating rounds of --steps
// steps each (engine, PyTorch, engine, …; the next round PyTorch first); the ratio is the median of
// the per-round ratios (each round's median step), with its min–max. No ratio is printed unless both
// processes map an optimised BLAS (bench/lib/peer.mjs): that is checked before anything is timed.
//   node bench/train-throughput.mjs [--configs tiny,small,issue] [--rounds 5] [--steps 5] [--warmup 3]
//        [--batch 32] [--len 32] [--vocab 8000] [--backend wasm] [--probe 3] [--unfused]
// Each side runs at its best thread setting (1 or 2 threads, --probe steps each); --unfused: the
// engine without its training kernels (issue 18's "before"), written to train-throughput-unfused.json;
// --name: the result's file name instead (bench/results/<name>.json).
// Configs: bench/lib/trainCase.mjs (issue = small with 2+2 layers; base-25k = base on ~25k tokens).
// On a GPU (issue 15): --backend webgpu --device cuda [--rehearse]; the peer then runs in full fp32
// and, each round, with TF32 as well (its own figure; the ratio is against fp32).
import process from 'node:process';
import { availableParallelism } from 'node:os';
import console from 'node:console';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine, root } from './lib/build.mjs';
import { makeBatch, TRAIN_SHAPES } from './lib/trainCase.mjs';
import {
  engineAdapter,
  header,
  labelled,
  median,
  now,
  optimizerOf,
  parseArgs,
  peakRssMiB,
  roundsTable,
  writeResult,
} from './lib/common.mjs';
import { isGpuComparison, requireFairComparison, startPeer } from './lib/peer.mjs';

const args = parseArgs({
  configs: 'tiny,small,issue',
  rounds: 5,
  steps: 5,
  warmup: 3,
  batch: 32,
  len: 32,
  vocab: 8000,
  backend: '',
  lr: 1e-4,
  probe: 3,
  unfused: false,
  device: 'cpu',
  rehearse: false,
  name: '',
});
const engine = await loadEngine();
const { tf, matMulDetail, initBackend, configFromPreset, Transformer, trainStep, setBlasThreads, useTrainingKernels } =
  engine;
const backend = await initBackend(args.backend || undefined);
const gpu = isGpuComparison(backend, args.device);
// Threads matter on the CPU only: a GPU side runs at one setting.
const THREADS = gpu ? [1] : [...new Set([1, Math.min(2, availableParallelism())])];
const adapter = gpu ? engineAdapter(engine) : null;
// --unfused: the engine without its training kernels (backend/trainingOps.ts), as before issue 18.
if (args.unfused) useTrainingKernels(false);
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}${adapter ? `; adapter ${adapter.line}` : ''}${args.unfused ? '; training kernels off (--unfused)' : ''}${process.env.BENCH_ENGINE_BUNDLE ? `; engine ${process.env.BENCH_ENGINE_BUNDLE}` : ''}`;
const peerArgs = ['--warmup', String(args.warmup), '--lr', String(args.lr), '--device', args.device];
const peer = await startPeer('train-throughput.py', peerArgs);
const fair = requireFairComparison(peer, { backend, matMul: matMulDetail(), adapter }, args);

const dir = join(root, 'out', 'bench');
mkdirSync(dir, { recursive: true });
const shape = (c) => `d${c.d_model} h${c.heads} ff${c.d_ff} ${c.encoder_layers}+${c.decoder_layers}`;
const results = [];
for (const name of args.configs.split(',')) {
  const [preset, overrides, shapeOf = args] = TRAIN_SHAPES[name] ?? [name, {}];
  const config = configFromPreset(preset, { src_vocab: args.vocab, tgt_vocab: args.vocab }, overrides);
  const batch = makeBatch(config, shapeOf.batch, shapeOf.len, 1);
  const file = join(dir, `train-${name}.json`);
  writeFileSync(file, JSON.stringify({ name, config, batch }));

  const model = new Transformer(config, undefined, 1);
  const adam = optimizerOf(engine);
  let seed = 1000;
  let last;
  const step = () => trainStep(model, adam, batch, { lr: args.lr, labelSmoothing: 0.1, seed: seed++ });
  for (let i = 0; i < args.warmup; i++) await step();
  const engineSteps = async (n) => {
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = now();
      last = await step();
      times.push(now() - t0);
    }
    return times;
  };
  // Each side at its best thread setting: OpenBLAS threads for the engine, ATen threads for PyTorch
  // (its products use OpenBLAS's own threads either way), the faster median of --probe steps.
  const threads = { engine: 1, peer: 1 };
  const best = { engine: Infinity, peer: Infinity };
  for (const n of THREADS) {
    const engineOk = setBlasThreads?.(n) ?? false; // absent from an engine before the native layer
    const e = median(await engineSteps(args.probe));
    if (engineOk && e < best.engine) [best.engine, threads.engine] = [e, n];
    const p = median((await peer.request({ case: file, steps: args.probe, threads: n })).times);
    if (p < best.peer) [best.peer, threads.peer] = [p, n];
  }
  setBlasThreads?.(threads.engine);
  if (!gpu)
    console.log(`  ${name}: engine on ${threads.engine} OpenBLAS thread(s), PyTorch on ${threads.peer} ATen thread(s)`);
  const r = {
    name: `${name} (${shape(config)}, ${shapeOf.batch}x${shapeOf.len})`,
    engine: [],
    peer: [],
    ratios: [],
    threads,
    ...(gpu ? { peerTf32: [] } : {}),
  };
  for (let round = 0; round < args.rounds; round++) {
    const got = {};
    for (const side of round % 2 === 0 ? ['engine', 'peer'] : ['peer', 'engine']) {
      if (side === 'peer') {
        const p = await peer.request({ case: file, steps: args.steps, threads: threads.peer });
        got.peer = { s: median(p.times), tokens: p.tokens, loss: p.loss, norm: p.norm };
      } else {
        const times = await engineSteps(args.steps);
        got.engine = { s: median(times), tokens: last.tokens, loss: last.loss, norm: last.gradNorm };
      }
      const g = got[side];
      console.log(
        `  [${side === 'engine' ? 'engine' : 'peer  '}] ${name} round ${round + 1}: ${(g.s * 1e3).toFixed(0)} ms/step, loss ${g.loss.toFixed(4)}, grad norm ${g.norm.toFixed(4)}`,
      );
    }
    if (gpu) {
      const p = await peer.request({ case: file, steps: args.steps, tf32: true });
      r.peerTf32.push(p.tokens / median(p.times));
    }
    r.engine.push(got.engine.tokens / got.engine.s);
    r.peer.push(got.peer.tokens / got.peer.s);
    r.ratios.push(r.engine.at(-1) / r.peer.at(-1));
  }
  adam.dispose();
  model.dispose();
  results.push(r);
}
const peerEnd = await peer.finish();

const title = `training throughput, batch ${args.batch} x ${args.len} tokens, vocab ${args.vocab}; ${args.rounds} interleaved rounds of ${args.steps} steps a side after ${args.warmup} warm-up`;
const label = labelled(args.unfused ? 'train-throughput-unfused' : 'train-throughput', title, gpu, fair);
header(label.title, engineInfo, peerEnd.info);
const rss = { engine: peakRssMiB(), peer: peerEnd.rss };
roundsTable(results, 'target tokens/s', rss);
for (const r of results.filter((x) => x.peerTf32)) {
  const tf32 = median(r.peerTf32);
  console.log(
    `${r.name}: PyTorch with TF32 ${tf32.toFixed(0)} tokens/s (engine/TF32 ${(median(r.engine) / tf32).toFixed(3)})`,
  );
}
if (peerEnd.device_mib) console.log(`PyTorch's peak GPU memory: ${peerEnd.device_mib.toFixed(0)} MiB`);
writeResult(args.name || label.name, {
  title,
  args,
  engine: engineInfo,
  peer: peerEnd.info,
  fair,
  rss,
  results,
});
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
