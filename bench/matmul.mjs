// float32 matmul GFLOP/s (2·n³ per product) of the engine's tfjs backend against PyTorch. The peer
// stays warm and each size runs --rounds times a side, interleaved (engine first, then PyTorch first);
// the ratio is the median of the per-round ratios, with its min–max. No ratio unless both processes
// map an optimised BLAS (bench/lib/peer.mjs), checked before anything is timed.
//   node bench/matmul.mjs [--sizes 1024,2048] [--rounds 5] [--reps 5] [--backend wasm]
// On a GPU (issue 15): --backend webgpu --device cuda [--rehearse]. Both sides then run --reps
// products back to back and stop the clock when the GPU is done (the engine reads back one number;
// reading the whole product would time the copy to the CPU); PyTorch in full fp32, and with TF32 too.
import console from 'node:console';
import process from 'node:process';
import { loadEngine } from './lib/build.mjs';
import {
  engineAdapter,
  header,
  labelled,
  median,
  now,
  parseArgs,
  peakRssMiB,
  roundsTable,
  writeResult,
} from './lib/common.mjs';
import { isGpuComparison, requireFairComparison, startPeer } from './lib/peer.mjs';

const args = parseArgs({
  sizes: '1024,2048',
  rounds: 5,
  reps: 5,
  warmup: 2,
  backend: '',
  device: 'cpu',
  rehearse: false,
});
const sizes = args.sizes.split(',').map(Number);
const engine = await loadEngine();
const { tf, matMulDetail, initBackend } = engine;
const backend = await initBackend(args.backend || undefined);
const gpu = isGpuComparison(backend, args.device);
const adapter = gpu ? engineAdapter(engine) : null;
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}${adapter ? `; adapter ${adapter.line}` : ''}`;
const peerArgs = ['--reps', String(args.reps), '--warmup', String(args.warmup), '--device', args.device];
const peer = await startPeer('matmul.py', peerArgs);
const fair = requireFairComparison(peer, { backend, matMul: matMulDetail(), adapter }, args);

/** Seconds per product: on the CPU the median of --reps, each read back as a caller would. */
async function cpuSeconds(a, b) {
  const times = [];
  for (let i = 0; i < args.warmup + args.reps; i++) {
    const t0 = now();
    const c = tf.matMul(a, b);
    await c.data(); // waits for the product (and reads it back, as a caller would)
    c.dispose();
    if (i >= args.warmup) times.push(now() - t0);
  }
  return median(times);
}

/** Seconds per product on a GPU: --reps queued back to back, done when one number of the last reads back. */
async function gpuSeconds(a, b) {
  const run = async (n) => {
    let last;
    for (let i = 0; i < n; i++) {
      last?.dispose();
      last = tf.matMul(a, b);
    }
    const corner = tf.slice(last, [0, 0], [1, 1]);
    await corner.data();
    tf.dispose([corner, last]);
  };
  await run(args.warmup);
  const t0 = now();
  await run(args.reps);
  return (now() - t0) / args.reps;
}

async function engineGflops(n) {
  const a = tf.randomNormal([n, n], 0, 1, 'float32', 1);
  const b = tf.randomNormal([n, n], 0, 1, 'float32', 2);
  const s = await (gpu ? gpuSeconds : cpuSeconds)(a, b);
  tf.dispose([a, b]);
  return (2 * n ** 3) / s / 1e9;
}

const rows = [];
for (const n of sizes) {
  const r = { name: `${n}x${n} · ${n}x${n}`, engine: [], peer: [], ratios: [], ...(gpu ? { peerTf32: [] } : {}) };
  for (let round = 0; round < args.rounds; round++) {
    for (const side of round % 2 === 0 ? ['engine', 'peer'] : ['peer', 'engine'])
      r[side].push(side === 'engine' ? await engineGflops(n) : (await peer.request({ n })).gflops);
    if (gpu) r.peerTf32.push((await peer.request({ n, tf32: true })).gflops);
    r.ratios.push(r.engine.at(-1) / r.peer.at(-1));
  }
  rows.push(r);
}
const peerEnd = await peer.finish();
const title = `matmul, ${args.rounds} interleaved rounds a size (each the median of ${args.reps} after ${args.warmup} warm-up)`;
const label = labelled('matmul', title, gpu, fair);
header(label.title, engineInfo, peerEnd.info);
const rss = { engine: peakRssMiB(), peer: peerEnd.rss };
roundsTable(rows, 'GFLOP/s', rss);
const peak = peerEnd.info.fp32_peak_tflops;
for (const r of rows.filter((x) => x.peerTf32)) {
  const [e, tf32] = [median(r.engine), median(r.peerTf32)];
  const ofPeak = peak ? `; engine ${((100 * e) / (peak * 1e3)).toFixed(1)}% of the fp32 peak` : '';
  console.log(
    `${r.name}: PyTorch with TF32 ${tf32.toFixed(0)} GFLOP/s (engine/TF32 ${(e / tf32).toFixed(3)})${ofPeak}`,
  );
}
writeResult(label.name, {
  title,
  args,
  engine: engineInfo,
  peer: peerEnd.info,
  fair,
  rss,
  results: rows,
});
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
