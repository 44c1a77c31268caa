/**
 * `attention-debugger batches` writes the batches a run's trainer takes, in its order: the file's
 * training records are the batches the trainer handed to its steps (seen through onBatch), across an
 * epoch's reshuffle; its validation records are the ones the trainer's validation loss ran over (the
 * loss they give the checkpoint equals the val_loss the run logged); and the PyTorch peer's reader
 * (bench/batch_file.py) reads the same ids. The file is parsed here by hand from its documented format.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { loadRunCheckpoint } from '../../src/engine/checkpoint';
import type { Batch } from '../../src/engine/data/batchStream';
import { taskSpec } from '../../src/engine/data/dataset';
import { createRun, openRun } from '../../src/engine/run/setup';
import { validationLoss } from '../../src/engine/train/evaluate';
import { startTrainer } from '../../src/engine/train/start';
import { cannotRun, REPO } from '../helpers';
import { microConfig, scratch } from './helpers';

const STEPS = 20;
const TRAIN_PAIRS = 40;

before(async () => {
  await initBackend('wasm');
});

/** The CLI as a process (bin/attention-debugger, the built dist/cli.js). */
const cli = (args: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'bin', 'attention-debugger'), ...args], { cwd: REPO, encoding: 'utf8' });

/** The format as bench/README.md states it: int32 LE words, "ADBF", 1, M, N, then [B, S, T, src, tgt_in, tgt_out]. */
function parseBatchFile(path: string): { validation: Batch[]; training: Batch[] } {
  const bytes = readFileSync(path);
  assert.equal(bytes.subarray(0, 4).toString('latin1'), 'ADBF');
  const words = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readInt32LE(4 * i));
  let at = 1;
  const take = (n: number): number[] => words.slice(at, (at += n));
  const [version, m, n] = take(3);
  assert.equal(version, 1);
  const record = (): Batch => {
    const [rows, s, t] = take(3);
    const matrix = (width: number): number[][] => Array.from({ length: rows }, () => take(width));
    return { src: matrix(s), tgtIn: matrix(t), tgtOut: matrix(t) };
  };
  const validation = Array.from({ length: m }, record);
  const training = Array.from({ length: n }, record);
  assert.equal(at, words.length, 'nothing after the last record');
  return { validation, training };
}

test('the batch file holds the batches the trainer trains and validates on, in order', async (t) => {
  const dir = scratch('ad-batches-');
  const out = join(dir, 'run');
  const config = microConfig(dir, { steps: STEPS, eval_every: STEPS, snapshot_every: 0 });
  const opened = createRun({
    out,
    data: taskSpec('copy', { train: TRAIN_PAIRS, valid: 24, test: 4 }),
    config,
    overrides: {},
  });
  const { trainer } = startTrainer(opened, { resume: false });
  const consumed: Batch[] = [];
  const steps: number[] = [];
  await trainer.train({
    onBatch: (step, batch) => {
      steps.push(step);
      consumed.push(batch);
    },
  });
  trainer.dispose();
  assert.deepEqual(
    steps,
    Array.from({ length: STEPS }, (_, i) => i + 1),
  );
  const rows = consumed.reduce((k, b) => k + b.src.length, 0);
  assert.ok(rows > 2 * TRAIN_PAIRS, `${STEPS} steps span more than two epochs (${rows} rows of ${TRAIN_PAIRS} pairs)`);

  const file = join(dir, 'batches.bin');
  const wrote = cli(['batches', '--run', out, '--steps', String(STEPS), '--out', file]);
  assert.equal(wrote.status, 0, wrote.stderr);
  const { validation, training } = parseBatchFile(file);
  assert.equal(training.length, STEPS);
  for (let i = 0; i < STEPS; i++) assert.deepEqual(training[i], consumed[i], `the batch of step ${i + 1}`);

  // Validation: every held-out pair once, as the trainer pads it (BOS before, EOS after the target)...
  const { data } = openRun(out);
  const key = (src: number[], tgt: number[]): string => `${src.join(' ')} | ${tgt.join(' ')}`;
  const stripped = validation.flatMap((b) =>
    b.src.map((srcRow, r) => {
      const src = srcRow.slice(0, srcRow.indexOf(2) + 1); // the source ends with EOS (2), padding (0) after
      const tgt = b.tgtOut[r]!.slice(0, b.tgtOut[r]!.indexOf(2));
      assert.deepEqual(b.tgtIn[r]!.slice(0, tgt.length + 1), [1, ...tgt], 'tgt_in is BOS (1) then the target');
      return key(src, tgt);
    }),
  );
  assert.deepEqual(stripped.sort(), data.valid.map((p) => key(p.src, p.tgt)).sort());
  // ...and the very batches of its validation loss: they give the final checkpoint the val_loss it logged.
  const logged = openRun(out)
    .run.readMetrics()
    .find((r) => r.step === STEPS)?.val_loss;
  assert.ok(logged !== undefined, `val_loss logged at step ${STEPS}`);
  const { model } = loadRunCheckpoint(out, undefined, data.vocab.size);
  const v = await validationLoss(model, validation, 0.1);
  model.dispose();
  assert.ok(Math.abs(v.loss - logged) < 1e-6, `validation loss of the file's batches ${v.loss}, logged ${logged}`);

  // The PyTorch peer's reader gets the same ids.
  const python = process.env.BENCH_PYTHON || '/usr/bin/python3';
  const r = spawnSync(python, [join(REPO, 'bench', 'batch_file.py'), file], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) return cannotRun(t, 'python', `${python}: ${r.error.message}`);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { validation, training });
});

test('batches refuses a run folder that is missing and a step count that is not a whole number', () => {
  const dir = scratch('ad-batches-');
  const missing = cli(['batches', '--run', join(dir, 'none'), '--steps', '3', '--out', join(dir, 'f')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /not a run folder/);
  const fraction = cli(['batches', '--run', dir, '--steps', '2.5', '--out', join(dir, 'f')]);
  assert.equal(fraction.status, 2);
  assert.match(fraction.stderr, /--steps: expected a whole number/);
});
