/**
 * Exact replay (issue 31, item 5; src/engine/train/replay.ts): a run replayed 100 steps from its
 * checkpoint gives the run's own losses, telemetry rows, snapshot and weights, bit for bit, three
 * times of three (wasm, dropout on); from the seeded start as well; and the run folder's files are
 * untouched. The same comparison tells a replay that draws other dropout masks from the run, and a
 * run PyTorch wrote is refused.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { taskSpec } from '../../src/engine/data/dataset';
import { createRun } from '../../src/engine/run/setup';
import { RunDir } from '../../src/engine/run/runDir';
import { type Replayed, replay, weightsHash } from '../../src/engine/train/replay';
import { startTrainer } from '../../src/engine/train/start';
import { microConfig, scratch } from './helpers';
import { folderHashes, jsonLines } from '../runFiles';

before(async () => {
  await initBackend('wasm');
});

/** A run of 200 steps: checkpoints at 100 and 200, snapshots and telemetry every 10, validation every 50. */
async function original(dir: string): Promise<string> {
  const out = join(dir, 'run');
  const opened = createRun({
    out,
    data: taskSpec('reverse', { train: 400, valid: 20, test: 20 }),
    config: microConfig(dir, {
      steps: 200,
      checkpoint_every: 100,
      snapshot_every: 10,
      telemetry_every: 10,
      eval_every: 50,
    }),
    overrides: {},
  });
  const { trainer } = startTrainer(opened, { resume: false });
  await trainer.train();
  trainer.dispose();
  return out;
}
let made: Promise<string> | undefined;
/** The one run every test reads. */
const theRun = (): Promise<string> => (made ??= original(scratch('ad-replay-')));

/** What a step computed (time and speed differ between any two runs). */
const computed = (r: { step: number; lr: number; loss: number; nll?: number; grad_norm?: number; val_loss?: number }) =>
  JSON.stringify([r.step, r.lr, r.loss, r.nll, r.grad_norm, r.val_loss]);

/** The replay against the run folder: every difference, in words (none for an exact replay). */
function differences(run: string, r: Replayed): string[] {
  const found: string[] = [];
  const logged = new Map(jsonLines<Parameters<typeof computed>[0]>(join(run, 'metrics.jsonl')).map((m) => [m.step, m]));
  for (const row of r.rows) {
    const m = logged.get(row.step);
    if (!m || computed(m) !== computed(row)) found.push(`metrics of step ${row.step}`);
  }
  const telemetry = new Map(jsonLines<{ step: number }>(join(run, 'telemetry.jsonl')).map((t) => [t.step, t]));
  for (const row of r.telemetry)
    if (JSON.stringify(telemetry.get(row.step)) !== JSON.stringify(row)) found.push(`telemetry of step ${row.step}`);
  const ckpt = readSafetensors(join(run, 'checkpoints', `step-${r.step}.safetensors`)).tensors;
  if (weightsHash(ckpt) !== r.weightsHash) found.push(`weights of step ${r.step}`);
  const snap = new RunDir(run).readSnapshot(r.step).pairs[0]!.maps;
  const words = (d: Float32Array) => Buffer.from(d.buffer, d.byteOffset, d.byteLength).toString('hex');
  if (!r.snapshot) found.push(`no snapshot of step ${r.step}`);
  else
    r.snapshot.maps.forEach((m, i) => {
      if (m.kind !== snap[i]!.kind || words(m.weights) !== words(snap[i]!.weights)) found.push(`${m.kind} snapshot`);
    });
  return found;
}

test('replayed 100 steps from its checkpoint, a run gives its losses, telemetry, snapshot and weights bit for bit, 3 of 3; its folder unchanged', async () => {
  const run = await theRun();
  const files = folderHashes(run);
  for (let repeat = 0; repeat < 3; repeat++) {
    const r = await replay(run, 200);
    assert.equal(r.from, 100);
    assert.deepEqual(
      r.rows.map((x) => x.step),
      Array.from({ length: 100 }, (_, i) => 101 + i),
    );
    assert.equal(r.telemetry.length, 10);
    assert.deepEqual(differences(run, r), [], `repeat ${repeat + 1}`);
  }
  // From the seeded start: no checkpoint before step 50
  const early = await replay(run, 50);
  assert.equal(early.from, 0);
  assert.equal(early.rows.length, 50);
  const logged = jsonLines<Parameters<typeof computed>[0]>(join(run, 'metrics.jsonl')).slice(0, 50);
  assert.deepEqual(early.rows.map(computed), logged.map(computed));
  assert.deepEqual(folderHashes(run), files);
});

test('a replay that draws other dropout masks is told apart from the run', async () => {
  const run = await theRun();
  const r = await replay(run, 200, { dropoutSalt: 1 });
  const found = differences(run, r);
  assert.ok(found.includes('metrics of step 101'), found.join('; '));
  assert.ok(found.includes('weights of step 200'), found.join('; '));
});

test('a run PyTorch wrote is refused: attach only, no step back', async () => {
  const dir = scratch('ad-replay-');
  const run = join(dir, 'torch');
  cpSync(await theRun(), run, { recursive: true });
  const config = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8'));
  writeFileSync(join(run, 'config.json'), JSON.stringify({ ...config, writer: 'pytorch' }));
  await assert.rejects(replay(run, 150), /written by PyTorch: attach only, no step back/);
});
