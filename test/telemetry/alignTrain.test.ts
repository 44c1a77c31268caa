/**
 * align_err as the trainer writes it: a micro run of the reverse task logs it for its cross heads
 * (null for the others), equal to the share of probe rows whose largest weight misses source
 * position n − 1 − t, counted here on the final weights.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { taskSpec } from '../../src/engine/data/dataset';
import { BOS } from '../../src/engine/data/specialTokens';
import { createRun } from '../../src/engine/run/setup';
import { probesOf } from '../../src/engine/run/probe';
import { startTrainer } from '../../src/engine/train/start';
import type { TelemetryRow } from '../../src/protocol/telemetry';
import { nestedAttention } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

before(async () => {
  await initBackend('wasm');
});

test('a reverse run logs align_err of its cross heads: the share of rows not on source n − 1 − t', async () => {
  const dir = scratch();
  const o = createRun({
    out: join(dir, 'run'),
    data: taskSpec('reverse', { train: 200, valid: 8, test: 8 }),
    config: microConfig(dir, { steps: 4, checkpoint_every: 100, snapshot_every: 0 }),
    overrides: { telemetry_every: 2, telemetry_pairs: 8 },
  });
  const { trainer } = startTrainer(o, { resume: false });
  try {
    const rows: TelemetryRow[] = [];
    await trainer.train({ onTelemetry: (r) => rows.push(r) });
    assert.deepEqual(
      rows.map((r) => r.step),
      [2, 4],
    );
    const last = rows[1]!;
    const cross = last.heads.map((h) => h.startsWith('cross:'));
    assert.deepEqual(
      last.stats.align_err!.map((v) => v === null),
      cross.map((c) => !c),
      `align_err ${last.stats.align_err}`,
    );
    // Counted apart from the engine's telemetry: the final model's cross attention ([B][L][H][T][S]) of the probe batch.
    const probe = probesOf(trainer.data, trainer.settings).batch;
    const misses = [0, 0];
    let positions = 0;
    for (const p of probe) {
      const n = p.src.length - 1; // without EOS
      const a = await nestedAttention(trainer.model, [p.src], [[BOS, ...p.tgt]]);
      for (let t = 0; t < n; t++) {
        positions++;
        a.cross[0]![0]!.forEach((rowsOfHead, h) => {
          const row = rowsOfHead[t]!;
          if (row.indexOf(Math.max(...row)) !== n - 1 - t) misses[h]!++;
        });
      }
    }
    const logged = last.stats.align_err!.filter((_, i) => cross[i]);
    misses.forEach((m, h) =>
      assert.ok(Math.abs(logged[h]! - m / positions) < 1e-9, `cross:0.${h}: ${logged[h]} vs ${m}/${positions}`),
    );
  } finally {
    trainer.dispose();
  }
});
