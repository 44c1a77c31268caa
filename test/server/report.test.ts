/**
 * What the run report holds (src/engine/server/report.ts), read from a micro run's folder: a report
 * past its weight budget keeps one snapshot in k (the last among them) and says so; a snapshot
 * longer than 64 tokens a side comes max-pooled (each cell the largest weight of its block, checked
 * here against the snapshot's own weights) and says so; a pair the snapshots lack is named. The
 * backend the run trained on is recorded in config.json (rewritten by a resume on another) and read
 * into the report's header; a run from before it was recorded reads as not recorded (null).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { collectReport } from '../../src/engine/server/report';
import { writeSnapshotFile } from '../../src/engine/run/snapshots';
import { REPO } from '../helpers';
import { scratch } from '../train/helpers';
import { micro } from '../cli/malformed-plants';

const dir = scratch('ad-report-data-');
const run = join(dir, 'run');

/** The CLI's `train` with `args`; it must succeed. */
function train(...args: string[]): void {
  const r = spawnSync(process.execPath, [join(REPO, 'dist', 'cli.js'), 'train', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

before(() => {
  writeFileSync(join(dir, 'micro.json'), micro({}, { steps: 8, snapshot_every: 1 }));
  train('--backend', 'wasm', '--task', 'copy', '--config', join(dir, 'micro.json'), '--out', run);
});

test('config.json records the backend a run trained on and the report shows it; an older run reads as not recorded', () => {
  const config = JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(config.backend, 'wasm');
  assert.equal(collectReport(run).header.backend, 'wasm');
  const resumed = join(dir, 'resumed');
  cpSync(run, resumed, { recursive: true });
  train('--backend', 'cpu', '--out', resumed, '--resume', '--steps', '9');
  assert.equal(collectReport(resumed).header.backend, 'cpu', 'a resume on another backend records it');
  const old = join(dir, 'old');
  cpSync(run, old, { recursive: true });
  delete config.backend;
  writeFileSync(join(old, 'config.json'), JSON.stringify(config));
  assert.equal(collectReport(old).header.backend, null);
});

const f32 = (b64: string) => {
  const b = Buffer.from(b64, 'base64');
  return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
};

test('a report past its budget keeps one snapshot in k, the last among them, and says so', () => {
  const all = collectReport(run);
  assert.deepEqual(
    all.snapshots.map((s) => s.step),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.deepEqual(all.notes, []);
  const perSnapshot = all.snapshots[0]!.maps.reduce((n, m) => n + m.shape.reduce((a, b) => a * b, 1), 0);
  const thin = collectReport(run, { budget: perSnapshot * 3 });
  assert.deepEqual(
    thin.snapshots.map((s) => s.step),
    [1, 4, 7, 8],
  );
  assert.deepEqual(thin.snapshotSteps, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.match(thin.notes.join(' '), /One snapshot in 3 of the run's 8 \(4 kept, the last among them\)/);
  // Steps a user chose are kept whole, budget or not.
  assert.deepEqual(
    collectReport(run, { budget: 1, steps: [2, 3, 5] }).snapshots.map((s) => s.step),
    [2, 3, 5],
  );
});

test('maps longer than 64 tokens a side are max-pooled, and the report says so', () => {
  const S = 100;
  const T = 70;
  const tok = (p: string, n: number) => Array.from({ length: n }, (_, i) => `${p}${i}`);
  const weights = (q: number, k: number) => Float32Array.from({ length: q * k }, (_, i) => ((i * 7919) % 1000) / 1000);
  writeSnapshotFile(join(run, 'snapshots', 'step-9.safetensors'), {
    step: 9,
    pairs: [
      { src: tok('s', S), tgt: tok('t', T), maps: [{ kind: 'cross', shape: [1, 1, T, S], weights: weights(T, S) }] },
    ],
  });
  const r = collectReport(run, { steps: [9] });
  const m = r.snapshots[0]!.maps[0]!;
  assert.deepEqual(m.pool, { rows: 2, cols: 2 });
  assert.deepEqual(m.shape, [1, 1, 35, 50]);
  const w = weights(T, S);
  const pooled = f32(m.weights);
  for (const [row, col] of [
    [0, 0],
    [17, 33],
    [34, 49],
  ] as const) {
    const block = [0, 1].flatMap((dr) => [0, 1].map((dc) => w[(2 * row + dr) * S + 2 * col + dc]!));
    assert.equal(pooled[row * 50 + col], Math.max(...block), `cell ${row},${col}`);
  }
  assert.match(r.notes.join(' '), /max-pooled \(pooled 2×2 → max\)/);
  assert.throws(
    () => collectReport(run, { steps: [9], pairs: [1] }),
    /the snapshot of step 9 holds 1 pair\(s\); no pair 1/,
  );
});
