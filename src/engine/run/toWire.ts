/**
 * A run folder's records as the wire carries them: a metrics.jsonl line as the charts' row, a
 * snapshot's probe pair as the views' attention. Read by run/follow.ts (a folder another process
 * writes) and by server/ (the engine's own runs), so both show a folder's records alike; the
 * summary of a run, which needs the training schedule, is server/convert.ts's.
 */
import type { Attention } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { MetricsRow, RunDir } from './runDir';
import type { Snapshot } from './snapshots';

/** A metrics.jsonl row as the charts' row; null when its loss or learning rate is not finite. */
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
