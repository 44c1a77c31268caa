// Attention's kernels alone (issue 30 item 1), on whatever adapter Dawn finds: one forward and one
// backward pass of self-attention (causal mask) and of cross-attention (padding mask, none padded) at
// a model's shapes, with the row kernels (SELF_ATTENTION, CROSS_ATTENTION, ATTENTION_GRAD) and with
// the tiled ones (TILED_ATTENTION, TILED_ATTENTION_GRAD), alternated in one process. Wall time of
// the kernels and one read of a float, median of --reps after one pass that compiles the pipelines.
// The defaults are base-25k's per-layer shapes (400 × 64 tokens, d 512, 8 heads); on lavapipe use small ones.
//   node bench/gpu/attention.mjs [--batch 400] [--len 64] [--dmodel 512] [--heads 8] [--reps 5]
import console from 'node:console';
import process from 'node:process';
import { loadEngine } from '../lib/build.mjs';
import { engineAdapter, median, now, parseArgs, writeResult } from '../lib/common.mjs';

const args = parseArgs({ batch: 400, len: 64, dmodel: 512, heads: 8, reps: 5 });
const engine = await loadEngine();
const { tf, initBackend, attentionKernels: K } = engine;
await initBackend('webgpu');
const adapter = engineAdapter(engine);
const { batch: B, len: T, dmodel: d, heads } = args;
const random = (shape) => tf.randomUniform(shape, -1, 1, 'float32', 1);
const qkv = random([B, T, 3 * d]);
const q = random([B, T, d]);
const kv = random([B, T, 2 * d]);
const dy = random([B, T, d]);
const band = tf.linalg.bandPart(tf.ones([T, T]), -1, 0); // 1 on and below the diagonal
const causal = tf.reshape(tf.mul(tf.sub(band, 1), 1e9), [1, 1, T, T]);
const padding = tf.zeros([B, 1, 1, T]);
const run = (name, inputs) => tf.engine().runKernel(name, inputs, { heads });

/** One forward and backward pass of both attentions with `tiled` or the row kernels → seconds. */
async function pass(tiled) {
  const t0 = now();
  const outs = [];
  for (const [ins, mask] of [
    [{ q: qkv }, causal],
    [{ q, kv }, padding],
  ]) {
    const inputs = { ...ins, mask };
    if (tiled) {
      const [o, lse] = run(K.TILED_ATTENTION, inputs);
      outs.push(o, lse, ...[run(K.TILED_ATTENTION_GRAD, { dy, ...inputs, o, lse })].flat());
    } else {
      const name = ins.kv ? K.CROSS_ATTENTION : K.SELF_ATTENTION;
      outs.push(run(name, inputs), ...[run(K.ATTENTION_GRAD, { dy, ...inputs })].flat());
    }
  }
  const last = tf.slice(tf.reshape(outs.at(-1), [-1]), 0, 1);
  await last.data();
  const seconds = now() - t0;
  tf.dispose([...outs, last]);
  return seconds;
}

const times = { rows: [], tiled: [] };
await pass(false);
await pass(true);
for (let i = 0; i < args.reps; i++) {
  times.rows.push(await pass(false));
  times.tiled.push(await pass(true));
}
const ms = (xs) => (median(xs) * 1000).toFixed(1);
console.log(
  `# attention forward + backward, self (causal) and cross, B ${B} T ${T} d ${d} heads ${heads}; ${adapter?.line}`,
);
console.log(`row kernels   ${ms(times.rows).padStart(9)} ms (median of ${args.reps})`);
console.log(`tiled kernels ${ms(times.tiled).padStart(9)} ms`);
writeResult('attention-gpu', {
  args,
  adapter: adapter?.line,
  rowsMs: times.rows.map((s) => s * 1000),
  tiledMs: times.tiled.map((s) => s * 1000),
});
process.exit(0);
