// float32 matmul GFLOP/s (2·n³ per product) of the engine's tfjs backend against PyTorch.
//   node bench/matmul.mjs [--sizes 1024,2048] [--reps 5] [--backend wasm]
import process from 'node:process';
import { loadEngine } from './lib/build.mjs';
import { header, median, now, parseArgs, peakRssMiB, runPeer, table } from './lib/common.mjs';

const args = parseArgs({ sizes: '1024,2048', reps: 5, warmup: 2, backend: '' });
const sizes = args.sizes.split(',').map(Number);
const { tf, matMulDetail, initBackend } = await loadEngine();
const backend = await initBackend(args.backend || undefined);
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}`;

const engine = {};
for (const n of sizes) {
  const a = tf.randomNormal([n, n], 0, 1, 'float32', 1);
  const b = tf.randomNormal([n, n], 0, 1, 'float32', 2);
  const times = [];
  for (let i = 0; i < args.warmup + args.reps; i++) {
    const t0 = now();
    const c = tf.matMul(a, b);
    await c.data(); // waits for the product (and reads it back, as a caller would)
    c.dispose();
    if (i >= args.warmup) times.push(now() - t0);
  }
  engine[n] = (2 * n ** 3) / median(times) / 1e9;
  tf.dispose([a, b]);
}

const peer = runPeer('matmul.py', [
  '--sizes',
  args.sizes,
  '--reps',
  String(args.reps),
  '--warmup',
  String(args.warmup),
]);
header(`matmul (median of ${args.reps} after ${args.warmup} warm-up)`, engineInfo, peer.info);
table(
  sizes.map((n) => ({ name: `${n}x${n} · ${n}x${n}`, engine: engine[n], peer: peer.gflops[n], unit: 'GFLOP/s' })),
  { engine: peakRssMiB(), peer: peer.rss },
);
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
