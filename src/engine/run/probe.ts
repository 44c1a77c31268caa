/**
 * A run's probes: the probe pair whose attention snapshots record, and the probe batch that
 * telemetry and mean ablation average over. Both are the first held-out pairs (training pairs when
 * the run holds none out), so every reader of a run finds the same ones.
 */
import type { IdPair, PreparedData } from '../data/dataset';
import { decoderInput } from '../data/specialTokens';
import { type TrainingSettings, telemetryPairs } from './settings';
import { openRun } from './setup';

export interface Probes {
  /** The snapshots' pair; undefined when the run has no data. */
  pair: IdPair | undefined;
  /** The first telemetry_pairs held-out pairs. */
  batch: IdPair[];
}

export function probesOf(data: PreparedData, settings: TrainingSettings): Probes {
  const held = data.valid.length ? data.valid : data.train;
  return { pair: data.valid[0] ?? data.train[0], batch: held.slice(0, telemetryPairs(settings)) };
}

/** The probe batch of a run folder as model inputs: sources (EOS last) and targets (BOS first). */
export function probeBatchOf(runDir: string): { src: number[][]; tgt: number[][] } {
  const o = openRun(runDir, {}, 'read');
  const { batch } = probesOf(o.data, o.settings);
  if (!batch.length) throw new Error(`${runDir}: the run has no pairs to average head outputs over`);
  return { src: batch.map((p) => p.src), tgt: batch.map((p) => decoderInput(p.tgt)) };
}
