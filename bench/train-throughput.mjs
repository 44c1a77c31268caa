// Training throughput, target tokens per second, of one training step: teacher-forced forward
// with dropout, the label-smoothed loss (ε 0.1), backward, the global gradient norm, Adam
// (0.9, 0.98, 1e-9), all on one fixed batch; the engine's trainStep against bench/torch_model.py.
//   node bench/train-throughput.mjs [--configs tiny,small,issue] [--steps 10] [--warmup 3]
//        [--batch 32] [--len 32] [--vocab 8000] [--backend wasm]
// issue = d_model 256, 4 heads, 2+2 layers, d_ff 1024 (the small preset with 2+2 layers).
import process from 'node:process';
import console from 'node:console';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine, root } from './lib/build.mjs';
import { header, median, now, parseArgs, peakRssMiB, runPeer, table } from './lib/common.mjs';

const args = parseArgs({
  configs: 'tiny,small,issue',
  steps: 10,
  warmup: 3,
  batch: 32,
  len: 32,
  vocab: 8000,
  backend: '',
  lr: 1e-4,
});
const { tf, matMulDetail, initBackend, configFromPreset, Transformer, Adam, PAPER_ADAM, trainStep } =
  await loadEngine();
const backend = await initBackend(args.backend || undefined);
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}`;

const SHAPES = { tiny: ['tiny', {}], small: ['small', {}], issue: ['small', { encoder_layers: 2, decoder_layers: 2 }] };

/** A fixed batch of full-length rows (no padding): ids in [3, V) from a small LCG; BOS 1, EOS 2. */
function makeBatch(c, rows, len, seed) {
  let x = seed >>> 0;
  const next = () => 3 + ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % (c.tgt_vocab - 3));
  const src = [];
  const tgtIn = [];
  const tgtOut = [];
  for (let b = 0; b < rows; b++) {
    src.push([...Array.from({ length: len - 1 }, next), c.eos_id]);
    const t = Array.from({ length: len - 1 }, next);
    tgtIn.push([c.bos_id, ...t]);
    tgtOut.push([...t, c.eos_id]);
  }
  return { src, tgtIn, tgtOut };
}

const dir = join(root, 'out', 'bench');
mkdirSync(dir, { recursive: true });
const cases = [];
const engine = {};
for (const name of args.configs.split(',')) {
  const [preset, overrides] = SHAPES[name] ?? [name, {}];
  const config = configFromPreset(preset, { src_vocab: args.vocab, tgt_vocab: args.vocab }, overrides);
  const batch = makeBatch(config, args.batch, args.len, 1);
  const file = join(dir, `train-${name}.json`);
  writeFileSync(file, JSON.stringify({ name, config, batch }));
  cases.push(file);

  const model = new Transformer(config, undefined, 1);
  const adam = new Adam(PAPER_ADAM);
  const times = [];
  let tokens = 0;
  let last;
  for (let i = 0; i < args.warmup + args.steps; i++) {
    const t0 = now();
    const r = await trainStep(model, adam, batch, { lr: args.lr, labelSmoothing: 0.1, seed: 1000 + i });
    if (i >= args.warmup) times.push(now() - t0);
    tokens = r.tokens;
    last = r;
  }
  engine[name] = { tps: tokens / median(times), ms: median(times) * 1e3, config };
  adam.dispose();
  model.dispose();
  console.log(
    `  [engine] ${name}: ${(median(times) * 1e3).toFixed(0)} ms/step, last loss ${last.loss.toFixed(6)}, grad norm ${last.gradNorm.toFixed(6)} (${tf.memory().numTensors} tensors left)`,
  );
}

const peer = runPeer('train-throughput.py', [
  '--steps',
  String(args.steps),
  '--warmup',
  String(args.warmup),
  '--lr',
  String(args.lr),
  ...cases,
]);
header(
  `training throughput, batch ${args.batch} x ${args.len} tokens, vocab ${args.vocab} (median of ${args.steps} steps after ${args.warmup} warm-up)`,
  engineInfo,
  peer.info,
);
const shape = (c) => `d${c.d_model} h${c.heads} ff${c.d_ff} ${c.encoder_layers}+${c.decoder_layers}`;
table(
  Object.entries(engine).map(([name, e]) => ({
    name: `${name} (${shape(e.config)})`,
    engine: e.tps,
    peer: peer.tps[name],
    unit: `target tokens/s (engine ${e.ms.toFixed(0)} ms/step, PyTorch ${peer.ms[name].toFixed(0)} ms/step)`,
  })),
  { engine: peakRssMiB(), peer: peer.rss },
);
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
