/**
 * What the panels show, kept on the extension side (no vscode import): a hidden webview drops
 * messages and a closed one forgets everything, so every panel's `state` snapshot is built from
 * here. It holds the selected run's data only (the Viewer fills it): its metrics, schedule and
 * probe history, the attention the selection asks for, and the header and step cursor every panel
 * shows. The full metric series stays on disk (metrics.jsonl); this keeps at most MAX_ROWS rows,
 * thinning the oldest half when it overflows (the dashboard downsamples for display anyway).
 */
import type { Attention } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { HeadRoles, OverlayRun, PositionalPayload, Schedule, ViewHeader } from '../../protocol/webview';
import { mergeSnapshots } from '../../algorithms/history';
import { headRoles } from '../../protocol/roles';
import type { RunEvent, TelemetryRow } from '../../protocol/telemetry';

export const MAX_ROWS = 200_000;

export class PanelStore {
  header: ViewHeader | null = null;
  rows: MetricRow[] = [];
  schedule: Schedule | null = null;
  attention: Attention | null = null;
  snapshots: Attention[] = [];
  positional: PositionalPayload | null = null;
  /** The shared step cursor: the step the inspector's slider and the dashboard's marker show. */
  cursor: number | null = null;
  telemetry: TelemetryRow[] = [];
  events: RunEvent[] = [];
  /** Other runs the dashboard draws with the selected one. */
  overlays: OverlayRun[] = [];
  /** The attention view's toggle: the views draw value-weighted attention (a view choice, kept across runs). */
  valueWeighted = false;

  /** Forgets the previous run's data (a new selection). */
  reset(): void {
    this.overlays = [];
    this.rows = [];
    this.schedule = null;
    this.attention = null;
    this.snapshots = [];
    this.cursor = null;
    this.telemetry = [];
    this.events = [];
  }

  /** Appends telemetry rows (a resumed run's rows from its checkpoint replace the later ones). */
  addTelemetry(rows: readonly TelemetryRow[]): void {
    for (const r of rows) {
      while (this.telemetry.length && this.telemetry[this.telemetry.length - 1]!.step >= r.step) this.telemetry.pop();
      this.telemetry.push(r);
    }
  }

  /** Each head's roles at `step`: from the newest telemetry row at or before it. */
  rolesAt(step: number): HeadRoles[] {
    let row: TelemetryRow | undefined;
    for (const r of this.telemetry) if (r.step <= step) row = r;
    if (!row) return [];
    const roles = headRoles(row);
    return row.heads.map((head, i) => ({ head, roles: roles[i] ?? [] })).filter((h) => h.roles.length);
  }

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

  /** Snapshots of the probe pair merged into the history (algorithms/history.ts). */
  addSnapshots(items: readonly Attention[], replace = false): void {
    this.snapshots = mergeSnapshots(replace ? [] : this.snapshots, items);
  }

  /** The logged loss at each snapshot step (for the inspector's slider). */
  snapshotLosses(): { step: number; loss: number }[] {
    const byStep = new Map(this.rows.map((r) => [r.step, r.loss]));
    return this.snapshots.flatMap((s) => {
      const loss = byStep.get(s.source.step);
      return loss === undefined ? [] : [{ step: s.source.step, loss }];
    });
  }

  /** The loss logged at `step`, if any. */
  lossAt(step: number): number | undefined {
    for (let i = this.rows.length - 1; i >= 0; i--) if (this.rows[i].step === step) return this.rows[i].loss;
    return undefined;
  }
}
