// What a training step asks of the GPU, counted rather than timed, so it can be read on any adapter
// (lavapipe here): compute dispatches (tfjs-backend-webgpu's recordAndSubmit), queue submissions and
// reads back to the CPU in one step of trainStep on webgpu, and how many reads came before the
// update was dispatched; for this tree and, with --before, for the engine at an earlier commit
// (bundled from a worktree with this tree's bench/lib/engine.ts and counted in a child process).
//   node bench/gpu/dispatches.mjs [--configs tiny,issue] [--batch 32] [--len 32] [--vocab 8000] [--before COMMIT]
// --child is the child's own flag (it counts the bundle BENCH_ENGINE_BUNDLE names).
import console from 'node:console';
import { execFileSync } from 'node:child_process';
import process from 'node:process';
import { bundleEngineAt, loadEngine } from '../lib/build.mjs';
import { engineAdapter, optimizerOf, parseArgs, writeResult } from '../lib/common.mjs';
import { makeBatch, TRAIN_SHAPES } from '../lib/trainCase.mjs';

const args = parseArgs({ configs: 'tiny,issue', batch: 32, len: 32, vocab: 8000, before: '', child: false });
/**
 * The engine at args.before bundled, or an exit at once: an older commit's sources may lack what this
 * tree's bench/lib/engine.ts imports (ENGINE_BEFORE, 198c3d2, does since the memory benches).
 */
async function bundleBefore() {
  try {
    return await bundleEngineAt(args.before);
  } catch (err) {
    const lines = String(err?.message ?? err).split('\n');
    const first = lines.find((l) => l.includes('ERROR:')) ?? lines[0];
    console.error(
      `dispatches: the engine at ${args.before} does not bundle with this tree's bench/lib/engine.ts (${first}).\n` +
        `Run \`node bench/gpu/dispatches.mjs\` without --before to count this tree alone, or name a later commit.`,
    );
    process.exit(2);
  }
}
/** The engine before's rows, counted in its own process (one tfjs per process), back as JSON. */
async function countBefore() {
  const env = { ...process.env, BENCH_ENGINE_BUNDLE: await bundleBefore() };
  const argv = [process.argv[1], ...process.argv.slice(2), '--child'];
  const out = execFileSync(process.execPath, argv, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').at(-1));
}
if (args.child && !process.env.BENCH_ENGINE_BUNDLE) {
  console.error(
    'dispatches: --child counts the bundle BENCH_ENGINE_BUNDLE names; run without --child to count this tree',
  );
  process.exit(2);
}
const before = args.before && !args.child ? await countBefore() : [];
const engine = await loadEngine();
const { tf, initBackend, configFromPreset, Transformer, trainStep } = engine;
await initBackend('webgpu');
const adapter = engineAdapter(engine);
/** Counts the backend's dispatches, submissions and reads while `run` runs; notes reads before `mark()`. */
async function count(run) {
  const be = tf.backend();
  const tally = { dispatches: 0, submits: 0, reads: 0, readsBeforeUpdate: 0 };
  let updated = false;
  const originals = {};
  const wrap = (name, onCall) => {
    originals[name] = be[name];
    be[name] = function (...a) {
      onCall();
      return originals[name].apply(this, a);
    };
  };
  wrap('recordAndSubmit', () => tally.dispatches++);
  wrap('submitQueue', () => tally.submits++);
  const onRead = () => {
    tally.reads++;
    if (!updated) tally.readsBeforeUpdate++;
  };
  wrap('read', onRead);
  wrap('readSync', onRead);
  try {
    await run(() => (updated = true));
  } finally {
    Object.assign(be, originals);
    for (const k of Object.keys(originals)) delete be[k]; // back to the prototype's methods
  }
  return tally;
}

const rows = [];
for (const name of args.configs.split(',')) {
  const [preset, overrides] = TRAIN_SHAPES[name] ?? [name, {}];
  const config = configFromPreset(preset, { src_vocab: args.vocab, tgt_vocab: args.vocab }, overrides);
  const batch = makeBatch(config, args.batch, args.len);
  {
    const model = new Transformer(config, undefined, 1);
    const adam = optimizerOf(engine);
    const step = (seed) => trainStep(model, adam, batch, { lr: 1e-4, labelSmoothing: 0.1, seed });
    await step(1); // compiles the pipelines
    const tally = await count(async (mark) => {
      const apply = adam.apply.bind(adam);
      adam.apply = (...a) => (apply(...a), mark());
      await step(2);
    });
    adam.dispose();
    model.dispose();
    const engineName = args.child ? `before (${args.before})` : 'this tree';
    rows.push({ config: name, engine: engineName, ...tally });
    console.error(`${name}, ${engineName}: ${JSON.stringify(tally)}`);
  }
}
if (args.child) {
  console.log(JSON.stringify(rows));
  process.exit(0);
}
const table = before.length ? rows.flatMap((r, i) => [before[i], r]) : rows;
console.log(`# one training step on webgpu, batch ${args.batch} x ${args.len}, vocab ${args.vocab}; ${adapter?.line}`);
console.log('config  engine                    dispatches  submits  reads  reads before the update');
for (const r of table)
  console.log(
    `${r.config.padEnd(6)}  ${r.engine.padEnd(24)}  ${String(r.dispatches).padStart(10)}  ${String(r.submits).padStart(7)}  ${String(r.reads).padStart(5)}  ${r.readsBeforeUpdate}`,
  );
writeResult('gpu-dispatches', { args, adapter: adapter?.line, rows: table });
process.exit(0);
