// Where a training step's time goes on the GPU (issue 30 item 6), on whatever adapter Dawn finds. Per
// config: one step to compile the pipelines, one timed step (its wall time, unprofiled), then one
// step under tf.profile, which times each kernel with the adapter's timestamp queries (where it has
// none, tfjs reports 0 and this says so). Printed per config: the step's wall time against its summed
// kernel time (the rest is the host: recording, bind groups, uniforms, tfjs's bookkeeping); the
// kernels summed by name (time, calls, share, the two costliest input shapes); the peak of the GPU
// buffers the allocation wrapper counts (src/engine/backend/webgpu/allocations.ts: every
// createBuffer less every destroy, tfjs's pool included) and tf.profile's own peakBytes.
// bench/gpu/run.sh profile runs it and keeps its log; bench/results/gpu-profile.json holds the rows.
//   node bench/gpu/profile.mjs [--configs issue,base,base-25k] [--batch 32] [--len 32] [--vocab 8000] [--top 25]
import console from 'node:console';
import process from 'node:process';
import { loadEngine } from '../lib/build.mjs';
import { engineAdapter, now, optimizerOf, parseArgs, writeResult } from '../lib/common.mjs';
import { makeBatch, TRAIN_SHAPES } from '../lib/trainCase.mjs';

const args = parseArgs({ configs: 'issue,base,base-25k', batch: 32, len: 32, vocab: 8000, top: 25 });
const engine = await loadEngine();
const { tf, initBackend, configFromPreset, Transformer, trainStep } = engine;
await initBackend('webgpu');
const adapter = engineAdapter(engine);
const timestamps = tf.backend().supportTimestampQuery === true;
console.log(`# one training step under tf.profile on webgpu; ${adapter?.line ?? 'no adapter'}`);
console.log(
  `timestamp-query: ${timestamps}${timestamps ? '' : ' (kernel times below are 0: the adapter cannot time them)'}`,
);

const ms = (x) => (typeof x === 'number' ? x : 0); // kernelTimeMs is { error } where the adapter cannot time
const shapeOf = (k) => JSON.stringify(k.inputShapes ?? []).slice(0, 60);

/** Kernels summed by name: [{ name, ms, calls, shapes: the two costliest input shapes with their ms }]. */
function byKernel(kernels) {
  const groups = new Map();
  for (const k of kernels) {
    const g = groups.get(k.name) ?? { name: k.name, ms: 0, calls: 0, shapes: new Map() };
    g.ms += ms(k.kernelTimeMs);
    g.calls++;
    g.shapes.set(shapeOf(k), (g.shapes.get(shapeOf(k)) ?? 0) + ms(k.kernelTimeMs));
    groups.set(k.name, g);
  }
  return [...groups.values()]
    .map((g) => ({ ...g, shapes: [...g.shapes].sort((a, b) => b[1] - a[1]).slice(0, 2) }))
    .sort((a, b) => b.ms - a.ms || b.calls - a.calls);
}

const rows = [];
for (const name of args.configs.split(',')) {
  const [preset, overrides, shape] = TRAIN_SHAPES[name] ?? [name, {}];
  const { batch: B, len: T } = shape ?? { batch: args.batch, len: args.len };
  const config = configFromPreset(preset, { src_vocab: args.vocab, tgt_vocab: args.vocab }, overrides);
  const batch = makeBatch(config, B, T);
  const model = new Transformer(config, undefined, 1);
  const adam = optimizerOf(engine);
  const step = (seed) => trainStep(model, adam, batch, { lr: 1e-4, labelSmoothing: 0.1, seed });
  try {
    await step(1); // compiles the pipelines
    engine.resetGpuAllocationPeak();
    const t0 = now();
    await step(2);
    const wallMs = (now() - t0) * 1000;
    const info = await tf.profile(() => step(3));
    // A tf.customGrad (backend/tiledAttention.ts) is profiled as a scope around the kernels it runs,
    // which are profiled too: only registered kernels are summed, so that none is counted twice.
    const kernels = byKernel(info.kernels.filter((k) => tf.getKernel(k.name, tf.getBackend()) !== undefined));
    const kernelMs = kernels.reduce((s, k) => s + k.ms, 0);
    const peak = engine.gpuAllocations()?.peak ?? 0;
    console.log('');
    console.log(
      `## ${name} ${B}x${T}: step wall ${wallMs.toFixed(1)} ms (unprofiled); profiled kernels ${info.kernels.length}, ` +
        `summed kernel time ${kernelMs.toFixed(1)} ms (${((100 * kernelMs) / wallMs).toFixed(0)}% of the wall); ` +
        `GPU buffers at peak ${(peak / 2 ** 20).toFixed(1)} MiB (allocation wrapper), tf.profile peakBytes ${(info.peakBytes / 2 ** 20).toFixed(1)} MiB`,
    );
    for (const k of kernels.slice(0, args.top)) {
      const share = kernelMs > 0 ? ((100 * k.ms) / kernelMs).toFixed(1) : '0.0';
      const shapes = k.shapes.map(([s, t]) => `${s} ${t.toFixed(1)}`).join(' | ');
      console.log(
        `${k.name.padEnd(38)} ${k.ms.toFixed(1).padStart(7)} ms ${String(k.calls).padStart(5)} calls ${share.padStart(5)}%   ${shapes}`,
      );
    }
    rows.push({
      config: name,
      batch: [B, T],
      wallMs,
      kernelMs,
      kernels: info.kernels.length,
      peakBytes: peak,
      profilePeakBytes: info.peakBytes,
      byKernel: kernels.map((k) => ({ name: k.name, ms: k.ms, calls: k.calls, shapes: k.shapes })),
    });
  } catch (err) {
    // A config the GPU cannot hold (or any GPU error) is a row that says so; the others still run.
    console.log(`\n## ${name} ${B}x${T}: failed: ${err.message.split('\n')[0]}`);
    rows.push({ config: name, batch: [B, T], error: err.message });
  } finally {
    adam.dispose();
    model.dispose();
  }
}
writeResult('gpu-profile', { args, adapter: adapter?.line, timestamps, rows });
process.exit(0);
