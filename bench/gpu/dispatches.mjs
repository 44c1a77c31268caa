// What a training step asks of the GPU, counted rather than timed, so it can be read on any adapter
// (lavapipe here): compute dispatches (tfjs-backend-webgpu's recordAndSubmit), queue submissions and
// reads back to the CPU in one step of trainStep on webgpu, and how many reads came before the
// update was dispatched; for this tree and for the engine before its webgpu kernels (ENGINE_BEFORE
// in bench/lib/build.mjs, bundled from a worktree and counted in a child process).
//   node bench/gpu/dispatches.mjs [--configs tiny,issue] [--batch 32] [--len 32] [--vocab 8000]
import console from 'node:console';
import { execFileSync } from 'node:child_process';
import process from 'node:process';
import { bundleEngineAt, ENGINE_BEFORE, loadEngine } from '../lib/build.mjs';
import { engineAdapter, parseArgs, writeResult } from '../lib/common.mjs';
import { makeBatch, TRAIN_SHAPES } from '../lib/trainCase.mjs';

const args = parseArgs({ configs: 'tiny,issue', batch: 32, len: 32, vocab: 8000, child: false });
/** The engine before's rows, counted in its own process (one tfjs per process), back as JSON. */
async function countBefore() {
  const env = { ...process.env, BENCH_ENGINE_BUNDLE: await bundleEngineAt(ENGINE_BEFORE) };
  const argv = [...process.argv.slice(1), '--child'];
  const out = execFileSync(process.execPath, argv, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').at(-1));
}
const before = args.child ? [] : await countBefore();
const engine = await loadEngine();
const { tf, initBackend, configFromPreset, Transformer, Adam, PAPER_ADAM, trainStep } = engine;
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
    const adam = new Adam(PAPER_ADAM);
    const step = (seed) => trainStep(model, adam, batch, { lr: 1e-4, labelSmoothing: 0.1, seed });
    await step(1); // compiles the pipelines
    const tally = await count(async (mark) => {
      const apply = adam.apply.bind(adam);
      adam.apply = (...a) => (apply(...a), mark());
      await step(2);
    });
    adam.dispose();
    model.dispose();
    const engineName = args.child ? `before (${ENGINE_BEFORE})` : 'this tree';
    rows.push({ config: name, engine: engineName, ...tally });
    console.error(`${name}, ${engineName}: ${JSON.stringify(tally)}`);
  }
}
if (args.child) {
  console.log(JSON.stringify(rows));
  process.exit(0);
}
const table = rows.flatMap((r, i) => [before[i], r]);
console.log(`# one training step on webgpu, batch ${args.batch} x ${args.len}, vocab ${args.vocab}; ${adapter?.line}`);
console.log('config  engine                    dispatches  submits  reads  reads before the update');
for (const r of table)
  console.log(
    `${r.config.padEnd(6)}  ${r.engine.padEnd(24)}  ${String(r.dispatches).padStart(10)}  ${String(r.submits).padStart(7)}  ${String(r.reads).padStart(5)}  ${r.readsBeforeUpdate}`,
  );
writeResult('gpu-dispatches', { args, adapter: adapter?.line, rows: table });
process.exit(0);
