/**
 * registerPanels(context): registers a WebviewPanelSerializer per panel type (panels come back
 * after a window reload; package.json needs an `onWebviewPanel:<viewType>` activation event for
 * each) and returns the Panels hub the extension pushes data through. The hub keeps the data in
 * a store, so panels opened later start from it, and forwards it to the panels that are open.
 */
import * as vscode from 'vscode';
import type { AttentionPayload, HeadRef, MetricRow, PositionalPayload } from '../../protocol/webview';
import type { PanelHost } from './base';
import { AttentionPanel, DashboardPanel, HeadInspectorPanel, PositionalPanel } from './panels';
import { PanelStore, type ScheduleBody } from './store';

export { AttentionPanel, DashboardPanel, HeadInspectorPanel, PositionalPanel } from './panels';
export type { PanelHost } from './base';
export { PanelStore } from './store';

/** The viewTypes, for package.json's activationEvents (`onWebviewPanel:<viewType>`). */
export const PANEL_VIEW_TYPES = [DashboardPanel.viewType, AttentionPanel.viewType, HeadInspectorPanel.viewType, PositionalPanel.viewType] as const;

export class Panels implements vscode.Disposable {
  readonly store = new PanelStore();
  readonly host: PanelHost;

  constructor(extensionUri: vscode.Uri, log: (line: string) => void) {
    this.host = { extensionUri, store: this.store, log };
    // Clicking a head in the attention view opens it in the inspector, beside.
    AttentionPanel.onCreate = (p) => {
      p.onDidOpenHead((ref) => this.openHeadInspector(ref));
    };
  }

  openDashboard(column?: vscode.ViewColumn): DashboardPanel {
    return DashboardPanel.createOrShow(this.host, column);
  }
  openAttention(column?: vscode.ViewColumn): AttentionPanel {
    return AttentionPanel.createOrShow(this.host, column);
  }
  openHeadInspector(head?: HeadRef): HeadInspectorPanel {
    const p = HeadInspectorPanel.createOrShow(this.host);
    if (head) p.inspect(head);
    return p;
  }
  openPositional(): PositionalPanel {
    return PositionalPanel.createOrShow(this.host);
  }

  appendMetrics(rows: MetricRow[], reset = false): void {
    if (DashboardPanel.current) DashboardPanel.current.appendMetrics(rows, reset);
    else this.store.appendMetrics(rows, reset);
  }
  setSchedule(schedule: ScheduleBody): void {
    if (DashboardPanel.current) DashboardPanel.current.setSchedule(schedule);
    else this.store.schedule = schedule;
  }
  showAttention(attention: AttentionPayload): void {
    this.store.attention = attention;
    AttentionPanel.current?.showAttention(attention);
    HeadInspectorPanel.current?.showAttention(attention);
  }
  addSnapshots(items: AttentionPayload[]): void {
    if (HeadInspectorPanel.current) HeadInspectorPanel.current.addSnapshots(items);
    else this.store.addSnapshots(items);
  }
  showPositional(positional: PositionalPayload): void {
    if (PositionalPanel.current) PositionalPanel.current.showPositional(positional);
    else this.store.positional = positional;
  }

  dispose(): void {
    AttentionPanel.onCreate = undefined;
    for (const p of [DashboardPanel.current, AttentionPanel.current, HeadInspectorPanel.current, PositionalPanel.current]) p?.dispose();
  }
}

/**
 * Registers the serializers and returns the hub. Everything goes to context.subscriptions.
 * `log` defaults to an "Attention Debugger Panels" output channel.
 */
export function registerPanels(context: vscode.ExtensionContext, log?: (line: string) => void): Panels {
  let write = log;
  if (!write) {
    const channel = vscode.window.createOutputChannel('Attention Debugger Panels');
    context.subscriptions.push(channel);
    write = (line) => channel.appendLine(line);
  }
  const panels = new Panels(context.extensionUri, write);
  context.subscriptions.push(panels);
  const revivers: [string, (panel: vscode.WebviewPanel, state: unknown) => void][] = [
    [DashboardPanel.viewType, (p, s) => DashboardPanel.revive(p, panels.host, s)],
    [AttentionPanel.viewType, (p, s) => AttentionPanel.revive(p, panels.host, s)],
    [HeadInspectorPanel.viewType, (p, s) => HeadInspectorPanel.revive(p, panels.host, s)],
    [PositionalPanel.viewType, (p, s) => PositionalPanel.revive(p, panels.host, s)],
  ];
  for (const [viewType, revive] of revivers) {
    context.subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(viewType, {
        async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown) {
          try {
            revive(panel, state);
          } catch (err) {
            write!(`could not restore ${viewType}: ${(err as Error).message}`);
            panel.dispose();
          }
        },
      }),
    );
  }
  return panels;
}
