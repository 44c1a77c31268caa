// Our own GEMM (src/engine/backend/webgpu/gemm.ts, issue 30 item 2) against tfjs-backend-webgpu's
// matMul (the _FusedMatMul kernel the engine uses by default), in one process on whatever adapter
// Dawn finds: a square product and base-25k's step shapes (forward x·Wᵀ + b, dx = dz·W, dW = dzᵀ·x
// of the FFN's two layers and of the attention projections), each under several tile shapes, the
// sweep that picks the tiles. GFLOP/s = 2·M·N·K / seconds, the median of --reps, each rep --batch
// products dispatched back to back and one float read; one unmeasured rep first (pipelines compile).
// The defaults are base-25k's (400 × 64 tokens, d_model 512, d_ff 2048) and 4096²; --rehearse takes
// small sizes for lavapipe (its figures are a rehearsal's, not a GPU's).
//   node bench/gpu/gemm.mjs [--rehearse] [--tokens 25600] [--dmodel 512] [--dff 2048] [--square 4096]
//                           [--reps 5] [--batch 10]
import console from 'node:console';
import process from 'node:process';
import { loadEngine } from '../lib/build.mjs';
import { engineAdapter, median, now, parseArgs, writeResult } from '../lib/common.mjs';

const args = parseArgs({ rehearse: false, tokens: 25600, dmodel: 512, dff: 2048, square: 4096, reps: 5, batch: 10 });
if (args.rehearse) Object.assign(args, { tokens: 256, dmodel: 64, dff: 256, square: 256, reps: 2, batch: 2 });
const engine = await loadEngine();
const { tf, initBackend, gemm, checkTiles, tfjsMatMul } = engine;
await initBackend('webgpu');
const backend = tf.backend();
const adapter = engineAdapter(engine);

/** The tile shapes tried: [BM, BN, BK, TM, TN] (each within 256 threads and 16 KiB of workgroup memory). */
const TILES = [
  [128, 128, 8, 8, 8],
  [128, 64, 8, 8, 4],
  [64, 128, 8, 4, 8],
  [64, 64, 16, 4, 4],
  [64, 64, 8, 4, 4],
  [128, 128, 4, 8, 8],
  [32, 32, 8, 4, 4],
].map(([bm, bn, bk, tm, tn]) => ({ bm, bn, bk, tm, tn }));
TILES.forEach(checkTiles);
const tileName = (t) => `${t.bm}x${t.bn}x${t.bk}/${t.tm}x${t.tn}`;

/** [name, M, N, K, transposeA, transposeB, bias]: C [M, N] = op(A)·op(B) as linear.ts runs them. */
const { tokens: n, dmodel: d, dff: f, square: s } = args;
const products = (name, out, inp) => [
  [`${name} forward`, n, out, inp, false, true, true], // x [n, in]·Wᵀ + b
  [`${name} dx`, n, inp, out, false, false, false], // dz [n, out]·W [out, in]
  [`${name} dW`, out, inp, n, true, false, false], // dzᵀ·x
];
const SHAPES = [
  [`square ${s}²`, s, s, s, false, false, false],
  ...products('FFN W1', f, d),
  ...products('FFN W2', d, f),
  ...products('attention in-proj (W^Q,W^K,W^V)', 3 * d, d),
  ...products('attention out-proj W^O', d, d),
];

const random = (shape, seed) => tf.randomUniform(shape, -1, 1, 'float32', seed);

/** Seconds a product of `run` takes: --batch dispatched, one float read, the median of --reps. */
async function timeOf(run) {
  const pass = async () => {
    const t0 = now();
    const outs = Array.from({ length: args.batch }, run);
    const last = tf.engine().makeTensorFromTensorInfo(outs.at(-1));
    const probe = tf.slice(tf.reshape(last, [-1]), 0, 1);
    await probe.data();
    const seconds = (now() - t0) / args.batch;
    tf.dispose([probe, last]);
    outs.slice(0, -1).forEach((o) => backend.disposeData(o.dataId));
    return seconds;
  };
  await pass();
  const times = [];
  for (let i = 0; i < args.reps; i++) times.push(await pass());
  return median(times);
}

const gflops = (m, nn, k, seconds) => (2 * m * nn * k) / seconds / 1e9;
const rows = [];
console.log(
  `# GEMM ${args.rehearse ? 'REHEARSAL (small sizes, not a GPU figure) ' : ''}tokens ${n} d_model ${d} d_ff ${f}; ${adapter?.line}`,
);
console.log(`# GFLOP/s, median of ${args.reps} reps of ${args.batch} products; tiles BMxBNxBK/TMxTN`);
console.log(
  ['case'.padEnd(40), 'M×N×K'.padEnd(18), 'tfjs'.padStart(9), ...TILES.map((t) => tileName(t).padStart(14))].join(' '),
);
for (const [name, m, nn, k, ta, tb, withBias] of SHAPES) {
  const a = random(ta ? [k, m] : [m, k], 1);
  const b = random(tb ? [nn, k] : [k, nn], 2);
  const bias = withBias ? random([nn], 3) : undefined;
  const tfjs = gflops(m, nn, k, await timeOf(() => tfjsMatMul(backend, a, b, ta, tb, bias, false)));
  const own = [];
  for (const t of TILES) own.push(gflops(m, nn, k, await timeOf(() => gemm(backend, a, b, ta, tb, bias, false, t))));
  const best = own.indexOf(Math.max(...own));
  rows.push({
    name,
    m,
    n: nn,
    k,
    transposeA: ta,
    transposeB: tb,
    bias: withBias,
    tfjs,
    own,
    best: tileName(TILES[best]),
  });
  const cells = own.map((g, i) => `${g.toFixed(1)}${i === best ? '*' : ' '}`.padStart(14));
  console.log([name.padEnd(40), `${m}×${nn}×${k}`.padEnd(18), tfjs.toFixed(1).padStart(9), ...cells].join(' '));
  tf.dispose([a, b, ...(bias ? [bias] : [])]);
}
console.log('* the best tiles for the shape');
writeResult(`gemm-gpu${args.rehearse ? '-rehearsal' : ''}`, {
  args,
  adapter: adapter?.line,
  tiles: TILES.map(tileName),
  rows,
});
process.exit(0);
