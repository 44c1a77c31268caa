/**
 * The divergence check (issue 26 item 3): hand-made loss sequences that diverge and ones that do
 * not, the README's healthy reverse run's real curve (fixtures/reverse-tiny-curve.json), and a micro
 * run at LR factor 1000 that must end `diverged` in status.json.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { taskSpec } from '../../src/engine/data/dataset';
import { createRun } from '../../src/engine/run/setup';
import { HealthMonitor } from '../../src/engine/telemetry/checks';
import { DIVERGENCE, DivergenceWatch } from '../../src/engine/telemetry/divergence';
import { startTrainer } from '../../src/engine/train/start';
import { microConfig, scratch } from '../train/helpers';
import { REPO } from '../helpers';
import { RUN_STATES } from '../../src/protocol/runFolder';

before(async () => {
  await initBackend('wasm');
});

/** Feeds losses from step 1; the steps at which the check fired. */
function firedOn(losses: number[], vals: [number, number][] = []): number[] {
  const watch = new DivergenceWatch();
  const out: number[] = [];
  losses.forEach((loss, i) => {
    out.push(...watch.onLoss(i + 1, loss).map((f) => f.step));
    for (const [step, v] of vals) if (step === i + 1) out.push(...watch.onValidation(step, v).map((f) => f.step));
  });
  return out;
}

/** A falling curve from 2.6 with ±15% noise (a fixed pattern, not random). */
const healthy = (n: number): number[] =>
  Array.from({ length: n }, (_, i) => (2.6 * Math.exp(-i / 200) + 0.05) * (1 + 0.15 * Math.sin(i * 1.7)));

test('divergence: a loss above twice its early level fires once, when the window median passes it', () => {
  // 10 steps at 2.6 (early level 2.6, their lowest), 20 at 2.0, then a plateau of 6: the window median passes
  // 5.2 once 11 of the last 20 losses are 6, at step 30 + 11 = 41.
  const losses = [...Array(10).fill(2.6), ...Array(20).fill(2.0), ...Array(40).fill(6)];
  assert.deepEqual(firedOn(losses), [41]);
  // Just under twice the early level (5.1 < 5.2) never fires.
  assert.deepEqual(firedOn([...Array(10).fill(2.6), ...Array(60).fill(5.1)]), []);
});

test('divergence: single spikes are loss_spike, not divergence', () => {
  const losses = healthy(400);
  for (let i = 100; i < 400; i += 25) losses[i] = 100; // one step in 25 at 100: the window median stays low
  assert.deepEqual(firedOn(losses), []);
});

test('divergence: the validation loss rising 3 evaluations in a row, by 10% of the first, fires', () => {
  const losses = healthy(1000);
  // first 2.0; falls to 1.0 at step 400, then 1.1, 1.2, 1.3: three rises, 0.3 ≥ 0.2 in all
  const vals: [number, number][] = [
    [100, 2.0],
    [200, 1.5],
    [300, 1.2],
    [400, 1.0],
    [500, 1.1],
    [600, 1.2],
    [700, 1.3],
  ];
  assert.deepEqual(firedOn(losses, vals), [700]);
  // Two rises and a fall, twice: no run of 3.
  const zigzag: [number, number][] = [100, 200, 300, 400, 500, 600, 700, 800].map((s, i) => [
    s,
    [2, 1.5, 1.6, 1.7, 1.4, 1.5, 1.6, 1.3][i]!,
  ]);
  assert.deepEqual(firedOn(losses, zigzag), []);
  // Three rises that add up to less than 10% of the first (0.1 < 0.2): noise near convergence.
  const creep: [number, number][] = [100, 200, 300, 400, 500].map((s, i) => [s, [2, 0.5, 0.53, 0.56, 0.59][i]!]);
  assert.deepEqual(firedOn(losses, creep), []);
  assert.equal(DIVERGENCE.valRises, 3);
});

