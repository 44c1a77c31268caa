/**
 * The four panels. Each is a singleton per window: createOrShow reveals the open one or makes
 * it, revive adopts a panel VS Code restored after a reload (its saved UI state validated first),
 * and a public method per kind of data pushes it (the data also goes to the shared store, so a
 * panel opened later, or shown again after being hidden, gets it in its `state`).
 */
import * as vscode from 'vscode';
import type { AttentionPayload, HeadRef, MetricRow, PanelState, PositionalPayload } from '../../protocol/webview';
import { BasePanel, type PanelHost, webviewOptions } from './base';
import type { ScheduleBody } from './store';

function create(viewType: string, title: string, host: PanelHost, column: vscode.ViewColumn): vscode.WebviewPanel {
  return vscode.window.createWebviewPanel(viewType, title, column, webviewOptions(host.extensionUri));
}

export class DashboardPanel extends BasePanel {
  static readonly viewType = 'attentionDebugger.dashboard';
  static readonly title = 'Training Dashboard';
  static current: DashboardPanel | undefined;

  static createOrShow(host: PanelHost, column = vscode.ViewColumn.Active): DashboardPanel {
    if (DashboardPanel.current) {
      DashboardPanel.current.reveal(column);
      return DashboardPanel.current;
    }
    return DashboardPanel.adopt(create(DashboardPanel.viewType, DashboardPanel.title, host, column), host);
  }

  static revive(panel: vscode.WebviewPanel, host: PanelHost, state: unknown): DashboardPanel {
    BasePanel.restoredState(host, 'dashboard', state);
    DashboardPanel.current?.dispose();
    return DashboardPanel.adopt(panel, host);
  }

  private static adopt(panel: vscode.WebviewPanel, host: PanelHost): DashboardPanel {
    const p = new DashboardPanel(panel, host, 'dashboard');
    DashboardPanel.current = p;
    p.onDidDispose(() => {
      if (DashboardPanel.current === p) DashboardPanel.current = undefined;
    });
    return p;
  }

  /** Appends logged steps (`reset` starts a new run). */
  appendMetrics(rows: MetricRow[], reset = false): void {
    this.host.store.appendMetrics(rows, reset);
    this.post({ type: 'metrics', rows, ...(reset ? { reset } : {}) });
  }

  /** The planned learning-rate curve of the whole run. */
  setSchedule(schedule: ScheduleBody): void {
    this.host.store.schedule = schedule;
    this.post({ type: 'schedule', ...schedule });
  }

  protected snapshot(): PanelState {
    return { panel: 'dashboard', rows: this.host.store.rows, schedule: this.host.store.schedule };
  }
}

export class AttentionPanel extends BasePanel {
  static readonly viewType = 'attentionDebugger.attention';
  static readonly title = 'Attention';
  static current: AttentionPanel | undefined;
  private readonly openHeadEmitter = new vscode.EventEmitter<HeadRef>();
  /** The user clicked a head thumbnail. */
  readonly onDidOpenHead = this.openHeadEmitter.event;
  private selected: HeadRef | null = null;

  static createOrShow(host: PanelHost, column = vscode.ViewColumn.Active): AttentionPanel {
    if (AttentionPanel.current) {
      AttentionPanel.current.reveal(column);
      return AttentionPanel.current;
    }
    return AttentionPanel.adopt(create(AttentionPanel.viewType, AttentionPanel.title, host, column), host);
  }

  static revive(panel: vscode.WebviewPanel, host: PanelHost, state: unknown): AttentionPanel {
    const saved = BasePanel.restoredState(host, 'attention', state);
    AttentionPanel.current?.dispose();
    const p = AttentionPanel.adopt(panel, host);
    p.selected = saved?.head ?? null;
    return p;
  }

  /** Set by registerPanels: called for every new attention panel (wires openHead). */
  static onCreate: ((p: AttentionPanel) => void) | undefined;

  private static adopt(panel: vscode.WebviewPanel, host: PanelHost): AttentionPanel {
    const p = new AttentionPanel(panel, host, 'attention');
    p.disposables.add(p.openHeadEmitter);
    AttentionPanel.current = p;
    p.onDidDispose(() => {
      if (AttentionPanel.current === p) AttentionPanel.current = undefined;
    });
    AttentionPanel.onCreate?.(p);
    return p;
  }

  /** Shows every layer × head of one sentence pair. */
  showAttention(attention: AttentionPayload): void {
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
  static readonly viewType = 'attentionDebugger.headInspector';
  static readonly title = 'Head Inspector';
  static current: HeadInspectorPanel | undefined;
  private head: HeadRef | null = null;

  static createOrShow(host: PanelHost, column = vscode.ViewColumn.Beside): HeadInspectorPanel {
    if (HeadInspectorPanel.current) {
      HeadInspectorPanel.current.reveal(column);
      return HeadInspectorPanel.current;
    }
    return HeadInspectorPanel.adopt(create(HeadInspectorPanel.viewType, HeadInspectorPanel.title, host, column), host);
  }

  static revive(panel: vscode.WebviewPanel, host: PanelHost, state: unknown): HeadInspectorPanel {
    const saved = BasePanel.restoredState(host, 'head', state);
    HeadInspectorPanel.current?.dispose();
    const p = HeadInspectorPanel.adopt(panel, host);
    p.head = saved?.head ?? null;
    return p;
  }

  private static adopt(panel: vscode.WebviewPanel, host: PanelHost): HeadInspectorPanel {
    const p = new HeadInspectorPanel(panel, host, 'head');
    HeadInspectorPanel.current = p;
    p.onDidDispose(() => {
      if (HeadInspectorPanel.current === p) HeadInspectorPanel.current = undefined;
    });
    return p;
  }

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

  showAttention(attention: AttentionPayload): void {
    this.host.store.attention = attention;
    this.post({ type: 'attention', ...attention });
  }

  /** Snapshots of the probe sentence at earlier steps (merged by step with those already held). */
  addSnapshots(items: AttentionPayload[]): void {
    this.host.store.addSnapshots(items);
    this.post({ type: 'snapshots', items: this.host.store.snapshots });
  }

  protected snapshot(): PanelState {
    return { panel: 'head', head: this.head, attention: this.host.store.attention, snapshots: this.host.store.snapshots };
  }
}

export class PositionalPanel extends BasePanel {
  static readonly viewType = 'attentionDebugger.positional';
  static readonly title = 'Positional Encoding';
  static current: PositionalPanel | undefined;

  static createOrShow(host: PanelHost, column = vscode.ViewColumn.Active): PositionalPanel {
    if (PositionalPanel.current) {
      PositionalPanel.current.reveal(column);
      return PositionalPanel.current;
    }
    return PositionalPanel.adopt(create(PositionalPanel.viewType, PositionalPanel.title, host, column), host);
  }

  static revive(panel: vscode.WebviewPanel, host: PanelHost, state: unknown): PositionalPanel {
    BasePanel.restoredState(host, 'positional', state);
    PositionalPanel.current?.dispose();
    return PositionalPanel.adopt(panel, host);
  }

  private static adopt(panel: vscode.WebviewPanel, host: PanelHost): PositionalPanel {
    const p = new PositionalPanel(panel, host, 'positional');
    PositionalPanel.current = p;
    p.onDidDispose(() => {
      if (PositionalPanel.current === p) PositionalPanel.current = undefined;
    });
    return p;
  }

  showPositional(positional: PositionalPayload): void {
    this.host.store.positional = positional;
    this.post({ type: 'positional', ...positional });
  }

  protected snapshot(): PanelState {
    return { panel: 'positional', positional: this.host.store.positional };
  }
}
