/** From the engine's own records (metrics.jsonl rows, attention reports) to the wire's payloads. */
import { float32ToBase64, type RunSummary, type WireAttention } from '../../protocol/training';
import type { MetricRow } from '../../protocol/webview';
import { listCheckpoints } from '../checkpoint';
import type { Nested } from '../inspect';
import type { TransformerConfig } from '../model/config';
import type { DataSpec } from '../data/dataset';
import type { MetricsRow } from '../run/runDir';
import { plannedLrCurve } from '../train/schedule';
import type { TrainingSettings } from '../run/settings';
import type { Snapshot } from '../train/trainer';
import type { RunDir } from '../run/runDir';

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

/** [L][H][q][k] nested arrays → row-major float32, base64. */
function flatten(maps: Nested): { shape: [number, number, number, number]; data: string } {
  const l = maps.length;
  const h = maps[0]?.length ?? 0;
  const q = maps[0]?.[0]?.length ?? 0;
  const k = maps[0]?.[0]?.[0]?.length ?? 0;
  const out = new Float32Array(l * h * q * k);
  let i = 0;
  for (const layer of maps) for (const head of layer) for (const row of head) for (const w of row) out[i++] = w;
  return { shape: [l, h, q, k], data: float32ToBase64(out) };
}

export function toWireAttention(
  step: number,
  srcTokens: string[],
  tgtTokens: string[],
  attention: { encoder_self: Nested; decoder_self: Nested; cross: Nested },
): WireAttention {
  return {
    step,
    srcTokens,
    tgtTokens,
    maps: (['encoder_self', 'decoder_self', 'cross'] as const).map((kind) => ({ kind, ...flatten(attention[kind]) })),
  };
}

export function snapshotToWire(s: Snapshot): WireAttention {
  return toWireAttention(s.step, s.src, s.tgt, s.attention);
}

function describeData(d: DataSpec): string {
  return d.kind === 'task' ? `${d.task} task` : d.kind === 'gettext' ? `gettext ${d.lang}` : d.dir;
}

export function runSummary(
  run: RunDir,
  config: TransformerConfig,
  settings: TrainingSettings,
  data: DataSpec,
  step: number,
  running: boolean,
): RunSummary {
  return {
    runDir: run.path,
    step,
    totalSteps: settings.steps,
    dModel: config.d_model,
    heads: config.heads,
    encoderLayers: config.encoder_layers,
    decoderLayers: config.decoder_layers,
    data: describeData(data),
    schedule: plannedLrCurve(
      settings.steps,
      { dModel: config.d_model, warmupSteps: settings.warmup, factor: settings.lr_factor },
      300,
    ),
    checkpoints: listCheckpoints(run.path).map((c) => c.step),
    snapshots: run.snapshotSteps(),
    running,
  };
}
