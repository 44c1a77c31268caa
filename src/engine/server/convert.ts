/** From the engine's own records (metrics.jsonl rows, run settings, snapshots) to the wire's payloads. */
import { existsSync } from 'node:fs';
import type { Attention } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { RunSummary } from '../../protocol/training';
import { listCheckpoints } from '../checkpoint';
import type { DataSpec } from '../data/dataset';
import type { TransformerConfig } from '../model/config';
import type { MetricsRow, RunDir } from '../run/runDir';
import type { TrainingSettings } from '../run/settings';
import type { Snapshot } from '../run/snapshots';
import { plannedLrCurve } from '../train/schedule';

export function toMetricRow(r: MetricsRow): MetricRow | null {
  if (!Number.isFinite(r.loss) || !Number.isFinite(r.lr)) return null;
  return {
    step: r.step,
    loss: r.loss,
    lr: r.lr,
    tokensPerSec: r.tokens_per_sec ?? 0,
    gradNorm: r.grad_norm ?? 0,
    ...(r.val_loss !== undefined ? { valLoss: r.val_loss } : {}),
    ...(r.val_bleu !== undefined ? { valBleu: r.val_bleu } : {}),
  };
}

/** The probe pair (pair 0) of a snapshot, as the views show it. */
export function snapshotAttention(run: RunDir, s: Snapshot): Attention {
  const probe = s.pairs[0];
  if (!probe) throw new Error(`${run.path}: the snapshot of step ${s.step} holds no pair`);
  return {
    source: { runDir: run.path, step: s.step, input: 'probe' },
    srcTokens: probe.src,
    tgtTokens: probe.tgt,
    maps: probe.maps,
  };
}

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
