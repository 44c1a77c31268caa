/**
 * Exact replay (issue 31, item 5): a run's step s computed again, from the newest checkpoint before
 * it, with the same batches (the data position the checkpoint records), the same dropout draws (each
 * step's seed is the run's seed and the step) and the same arithmetic, so on the same backend the
 * replay's losses, telemetry, snapshot and weights equal the run's bit for bit. The run folder is
 * only read: the replay trains a copy of that one checkpoint in a scratch folder under the OS temp
 * dir, removed when it is done. A run that is not a fork and has no checkpoint before s replays from
 * step 0, which its seed makes again exactly (the model's initial values, Adam's zero moments, the
 * first batch). A run written by PyTorch cannot be replayed (its dropout and arithmetic are
 * PyTorch's): attach only.
 */
import { createHash } from 'node:crypto';
import * as tf from '@tensorflow/tfjs-core';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Attention } from '../../protocol/attention';
import { HEALTH_CHECKS, type CheckMode, type TelemetryRow } from '../../protocol/telemetry';
import { listCheckpoints, tensorsOf } from '../checkpoint';
import type { NamedTensor } from '../checkpoint/safetensors';
import { RunDir, type MetricsRow } from '../run/runDir';
import { writtenByPytorch } from '../run/pytorchRun';
import { type OpenRun, openRun } from '../run/setup';
import type { TrainingSettings } from '../run/settings';
import { startTrainer } from './start';

export interface Replayed {
  /** The step replayed to, and the checkpoint it started from (0: the run's seeded start). */
  step: number;
  from: number;
  /** The metrics rows of steps from + 1 … step, as the run logged them (time and speed aside). */
  rows: MetricsRow[];
  /** The telemetry rows of those steps. */
  telemetry: TelemetryRow[];
  /** The probe's attention at `step`, when it is a snapshot step. */
  snapshot?: Attention;
  /** sha256 of the weights after `step` (weightsHash). */
  weightsHash: string;
  /** The backend that replayed, and whether it promises bit for bit (EXACT_BACKENDS) or float tolerance. */
  backend: string;
  exact: boolean;
}

/**
 * Backends whose replay equals the run bit for bit: their kernels run in one fixed order on the CPU.
 * On a GPU (webgpu, tensorflow) the engine promises equality within float tolerance only: a driver
 * may order a reduction differently from one dispatch to the next (test/train/replay-webgpu.test.ts).
 */
export const EXACT_BACKENDS: readonly string[] = ['wasm', 'cpu'];

export interface ReplayOptions {
  /**
   * Added to each step's dropout seed: 0, but for the test that shows a replay drawing other dropout
   * masks is told apart from the run (test/train/replay.test.ts).
   */
  dropoutSalt?: number;
}

/** sha256 over every tensor by name (sorted): its name, shape and float32 words. A checkpoint file's equals its weights'. */
export function weightsHash(tensors: Map<string, NamedTensor>): string {
  const hash = createHash('sha256');
  for (const name of [...tensors.keys()].sort()) {
    const t = tensors.get(name)!;
    const words = Float32Array.from(t.data);
    hash.update(`${name}[${t.shape.join(',')}]`);
    hash.update(new Uint8Array(words.buffer, words.byteOffset, words.byteLength));
  }
  return hash.digest('hex');
}

/** The checkpoint a replay to `step` starts from: the newest before it, else the seeded start (not for a fork). */
function startingPoint(runPath: string, step: number, raw: Record<string, unknown>): number {
  const steps = listCheckpoints(runPath).map((c) => c.step);
  const newest = steps.at(-1);
  if (newest === undefined || step > newest)
    throw new Error(
      `${runPath}: cannot replay to step ${step}: the run has got to step ${newest ?? 0} (its newest checkpoint)`,
    );
  const before = steps.filter((s) => s < step).at(-1);
  if (before !== undefined) return before;
  if (raw.fork !== undefined || step < 1)
    throw new Error(`${runPath}: no checkpoint before step ${step} to replay from; its first is step ${steps[0]}`);
  return 0;
}