test("divergence: silent on the README's healthy reverse run (1,500 steps of its real losses and validations)", () => {
  const curve = JSON.parse(
    readFileSync(join(REPO, 'test', 'telemetry', 'fixtures', 'reverse-tiny-curve.json'), 'utf8'),
  ) as {
    loss: number[];
    val: [number, number][];
  };
  assert.equal(curve.loss.length, 1500);
  assert.deepEqual(firedOn(curve.loss, curve.val), []);
  // The HealthMonitor as the trainer calls it, with gradient norms of 1: no divergence either.
  const monitor = new HealthMonitor();
  const found = curve.loss.flatMap((l, i) => [
    ...monitor.onStep(i + 1, l, 1),
    ...curve.val.filter(([s]) => s === i + 1).flatMap(([s, v]) => monitor.onValidation(s, v)),
  ]);
  assert.deepEqual(
    found.filter((f) => f.check === 'divergence'),
    [],
  );
});

test('a micro run at LR factor 1000 ends diverged: status.json, events.jsonl and the trainer say so', async () => {
  const dir = scratch();
  const o = createRun({
    out: join(dir, 'run'),
    data: taskSpec('reverse', { train: 400, valid: 16, test: 8 }),
    config: microConfig(dir, {
      steps: 200,
      lr_factor: 1000,
      checkpoint_every: 1000,
      snapshot_every: 0,
      eval_every: 50,
    }),
    overrides: { checks: { nonfinite: 'warn', loss_spike: 'off', entropy_collapse: 'off', dead_head: 'off' } },
  });
  const { trainer } = startTrainer(o, { resume: false });
  try {
    const step = await trainer.train();
    assert.equal(step, 200, 'a warning: the run trains on to its end');
    assert.equal(trainer.diverged?.check, 'divergence');
    const status = JSON.parse(readFileSync(o.run.statusPath, 'utf8')) as { state: string; message?: string };
    assert.equal(status.state, 'diverged');
    assert.match(status.message ?? '', /diverged/);
    const events = o.run.readEvents().filter((e) => e.check === 'divergence');
    assert.equal(events.length, 1, 'one divergence event');
    assert.equal(events[0]!.severity, 'warning');
  } finally {
    trainer.dispose();
  }
});

test('divergence set to break ends the run at once with a checkpoint, diverged (not paused)', async () => {
  const dir = scratch();
  const o = createRun({
    out: join(dir, 'run'),
    data: taskSpec('reverse', { train: 400, valid: 16, test: 8 }),
    config: microConfig(dir, {
      steps: 200,
      lr_factor: 1000,
      checkpoint_every: 1000,
      snapshot_every: 0,
      eval_every: 50,
    }),
    overrides: { checks: { nonfinite: 'warn', loss_spike: 'off', entropy_collapse: 'off', divergence: 'break' } },
  });
  const { trainer } = startTrainer(o, { resume: false });
  try {
    const step = await trainer.train();
    const event = trainer.diverged;
    assert.ok(event, 'the check fired');
    assert.equal(step, event.step, 'it stopped at the step the check fired');
    assert.ok(step < 200);
    assert.equal(trainer.breakpoint, undefined, 'not a pause');
    const status = JSON.parse(readFileSync(o.run.statusPath, 'utf8')) as { state: string; step: number };
    assert.deepEqual([status.state, status.step], ['diverged', step]);
    assert.equal(o.run.newestCheckpointStep(), step);
  } finally {
    trainer.dispose();
  }
});

test("the run folder's states: the Python writer's are the engine's, diverged included", () => {
  const writer = readFileSync(join(REPO, 'python', 'attention_debugger', 'writer.py'), 'utf8');
  const line = /^STATES = \(([^)]*)\)$/m.exec(writer);
  assert.ok(line, 'writer.py has a STATES tuple');
  const states = [...line[1]!.matchAll(/"([a-z]+)"/g)].map((m) => m[1]);
  assert.deepEqual(states, ['running', 'paused', 'completed', 'stopped', 'failed', 'diverged']);
  assert.deepEqual(states, [...RUN_STATES]);
});

test('train on the CLI says a run diverged and exits 5 (not 0, as a success)', () => {
  const dir = scratch();
  const config = microConfig(dir, { steps: 60, lr_factor: 1000, checkpoint_every: 1000, snapshot_every: 0 });
  const out = join(dir, 'hot');
  const args = ['train', '--task', 'reverse', '--config', config, '--out', out, '--backend', 'wasm'];
  const r = spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 5, r.stderr.slice(-2000));
  assert.match(r.stderr, /diverged at step 60: step \d+ · divergence: the loss diverged/);
  const status = JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')) as { state: string };
  assert.equal(status.state, 'diverged');
});
