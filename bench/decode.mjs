// Decoding speed, sentences per second, greedy and beam 4 (length penalty α 0.6, maximum output
// length source length + 50, capped by max_len), over the first N sentences of the gettext German
// test split, with a randomly initialised `small` model (the weights do not change the work per
// token; they change how soon EOS comes, so the PyTorch peer loads the very same weights and the
// two should produce the same outputs). Both decode incrementally (the decoder's self-attention
// keys/values cached, the memory's cross-attention keys/values projected once), in batches of 32
// sentences sorted by length, and never generate BOS or PAD.
//   node bench/decode.mjs [--n 100] [--beams 1,4] [--stops exact,first-k] [--batch 32] [--config small] [--vocab 8000] [--backend wasm]
import process from 'node:process';
import console from 'node:console';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine, root } from './lib/build.mjs';
import { header, now, parseArgs, peakRssMiB, runPeer, table } from './lib/common.mjs';

const args = parseArgs({
  n: 100,
  beams: '1,4',
  stops: 'exact,first-k',
  batch: 32,
  config: 'small',
  vocab: 8000,
  maxLength: 80,
  backend: '',
});
const { tf, matMulDetail, initBackend, configFromPreset, Transformer, translate, prepareData, saveCheckpoint } =
  await loadEngine();
const backend = await initBackend(args.backend || undefined);
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}`;

const dir = join(root, 'out', 'bench');
mkdirSync(dir, { recursive: true });
const vocabPath = join(dir, `gettext-de-bpe${args.vocab}.json`);
if (!existsSync(vocabPath))
  console.log(
    `  [engine] learning a ${args.vocab} BPE vocabulary on the gettext corpus (once; cached at ${vocabPath})`,
  );
const data = prepareData({ kind: 'gettext', lang: 'de' }, vocabPath, {
  vocabSize: args.vocab,
  maxLength: args.maxLength,
});
const src = data.test.slice(0, args.n).map((p) => p.src);
const config = configFromPreset(args.config, { src_vocab: data.vocab.size, tgt_vocab: data.vocab.size });
const model = new Transformer(config, undefined, 1);
const weights = join(dir, `decode-${args.config}.safetensors`);
await saveCheckpoint(model, weights, join(dir, `decode-${args.config}.json`));
console.log(
  `  [engine] ${data.summary}; ${src.length} test sentences, ${src.reduce((n, s) => n + s.length, 0)} source tokens`,
);

// Greedy once; each beam size with each stopping rule (protocol/beamTree.ts EarlyStop).
const runs = args.beams
  .split(',')
  .map(Number)
  .flatMap((k) =>
    k === 1
      ? [{ name: 'greedy', k, stop: 'exact' }]
      : args.stops.split(',').map((stop) => ({ name: `beam ${k} ${stop}`, k, stop })),
  );
const engine = {};
// Warm-up, as the peer's: one full batch greedily, so that the wasm heap and tfjs's buffers have
// grown to the timed batches' size (a 2-sentence warm-up left that to the first timed search,
// greedy's: 2.96 s against 1.6 s for the same batch run again, 2026-11-24).
await translate(model, src.slice(0, args.batch), { beamSize: 1, batchSize: args.batch });
for (const { name, k, stop } of runs) {
  const t0 = now();
  const out = await translate(model, src, { beamSize: k, batchSize: args.batch, earlyStop: stop });
  const dt = now() - t0;
  engine[name] = {
    sps: src.length / dt,
    tokens: out.reduce((n, t) => n + t.tokens.length, 0),
    out: out.map((t) => t.tokens),
  };
  console.log(`  [engine] ${name}: ${dt.toFixed(1)} s, ${engine[name].tokens} output tokens`);
}
const casePath = join(dir, 'decode-case.json');
writeFileSync(
  casePath,
  JSON.stringify({
    config,
    weights,
    src,
    runs,
    batch: args.batch,
    alpha: 0.6,
    maxLenOffset: 50,
    engine: Object.fromEntries(runs.map(({ name }) => [name, engine[name].out])),
  }),
);

const peer = runPeer('decode.py', [casePath]);
header(
  `decoding, ${src.length} gettext de test sentences, random ${args.config} model (vocab ${data.vocab.size}), batches of ${args.batch}`,
  engineInfo,
  peer.info,
);
table(
  runs.map(({ name }) => ({
    name,
    engine: engine[name].sps,
    peer: peer.sps[name],
    unit: `sentences/s (output tokens: engine ${engine[name].tokens}, PyTorch ${peer.tokens[name]}; identical outputs ${peer.same[name]}/${src.length})`,
  })),
  { engine: peakRssMiB(), peer: peer.rss },
);
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
