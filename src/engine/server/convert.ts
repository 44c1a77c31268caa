/**
 * A run's summary for the wire (run/open, and a training's start): its shape, data, schedule,
 * checkpoints and snapshots. The folder's other records reach the wire through run/toWire.ts.
 */
import { existsSync } from 'node:fs';
import type { RunSummary } from '../../protocol/training';
import { listCheckpoints } from '../checkpoint';
import type { DataSpec } from '../data/dataset';
import type { TransformerConfig } from '../model/config';
import type { RunDir } from '../run/runDir';
import type { TrainingSettings } from '../run/settings';
import { plannedLrCurve } from '../train/schedule';

function describeData(d: DataSpec | undefined): string {
  if (!d) return 'unknown data';
  return d.kind === 'task' ? `${d.task} task` : d.kind === 'gettext' ? `gettext ${d.lang}` : d.dir;
}

export function runSummary(
  run: RunDir,
  config: TransformerConfig,
  settings: Partial<TrainingSettings>,
  data: DataSpec | undefined,
  step: number,
  running: boolean,
): RunSummary {
  const totalSteps = settings.steps ?? step;
  const warmup = settings.warmup ?? 0;
  const schedule =
    totalSteps >= 1 && warmup >= 1
      ? plannedLrCurve(
          totalSteps,
          { dModel: config.d_model, warmupSteps: warmup, factor: settings.lr_factor ?? 1 },
          300,
        )
      : [];
  return {
    runDir: run.path,
    step,
    totalSteps,
    dModel: config.d_model,
    heads: config.heads,
    encoderLayers: config.encoder_layers,
    decoderLayers: config.decoder_layers,
    data: describeData(data),
    warmupSteps: warmup,
    schedule,
    checkpoints: listCheckpoints(run.path).map((c) => c.step),
    snapshots: run.snapshotSteps(),
    running,
    vocab: existsSync(run.vocabPath),
  };
}
