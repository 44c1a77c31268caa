/**
 * What the panels show, kept on the extension side (no vscode import): a hidden webview drops
 * messages and a closed one forgets everything, so every panel's `state` snapshot is built from
 * here. The full metric series stays on disk (metrics.jsonl); this keeps at most MAX_ROWS rows,
 * thinning the oldest half when it overflows (the dashboard downsamples for display anyway).
 */
import type { Attention } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { PositionalPayload, Schedule } from '../../protocol/webview';

export const MAX_ROWS = 200_000;
export const MAX_SNAPSHOTS = 64;

export class PanelStore {
  rows: MetricRow[] = [];
  schedule: Schedule | null = null;
  attention: Attention | null = null;
  snapshots: Attention[] = [];
  positional: PositionalPayload | null = null;

  appendMetrics(rows: readonly MetricRow[], reset = false): void {
    if (reset) this.rows = [];
    for (const r of rows) {
      // A resumed run resends steps from its checkpoint: they replace the old ones.
      while (this.rows.length && this.rows[this.rows.length - 1].step >= r.step) this.rows.pop();
      this.rows.push(r);
    }
    if (this.rows.length > MAX_ROWS) {
      const half = this.rows.length >> 1;
      this.rows = [...this.rows.slice(0, half).filter((_, i) => i % 2 === 0), ...this.rows.slice(half)];
    }
  }

  /** Snapshots of the probe sentence, oldest first, one per step, at most MAX_SNAPSHOTS. */
  addSnapshots(items: readonly Attention[], replace = false): void {
    const byStep = new Map((replace ? [] : this.snapshots).map((s) => [s.source.step, s]));
    for (const s of items) byStep.set(s.source.step, s);
    this.snapshots = [...byStep.values()].sort((a, b) => a.source.step - b.source.step).slice(-MAX_SNAPSHOTS);
  }
}
