/** The training loop through its API: the schedule it logs, the loss, exact resumption, snapshots. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { taskSpec } from '../../src/engine/data/dataset';
import { RunDir } from '../../src/engine/run/runDir';
import { createRun, openRun } from '../../src/engine/run/setup';
import { startTrainer } from '../../src/engine/train/start';
import { microConfig, scratch } from './helpers';

before(async () => {
  await initBackend('wasm');
});

async function trainRun(out: string, config: string, steps?: number, resume = false): Promise<RunDir> {
  const o = resume
    ? openRun(out, steps ? { steps } : {})
    : createRun({
        out,
        data: taskSpec('copy', { train: 400, valid: 20, test: 20 }),
        config,
        overrides: steps ? { steps } : {},
      });
  const t = startTrainer(o, { resume: false }).trainer;
  if (resume) t.resume();
  await t.train();
  t.dispose();
  return o.run;
}

test('the logged learning rate follows eq. 3 at step 1, warmup and 4·warmup, and the loss falls', async () => {
  const dir = scratch();
  const run = await trainRun(join(dir, 'run'), microConfig(dir, { steps: 16, warmup: 4 }));
  const rows = run.readMetrics();
  assert.deepEqual(
    rows.map((r) => r.step),
    Array.from({ length: 16 }, (_, i) => i + 1),
  );
  // lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), d_model 16, warmup 4:
  // step 1: 0.25 · 1/8 = 0.03125; step 4: 0.25 · 0.5 = 0.125; step 16: 0.25 · 0.25 = 0.0625
  assert.ok(Math.abs(rows[0].lr - 0.03125) < 1e-9);
  assert.ok(Math.abs(rows[3].lr - 0.125) < 1e-9);
  assert.ok(Math.abs(rows[15].lr - 0.0625) < 1e-9);
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.ok(mean(rows.slice(-4).map((r) => r.loss)) < mean(rows.slice(0, 4).map((r) => r.loss)) - 0.2, 'loss falls');
  assert.ok(rows[9].val_loss !== undefined && rows[8].val_loss === undefined, 'validation every 10 steps');
  assert.ok(rows.every((r) => (r.tokens_per_sec ?? 0) > 0 && (r.grad_norm ?? 0) > 0));
  assert.deepEqual(
    readdirSync(run.checkpointsDir)
      .filter((f) => !f.includes('optim'))
      .sort(),
    ['step-10.safetensors', 'step-15.safetensors', 'step-16.safetensors', 'step-5.safetensors'],
  );
  assert.ok(existsSync(join(run.snapshotsDir, 'step-15.safetensors')));
  const snap = run.readSnapshot(15);
  assert.equal(snap.step, 15);
  assert.deepEqual(
    snap.pairs[0].maps.map((m) => m.kind),
    ['encoder_self', 'decoder_self', 'cross'],
  );
});

test('a resumed run continues with the same step count, schedule and numbers as one that never stopped', async () => {
  const dir = scratch();
  const config = microConfig(dir, { checkpoint_every: 5 });
  const whole = await trainRun(join(dir, 'whole'), config, 15);
  const parts = await trainRun(join(dir, 'parts'), config, 10);
  await trainRun(join(dir, 'parts'), config, 15, true);
  const a = whole.readMetrics();
  const b = parts.readMetrics();
  assert.deepEqual(
    b.map((r) => r.step),
    a.map((r) => r.step),
    'each step logged once',
  );
  for (let i = 0; i < a.length; i++) {
    assert.equal(b[i].lr, a[i].lr, `lr at step ${a[i].step}`);
    assert.ok(Math.abs(b[i].loss - a[i].loss) < 1e-5, `loss at step ${a[i].step}: ${b[i].loss} vs ${a[i].loss}`);
  }
});

test('a new run never replaces an existing one', async () => {
  const dir = scratch();
  const config = microConfig(dir);
  await trainRun(join(dir, 'run'), config, 2);
  assert.throws(
    () => createRun({ out: join(dir, 'run'), data: taskSpec('copy'), config, overrides: {} }),
    /already holds a run; resume it with --resume/,
  );
});

test('bad training settings and data specs name the field', () => {
  const dir = scratch();
  assert.throws(
    () =>
      createRun({
        out: join(dir, 'a'),
        data: taskSpec('copy'),
        config: microConfig(dir, { warmup: 0 }),
        overrides: {},
      }),
    /micro\.json: warmup: expected a whole number ≥ 1, got 0/,
  );
  assert.throws(() => taskSpec('translate'), /--task: unknown task "translate"/);
  assert.throws(
    () => createRun({ out: join(dir, 'b'), data: taskSpec('copy'), config: join(dir, 'missing.json'), overrides: {} }),
    /missing\.json: not found/,
  );
});