/** How long a run's prepared data stays in memory after its last replay. */
const KEEP_MS = 10 * 60_000;
let kept: { key: string; opened: OpenRun } | undefined;
let forget: NodeJS.Timeout | undefined;

/**
 * The run opened for reading (its data prepared), the same as the last replay's while its config.json
 * and vocabulary are unchanged: Step Back replays the same run again and again, and preparing its
 * data was a third of a short replay.
 */
function openedForReplay(run: RunDir, configText: string): OpenRun {
  const vocab = existsSync(run.vocabPath) ? statSync(run.vocabPath).mtimeMs : 0;
  const key = JSON.stringify([run.path, configText, vocab]);
  if (kept?.key !== key) kept = { key, opened: openRun(run.path) };
  clearTimeout(forget);
  forget = setTimeout(() => (kept = undefined), KEEP_MS).unref();
  return kept.opened;
}

/** Replays `runPath` to `step`; the run folder is read, never written. */
export async function replay(runPath: string, step: number, options: ReplayOptions = {}): Promise<Replayed> {
  const original = new RunDir(runPath);
  if (!original.exists()) throw new Error(`${runPath}: not a run folder (no config.json)`);
  const { raw } = original.readConfig();
  if (writtenByPytorch(raw))
    throw new Error(
      `${original.configPath}: written by PyTorch: attach only, no step back (the engine cannot replay ` +
        "PyTorch's dropout draws and arithmetic)",
    );
  const from = startingPoint(runPath, step, raw);
  // Reads only: its commit() is never called.
  const opened = openedForReplay(original, readFileSync(original.configPath, 'utf8'));
  const scratch = mkdtempSync(join(tmpdir(), 'attention-debugger-replay-'));
  try {
    const copy = new RunDir(join(scratch, 'run'));
    copy.create();
    // Breakpoints would stop the replay short of its step: every check only warns, nothing is watched.
    const checks = Object.fromEntries(HEALTH_CHECKS.map((c) => [c, 'warn' as CheckMode]));
    const settings: TrainingSettings = { ...opened.settings, steps: step, checks, watch: [] };
    copy.writeConfig({ ...raw, training: settings, data: opened.dataSpec });
    if (existsSync(original.vocabPath)) copyFileSync(original.vocabPath, copy.vocabPath);
    if (from > 0) {
      copyFileSync(original.weightsPath(from), copy.weightsPath(from));
      if (existsSync(original.optimPath(from))) copyFileSync(original.optimPath(from), copy.optimPath(from));
    }
    // The copy trains on the original's prepared data (the same pairs, vocabulary and probe).
    const copied: OpenRun = { ...opened, run: copy, settings };
    delete copied.commit;
    const { trainer } = startTrainer(copied, { resume: true, command: `replay of ${runPath}` });
    try {
      trainer.dropoutSalt = options.dropoutSalt ?? 0;
      const rows: MetricsRow[] = [];
      const telemetry: TelemetryRow[] = [];
      let snapshot: Attention | undefined;
      const done = await trainer.train({
        onStep: (row) => rows.push(row),
        onTelemetry: (row) => telemetry.push(row),
        onSnapshot: (a) =>
          (snapshot = a.source.step === step ? { ...a, source: { ...a.source, runDir: runPath } } : snapshot),
      });
      if (done !== step) throw new Error(`${runPath}: the replay stopped at step ${done}, short of step ${step}`);
      const hash = weightsHash(await tensorsOf(trainer.model.params));
      const backend = tf.getBackend();
      const exact = EXACT_BACKENDS.includes(backend);
      return { step, from, rows, telemetry, ...(snapshot ? { snapshot } : {}), weightsHash: hash, backend, exact };
    } finally {
      trainer.dispose();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
