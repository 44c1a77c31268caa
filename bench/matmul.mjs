// float32 matmul GFLOP/s (2·n³ per product) of the engine's tfjs backend against PyTorch. The peer
// stays warm and each size runs --rounds times a side, interleaved (engine first, then PyTorch first);
// the ratio is the median of the per-round ratios, with its min–max. No ratio unless both processes
// map an optimised BLAS (bench/lib/peer.mjs), checked before anything is timed.
//   node bench/matmul.mjs [--sizes 1024,2048] [--rounds 5] [--reps 5] [--backend wasm]
import process from 'node:process';
import { loadEngine } from './lib/build.mjs';
import { header, median, now, parseArgs, peakRssMiB, roundsTable, writeResult } from './lib/common.mjs';
import { requireFairBlas, startPeer } from './lib/peer.mjs';

const args = parseArgs({ sizes: '1024,2048', rounds: 5, reps: 5, warmup: 2, backend: '' });
const sizes = args.sizes.split(',').map(Number);
const { tf, matMulDetail, initBackend } = await loadEngine();
const backend = await initBackend(args.backend || undefined);
const engineInfo = `${tf.version_core} backend ${backend}; matMul ${matMulDetail()}`;
const peer = await startPeer('matmul.py', ['--reps', String(args.reps), '--warmup', String(args.warmup)]);
const blas = requireFairBlas(peer, { backend, matMul: matMulDetail() });

function engineGflops(n) {
  return async () => {
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
    tf.dispose([a, b]);
    return (2 * n ** 3) / median(times) / 1e9;
  };
}

const rows = [];
for (const n of sizes) {
  const r = { name: `${n}x${n} · ${n}x${n}`, engine: [], peer: [], ratios: [] };
  for (let round = 0; round < args.rounds; round++) {
    for (const side of round % 2 === 0 ? ['engine', 'peer'] : ['peer', 'engine'])
      r[side].push(side === 'engine' ? await engineGflops(n)() : (await peer.request({ n })).gflops);
    r.ratios.push(r.engine.at(-1) / r.peer.at(-1));
  }
  rows.push(r);
}
const peerEnd = await peer.finish();
const title = `matmul, ${args.rounds} interleaved rounds a size (each the median of ${args.reps} after ${args.warmup} warm-up)`;
header(title, engineInfo, peerEnd.info);
const rss = { engine: peakRssMiB(), peer: peerEnd.rss };
roundsTable(rows, 'GFLOP/s', rss);
writeResult('matmul', { title, args, engine: engineInfo, peer: peerEnd.info, blas, rss, results: rows });
// The wasm-threads prototype can leave a MessagePort that keeps Node alive (see README): exit.
process.exit(0);
