/**
 * registerPanels(context): registers a WebviewPanelSerializer per panel type (panels come back
 * after a window reload; package.json needs an `onWebviewPanel:<viewType>` activation event for
 * each) and returns the Panels hub the extension pushes data through. The hub keeps the data in
 * a store, so panels opened later start from it, and forwards it to the panels that are open.
 */
import * as vscode from 'vscode';
import type { Attention, HeadRef } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import type { PanelKind, PositionalPayload, Schedule } from '../../protocol/webview';
import type { BasePanel, PanelHost } from './base';
import type { PanelSlot } from './slot';
import { AttentionPanel, DashboardPanel, HeadInspectorPanel, PositionalPanel } from './panels';
import { PanelStore } from './store';

export { AttentionPanel, DashboardPanel, HeadInspectorPanel, PositionalPanel } from './panels';
export type { PanelHost } from './base';
export { PanelStore } from './store';

/** Each kind of panel's slot: the open one (`current`), its viewType, createOrShow and revive. */
export const PANEL_SLOTS: Record<PanelKind, PanelSlot<BasePanel>> = {
  dashboard: DashboardPanel.slot,
  attention: AttentionPanel.slot,
  head: HeadInspectorPanel.slot,
  positional: PositionalPanel.slot,
};

/** The viewTypes, for package.json's activationEvents (`onWebviewPanel:<viewType>`). */
export const PANEL_VIEW_TYPES = Object.values(PANEL_SLOTS).map((slot) => slot.viewType);

/** The kinds of panel open now. */
export function openPanelKinds(): PanelKind[] {
  return (Object.keys(PANEL_SLOTS) as PanelKind[]).filter((kind) => PANEL_SLOTS[kind].current !== undefined);
}

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
    return DashboardPanel.slot.createOrShow(this.host, column);
  }
  openAttention(column?: vscode.ViewColumn): AttentionPanel {
    return AttentionPanel.slot.createOrShow(this.host, column);
  }
  openHeadInspector(head?: HeadRef): HeadInspectorPanel {
    const p = HeadInspectorPanel.slot.createOrShow(this.host);
    if (head) p.inspect(head);
    return p;
  }
  openPositional(): PositionalPanel {
    return PositionalPanel.slot.createOrShow(this.host);
  }

  appendMetrics(rows: MetricRow[], reset = false): void {
    if (DashboardPanel.slot.current) DashboardPanel.slot.current.appendMetrics(rows, reset);
    else this.store.appendMetrics(rows, reset);
  }
  setSchedule(schedule: Schedule): void {
    if (DashboardPanel.slot.current) DashboardPanel.slot.current.setSchedule(schedule);
    else this.store.schedule = schedule;
  }
  showAttention(attention: Attention): void {
    this.store.attention = attention;
    AttentionPanel.slot.current?.showAttention(attention);
    HeadInspectorPanel.slot.current?.showAttention(attention);
  }
  addSnapshots(items: Attention[]): void {
    if (HeadInspectorPanel.slot.current) HeadInspectorPanel.slot.current.addSnapshots(items);
    else this.store.addSnapshots(items);
  }
  showPositional(positional: PositionalPayload): void {
    if (PositionalPanel.slot.current) PositionalPanel.slot.current.showPositional(positional);
    else this.store.positional = positional;
  }

  dispose(): void {
    AttentionPanel.onCreate = undefined;
    for (const slot of Object.values(PANEL_SLOTS)) slot.current?.dispose();
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
  for (const slot of Object.values(PANEL_SLOTS)) {
    const viewType = slot.viewType;
    context.subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(viewType, {
        async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown) {
          try {
            slot.revive(panel, panels.host, state);
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
