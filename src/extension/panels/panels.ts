/**
 * The four panels. Each is one per window (its `slot`, slot.ts: createOrShow, revive, current),
 * and has a public method per kind of data it shows (the data also goes to the shared store, so
 * a panel opened later, or shown again after being hidden, gets it in its `state`).
 */
import * as vscode from 'vscode';
import type { Attention, HeadRef } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { PanelState, PositionalPayload, Schedule } from '../../protocol/webview';
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

  /** Appends logged steps (`reset` starts a new run). */
  appendMetrics(rows: MetricRow[], reset = false): void {
    this.host.store.appendMetrics(rows, reset);
    this.post({ type: 'metrics', rows, ...(reset ? { reset } : {}) });
  }

  /** The planned learning-rate curve of the whole run. */
  setSchedule(schedule: Schedule): void {
    this.host.store.schedule = schedule;
    this.post({ type: 'schedule', ...schedule });
  }

  protected snapshot(): PanelState {
    return { panel: 'dashboard', rows: this.host.store.rows, schedule: this.host.store.schedule };
  }
}

export class AttentionPanel extends BasePanel {
  static readonly slot: PanelSlot<AttentionPanel> = new PanelSlot({
    kind: 'attention',
    viewType: 'attentionDebugger.attention',
    title: 'Attention',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => {
      const p = new AttentionPanel(panel, host, 'attention');
      p.disposables.add(p.openHeadEmitter);
      AttentionPanel.onCreate?.(p);
      return p;
    },
    restore: (p, saved) => {
      p.selected = saved?.head ?? null;
    },
  });
  private readonly openHeadEmitter = new vscode.EventEmitter<HeadRef>();
  /** The user clicked a head thumbnail. */
  readonly onDidOpenHead = this.openHeadEmitter.event;
  private selected: HeadRef | null = null;

  /** Set by registerPanels: called for every new attention panel (wires openHead). */
  static onCreate: ((p: AttentionPanel) => void) | undefined;

  /** Shows every layer × head of one sentence pair. */
  showAttention(attention: Attention): void {
    this.host.store.attention = attention;
    this.post({ type: 'attention', ...attention });
  }

  protected override onOpenHead(ref: HeadRef): void {
    this.selected = ref;
    this.openHeadEmitter.fire(ref);
  }

  protected snapshot(): PanelState {
    return { panel: 'attention', attention: this.host.store.attention, selected: this.selected };
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
      p.head = saved?.head ?? null;
    },
  });
  private head: HeadRef | null = null;

  /** The head shown (for exports from the extension side). */
  get currentHead(): HeadRef | null {
    return this.head;
  }

  /** Shows this head (of the latest attention and of every snapshot). */
  inspect(head: HeadRef): void {
    this.head = head;
    this.panel.title = `Head ${head.kind} L${head.layer + 1} H${head.head + 1}`;
    this.sendState();
  }

  showAttention(attention: Attention): void {
    this.host.store.attention = attention;
    this.post({ type: 'attention', ...attention });
  }

  /** Snapshots of the probe sentence at earlier steps (merged by step with those already held). */
  addSnapshots(items: Attention[]): void {
    this.host.store.addSnapshots(items);
    this.post({ type: 'snapshots', items: this.host.store.snapshots });
  }

  protected snapshot(): PanelState {
    return {
      panel: 'head',
      head: this.head,
      attention: this.host.store.attention,
      snapshots: this.host.store.snapshots,
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
    this.host.store.positional = positional;
    this.post({ type: 'positional', ...positional });
  }

  protected snapshot(): PanelState {
    return { panel: 'positional', positional: this.host.store.positional };
  }
}
