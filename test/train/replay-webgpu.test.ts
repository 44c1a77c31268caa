/**
 * Exact replay on webgpu (issue 31, item 5): on a GPU the engine promises equality within float
 * tolerance, not bit for bit, and says so (Replayed.exact false, the debugger's stop names the
 * backend). On Dawn over lavapipe a replay of 20 steps from a checkpoint gives the run's losses
 * within 1e-5 relative, and each telemetry statistic and the probe's attention at the last step
 * within 1e-4.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { taskSpec } from '../../src/engine/data/dataset';
import { createRun } from '../../src/engine/run/setup';
import { replay } from '../../src/engine/train/replay';
import { startTrainer } from '../../src/engine/train/start';
import { RunDir } from '../../src/engine/run/runDir';
import { cannotRun } from '../helpers';
import { jsonLines } from '../runFiles';
import { microConfig, scratch } from './helpers';

let webgpu: string | null = null; // why webgpu cannot run here, or null

before(async () => {
  try {
    await initBackend('webgpu');
  } catch (err) {
    webgpu = (err as Error).message;
  }
});

/** The largest |a − b| / max(|b|, 1e-6) over two lists of numbers (null where the row says none). */
function worstRelative(a: readonly (number | null)[], b: readonly (number | null)[]): number {
  assert.equal(a.length, b.length);
  return Math.max(
    0,
    ...a.map((x, i) =>
      x === null || b[i] === null ? (x === b[i] ? 0 : Infinity) : Math.abs(x - b[i]!) / Math.max(Math.abs(b[i]!), 1e-6),
    ),
  );
}

test('on webgpu a replay of 20 steps equals the run within float tolerance, and says it is not bit for bit', async (t) => {
  if (webgpu !== null) return cannotRun(t, 'webgpu', webgpu);
  const dir = scratch('ad-replay-gpu-');
  const out = join(dir, 'run');
  const config = microConfig(dir, {
    steps: 40,
    checkpoint_every: 20,
    snapshot_every: 10,
    telemetry_every: 10,
    eval_every: 40,
  });
  const opened = createRun({
    out,
    data: taskSpec('reverse', { train: 200, valid: 10, test: 10 }),
    config,
    overrides: {},
  });
  const { trainer } = startTrainer(opened, { resume: false });
  await trainer.train();
  trainer.dispose();

  const r = await replay(out, 40);
  assert.equal(r.from, 20);
  assert.equal(r.backend, 'webgpu');
  assert.equal(r.exact, false, 'a GPU replay is not promised bit for bit');
  const logged = new Map(jsonLines<{ step: number; loss: number }>(join(out, 'metrics.jsonl')).map((m) => [m.step, m]));
  assert.equal(r.rows.length, 20);
  const losses = worstRelative(
    r.rows.map((x) => x.loss),
    r.rows.map((x) => logged.get(x.step)!.loss),
  );
  assert.ok(losses <= 1e-5, `losses differ by ${losses} relative`);
  const rows = new Map(
    jsonLines<{ step: number; stats: Record<string, (number | null)[]> }>(join(out, 'telemetry.jsonl')).map((x) => [
      x.step,
      x,
    ]),
  );
  assert.equal(r.telemetry.length, 2);
  let stats = 0;
  for (const row of r.telemetry)
    for (const [name, xs] of Object.entries(row.stats))
      stats = Math.max(stats, worstRelative(xs, rows.get(row.step)!.stats[name]!));
  assert.ok(stats <= 1e-4, `telemetry differs by ${stats} relative`);
  // The probe's attention at step 40, which the replay's weights computed, against the run's snapshot.
  const snap = new RunDir(out).readSnapshot(40).pairs[0]!.maps;
  assert.ok(r.snapshot, 'the replay snapshots step 40');
  const maps = Math.max(...r.snapshot.maps.map((m, i) => worstRelative([...m.weights], [...snap[i]!.weights])));
  assert.ok(maps <= 1e-4, `the snapshot differs by ${maps} relative`);
});
