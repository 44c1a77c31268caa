// How long the debugger's Step Back takes (issue 31's goal: ≤ 2 s on 2 cores with a checkpoint every
// 50 steps of the tiny reverse run), beside what the same steps took to train the first time. Each
// round, a fresh debug adapter (dist/debugAdapter.js, its own engine) launches the tiny reverse run
// (a checkpoint every --every steps, snapshots and telemetry every 25, no evaluation) with a
// breakpoint at its last step --steps, and Step Back asks for the step before: the worst case, a
// replay of every step from the checkpoint before it (--every − 1 steps), in the engine that has
// just trained. Then a second fresh adapter attaches to the finished run and steps back the same
// way, in an engine that has trained nothing (its data not prepared, its kernels cold). The figures
// are the times from the stepBack request to the stop, medians over the rounds; the peer is the wall
// time the run's own metrics.jsonl logs for the same steps (the engine's clock, from the
// checkpoint's step to the step shown).
//   node bench/step-back.mjs [--steps 100] [--every 50] [--rounds 3]
import console from 'node:console';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import { root } from './lib/build.mjs';
import { machine, median, parseArgs, writeResult } from './lib/common.mjs';

const args = parseArgs({ steps: 100, every: 50, rounds: 3 });
const dir = mkdtempSync(join(tmpdir(), 'step-back-'));
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
const target = args.steps - 1;
const from = Math.floor((target - 1) / args.every) * args.every; // the newest checkpoint before it

/** The tiny preset's model fields and training settings as a config file, from one CLI step's run. */
function tinyConfig() {
  const probe = join(dir, 'probe');
  const cli = join(root, 'bin', 'attention-debugger');
  const r = spawnSync(
    process.execPath,
    [cli, 'train', '--task', 'reverse', '--config', 'tiny', '--backend', 'wasm', '--out', probe, '--steps', '1'],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`train failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const run = JSON.parse(readFileSync(join(probe, 'config.json'), 'utf8'));
  const keep = ['d_model', 'heads', 'd_ff', 'encoder_layers', 'decoder_layers', 'dropout', 'norm_first'];
  const model = Object.fromEntries(
    [...keep, 'final_norm', 'positional', 'max_len', 'share_embeddings'].map((k) => [k, run[k]]),
  );
  const training = { ...run.training, steps: args.steps, checkpoint_every: args.every, eval_every: 100_000 };
  const file = join(dir, 'tiny.json');
  writeFileSync(file, JSON.stringify({ ...model, training: { ...training, snapshot_every: 25 } }));
  return file;
}

/** A debug adapter, initialized, with `breakpoints` set and configured. */
async function adapter(breakpoints) {
  const dc = new DebugClient(process.execPath, join(root, 'dist', 'debugAdapter.js'), 'attention-debugger');
  dc.defaultTimeout = 300_000;
  await dc.start();
  const initialized = dc.waitForEvent('initialized');
  await dc.initializeRequest({ adapterID: 'attention-debugger', pathFormat: 'path' });
  await initialized;
  await dc.setFunctionBreakpointsRequest({ breakpoints });
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  await dc.configurationDoneRequest();
  return dc;
}

/** Seconds from Step Back at the run's last step to the stop at the step before. */
async function stepBack(dc) {
  const started = performance.now();
  const [stop] = await Promise.all([dc.waitForEvent('stopped'), dc.stepBackRequest({ threadId: 1 })]);
  const seconds = (performance.now() - started) / 1000;
  const said = stop.body.description ?? '';
  if (!said.startsWith(`step ${target} (replayed from checkpoint ${from}`)) throw new Error(`stopped at "${said}"`);
  await dc.disconnectRequest({}).catch(() => undefined);
  await dc.stop();
  return seconds;
}

/** One round: launched and stepped back, then attached and stepped back; and the run's own time. */
async function round(config, r) {
  const runDir = join(dir, `run-${r}`);
  const launched = await adapter([{ name: `step ${args.steps}` }]);
  const first = launched.waitForEvent('stopped');
  // A budget past the breakpoint: at its budget's end a launched run ends, it does not pause.
  const budget = args.steps + 10;
  await launched.launchRequest({ runDir, config, task: 'reverse', steps: budget, backend: 'wasm' });
  await first;
  const warm = await stepBack(launched);
  const attached = await adapter([]);
  const stopped = attached.waitForEvent('stopped');
  await attached.attachRequest({ runDir });
  await stopped;
  const cold = await stepBack(attached);
  const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map(JSON.parse);
  const at = (step) => rows.filter((m) => m.step === step).at(-1).time;
  return { warm, cold, trained: (at(target) - at(from)) / 1000 };
}

const m = machine();
console.log(
  `step back: tiny reverse, a checkpoint every ${args.every} steps, Step Back from ${args.steps} to ${target} ` +
    `(${target - from} steps replayed from checkpoint ${from}) · ${m.nproc} CPUs, load ${m.load}`,
);
const config = tinyConfig();
const rounds = [];
for (let r = 0; r < args.rounds; r++) {
  rounds.push(await round(config, r));
  const x = rounds.at(-1);
  console.log(
    `round ${r + 1}: Step Back ${x.warm.toFixed(2)} s launched · ${x.cold.toFixed(2)} s attached · ` +
      `the same steps trained ${x.trained.toFixed(2)} s`,
  );
}
const med = (k) => median(rounds.map((x) => x[k]));
console.log(
  `median: Step Back ${med('warm').toFixed(2)} s in the engine that trained the run, ` +
    `${med('cold').toFixed(2)} s in a fresh one (attach) · the same ${target - from} steps trained the ` +
    `first time ${med('trained').toFixed(2)} s`,
);
writeResult('step-back', { rounds, from, target, ...args });
