/**
 * What the panels show, kept on the extension side (no vscode import): a hidden webview drops
 * messages and a closed one forgets everything, so every panel's `state` snapshot is built from
 * here. The full metric series stays on disk (metrics.jsonl); this keeps at most MAX_ROWS rows,
 * thinning the oldest half when it overflows (the dashboard downsamples for display anyway).
 */
import type { AttentionPayload, MetricRow, PositionalPayload, ScheduleMsg } from '../../protocol/webview';

export type ScheduleBody = Omit<ScheduleMsg, 'type' | 'v'>;

export const MAX_ROWS = 200_000;
export const MAX_SNAPSHOTS = 64;

export class PanelStore {
  rows: MetricRow[] = [];
  schedule: ScheduleBody | null = null;
  attention: AttentionPayload | null = null;
  snapshots: AttentionPayload[] = [];
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
  addSnapshots(items: readonly AttentionPayload[], replace = false): void {
    const byStep = new Map((replace ? [] : this.snapshots).map((s) => [s.step, s]));
    for (const s of items) byStep.set(s.step, s);
    this.snapshots = [...byStep.values()].sort((a, b) => a.step - b.step).slice(-MAX_SNAPSHOTS);
  }
}
