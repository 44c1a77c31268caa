/**
 * The four panels. Each is one per window (its `slot`, slot.ts: createOrShow, revive, current) and
 * builds its whole `state` from the shared store; what changes afterwards goes out as small
 * messages (metrics appended, new attention, a snapshot, the cursor).
 */
import * as vscode from 'vscode';
import type { Attention, HeadRef } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { RunEvent, TelemetryRow } from '../../protocol/telemetry';
import type { PanelState, PositionalPayload } from '../../protocol/webview';
import { BasePanel } from './base';
import { PanelSlot } from './slot';

export class DashboardPanel extends BasePanel {
  static readonly slot = new PanelSlot({
    kind: 'dashboard',
    viewType: 'attentionDebugger.dashboard',
    title: 'Training Dashboard',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new DashboardPanel(panel, host, 'dashboard'),
  });

  /** Appended logged steps of the selected run. */
  appendMetrics(rows: MetricRow[]): void {
    this.post({ type: 'metrics', rows });
  }

  showCursor(step: number, loss?: number): void {
    this.post({ type: 'cursor', step, ...(loss !== undefined ? { loss } : {}) });
  }

  showEvents(events: RunEvent[]): void {
    this.post({ type: 'events', events });
  }

  showHover(step: number | null): void {
    this.post({ type: 'hoverStep', step });
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    return {
      panel: 'dashboard',
      header: s.header,
      rows: s.rows,
      schedule: s.schedule,
      cursor: s.cursor,
      events: s.events,
    };
  }
}

/** Heads × steps: a telemetry statistic per head over training (webview/heads.ts). */
export class HeadsPanel extends BasePanel {
  static readonly slot = new PanelSlot({
    kind: 'heads',
    viewType: 'attentionDebugger.heads',
    title: 'Heads',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new HeadsPanel(panel, host, 'heads'),
  });

  addTelemetry(rows: TelemetryRow[]): void {
    this.post({ type: 'telemetry', rows });
  }

  showEvents(events: RunEvent[]): void {
    this.post({ type: 'events', events });
  }

  showCursor(step: number): void {
    this.post({ type: 'cursor', step });
  }

  showHover(step: number | null): void {
    this.post({ type: 'hoverStep', step });
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    return { panel: 'heads', header: s.header, telemetry: s.telemetry, events: s.events, cursor: s.cursor };
  }
}

export class AttentionPanel extends BasePanel {
  static readonly slot: PanelSlot<AttentionPanel> = new PanelSlot({
    kind: 'attention',
    viewType: 'attentionDebugger.attention',
    title: 'Attention',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new AttentionPanel(panel, host, 'attention'),
    restore: (p, saved) => {
      p.selected = saved?.head ?? null;
    },
  });
  private selected: HeadRef | null = null;

  /** Shows every layer × head of one sentence pair. */
  showAttention(attention: Attention): void {
    this.post({ type: 'attention', ...attention, roles: this.host.store.rolesAt(attention.source.step) });
  }

  select(ref: HeadRef): void {
    this.selected = ref;
  }

  override persisted(): { head?: HeadRef } {
    return this.selected ? { head: this.selected } : {};
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    const roles = s.attention ? s.rolesAt(s.attention.source.step) : [];
    return { panel: 'attention', header: s.header, attention: s.attention, selected: this.selected, roles };
  }
}

export class HeadInspectorPanel extends BasePanel {
  static readonly slot: PanelSlot<HeadInspectorPanel> = new PanelSlot({
    kind: 'head',
    viewType: 'attentionDebugger.headInspector',
    title: 'Head Inspector',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new HeadInspectorPanel(panel, host, 'head'),
    restore: (p, saved) => {
      if (saved?.head) p.inspect(saved.head);
    },
  });
  private head: HeadRef | null = null;

  /** The head shown (for exports from the extension side). */
  get currentHead(): HeadRef | null {
    return this.head;
  }

  override persisted(): { head?: HeadRef } {
    return this.head ? { head: this.head } : {};
  }

  /** Shows this head (of the current attention and of every snapshot). */
  inspect(head: HeadRef): void {
    this.head = head;
    this.panel.title = `Head ${head.kind} L${head.layer + 1} H${head.head + 1}`;
    this.sendState();
  }

  showAttention(attention: Attention): void {
    this.post({ type: 'attention', ...attention, roles: this.host.store.rolesAt(attention.source.step) });
  }

  /** The whole probe history (merged by step in the store). */
  showSnapshots(items: Attention[]): void {
    this.post({ type: 'snapshots', items });
  }

  showCursor(step: number, loss?: number): void {
    this.post({ type: 'cursor', step, ...(loss !== undefined ? { loss } : {}) });
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    return {
      panel: 'head',
      header: s.header,
      head: this.head,
      attention: s.attention,
      snapshots: s.snapshots,
      losses: s.snapshotLosses(),
      cursor: s.cursor,
    };
  }
}

export class PositionalPanel extends BasePanel {
  static readonly slot = new PanelSlot({
    kind: 'positional',
    viewType: 'attentionDebugger.positional',
    title: 'Positional Encoding',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new PositionalPanel(panel, host, 'positional'),
  });

  showPositional(positional: PositionalPayload): void {
    this.post({ type: 'positional', ...positional });
  }

  protected snapshot(): PanelState {
    return { panel: 'positional', header: this.host.store.header, positional: this.host.store.positional };
  }
}
