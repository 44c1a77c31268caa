// Decoding speed, sentences per second, greedy and beam 4 (length penalty α 0.6, maximum output
// length source length + 50, capped by max_len), over the first N sentences of the gettext German
// test split, with a randomly initialised `small` model (the weights do not change the work per
// token; they change how soon EOS comes, so the PyTorch peer loads the very same weights and the
// two should produce the same outputs). Both decode incrementally (the decoder's self-attention
// keys/values cached, the memory's cross-attention keys/values projected once), in batches of 32
// sentences sorted by length, and never generate BOS or PAD.
// Each case runs --rounds times on each side, interleaved (engine, peer; the next round peer first),
// with the peer kept alive as one process reading commands (bench/lib/peer.mjs), so that both see the
// same conditions on a shared machine; the table gives each side's median sentences/s and min–max, and
// the median of the per-round ratios with its min–max; no ratio unless both sides map an optimised
// BLAS. Every round's outputs are compared (identical outputs N/N: the worst round).
//   node bench/decode.mjs [--n 100] [--rounds 3] [--beams 1,4] [--stops exact,first-k] [--batch 32] [--config small] [--vocab 8000] [--backend wasm]
import process from 'node:process';
import console from 'node:console';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine, root } from './lib/build.mjs';
import { header, now, parseArgs, peakRssMiB, roundsTable, writeResult } from './lib/common.mjs';
import { requireFairBlas, startPeer } from './lib/peer.mjs';

const args = parseArgs({
  n: 100,
  rounds: 3,
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
// Warm-up, as the peer's: one full batch greedily, so that the wasm heap and tfjs's buffers have
// grown to the timed batches' size (a 2-sentence warm-up left that to the first timed search,
// greedy's: 2.96 s against 1.6 s for the same batch run again, 2026-11-24).
await translate(model, src.slice(0, args.batch), { beamSize: 1, batchSize: args.batch });
const casePath = join(dir, 'decode-case.json');
writeFileSync(
  casePath,
  JSON.stringify({ config, weights, src, runs, batch: args.batch, alpha: 0.6, maxLenOffset: 50 }),
);

const peer = await startPeer('decode.py', [casePath]); // { started }: torch imported, its BLAS mapped
const blas = requireFairBlas(peer, { backend, matMul: matMulDetail() });
await peer.next(); // { ready }: the peer's model loaded and warmed up

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const results = Object.fromEntries(
  runs.map(({ name }) => [name, { engine: [], peer: [], tokens: {}, identical: Infinity, out: {} }]),
);
async function runEngine({ k, stop }) {
  const t0 = now();
  const out = await translate(model, src, { beamSize: k, batchSize: args.batch, earlyStop: stop });
  const dt = now() - t0;
  return {
    seconds: dt,
    sps: src.length / dt,
    tokens: out.reduce((n, t) => n + t.tokens.length, 0),
    out: out.map((t) => [...t.tokens]),
  };
}
for (let round = 0; round < args.rounds; round++) {
  for (const run of runs) {
    const r = results[run.name];
    const sides = round % 2 === 0 ? ['engine', 'peer'] : ['peer', 'engine'];
    for (const side of sides) {
      const got = side === 'engine' ? await runEngine(run) : await peer.request({ run: run.name });
      r[side].push(got.sps);
      r.tokens[side] = got.tokens;
      // Each side must repeat itself across rounds (decoding is deterministic).
      if (r.out[side] && !got.out.every((t, i) => same(t, r.out[side][i])))
        throw new Error(`${side} ${run.name}: round ${round + 1}'s outputs differ from round 1's`);
      r.out[side] ??= got.out;
      const tag = side === 'engine' ? 'engine' : 'peer  ';
      console.log(
        `  [${tag}] round ${round + 1} ${run.name}: ${got.seconds.toFixed(2)} s, ${got.tokens} output tokens`,
      );
    }
    r.identical = Math.min(r.identical, r.out.engine.filter((t, i) => same(t, r.out.peer[i])).length);
  }
}
const peerEnd = await peer.finish();

const title = `decoding, ${src.length} gettext de test sentences, random ${args.config} model (vocab ${data.vocab.size}), batches of ${args.batch}; ${args.rounds} rounds interleaved, medians`;
header(title, engineInfo, peerEnd.info);
const rows = runs.map(({ name }) => {
  const r = results[name];
  return { name, engine: r.engine, peer: r.peer, ratios: r.engine.map((e, i) => e / r.peer[i]) };
});
const rss = { engine: peakRssMiB(), peer: peerEnd.rss };
roundsTable(rows, 'sentences/s', rss);
for (const { name } of runs) {
  const r = results[name];
  console.log(
    `${name}: output tokens engine ${r.tokens.engine}, PyTorch ${r.tokens.peer}; identical outputs ${r.identical}/${src.length} (worst round)`,
  );
}
const identical = Object.fromEntries(runs.map(({ name }) => [name, results[name].identical]));
writeResult('decode', { title, args, engine: engineInfo, peer: peerEnd.info, blas, rss, results: rows, identical });
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
