/**
 * registerPanels(context): registers a WebviewPanelSerializer per panel type (panels come back
 * after a window reload; package.json needs an `onWebviewPanel:<viewType>` activation event for
 * each) and returns the Panels hub the Viewer pushes data through. The hub keeps the data in the
 * store, so panels opened later start from it, and forwards changes to the panels that are open.
 * What a page asks that changes the selection (a head, the cursor, an input) comes out as
 * `onDidRequest`; what else a page asks its own panel answers (answerWith gives it the engine).
 */
import * as vscode from 'vscode';
import type { Attention, HeadRef } from '../../protocol/attention';
import type { BeamTreeView } from '../../protocol/beamTree';
import type { MetricRow } from '../../protocol/metrics';
import type { RunEvent, TelemetryRow } from '../../protocol/telemetry';
import type { OverlayRun, PanelKind, PositionalPayload, Schedule, ViewHeader } from '../../protocol/webview';
import type { BasePanel, PanelAnswers, PanelHost, PanelRequest } from './base';
import type { PanelSlot } from './slot';
import { AttentionPanel } from './attention/panel';
import { DashboardPanel } from './dashboard/panel';
import { HeadInspectorPanel } from './head/panel';
import { HeadsPanel } from './heads/panel';
import { PositionalPanel } from './positional/panel';
import { PanelStore } from './store';
import { followAttentionColumn } from './column';
import { type LiveBatch, LivePosts } from './live';
import { BeamTreePanel } from './beam/panel';
import { ImportancePanel } from './importance/panel';
import { AblationsPanel } from './ablations/panel';
import { RunCheckPanel } from './runCheck/panel';
import { GlobalPanel } from './global/panel';

export { AttentionPanel } from './attention/panel';
export { DashboardPanel } from './dashboard/panel';
export { HeadInspectorPanel } from './head/panel';
export { HeadsPanel } from './heads/panel';
export { PositionalPanel } from './positional/panel';
export type { PanelAnswers, PanelHost } from './base';
export { PanelStore } from './store';
export { BeamTreePanel } from './beam/panel';
export { ImportancePanel } from './importance/panel';
export { AblationsPanel } from './ablations/panel';
export { RunCheckPanel } from './runCheck/panel';
export { GlobalPanel } from './global/panel';

/** Each kind of panel's slot: the open one (`current`), its viewType, createOrShow and revive. */
export const PANEL_SLOTS: Record<PanelKind, PanelSlot<BasePanel>> = {
  dashboard: DashboardPanel.slot,
  attention: AttentionPanel.slot,
  head: HeadInspectorPanel.slot,
  positional: PositionalPanel.slot,
  heads: HeadsPanel.slot,
  beam: BeamTreePanel.slot,
  importance: ImportancePanel.slot,
  ablations: AblationsPanel.slot,
  runCheck: RunCheckPanel.slot,
  global: GlobalPanel.slot,
};

/** The viewTypes, for package.json's activationEvents (`onWebviewPanel:<viewType>`). */
export const PANEL_VIEW_TYPES = Object.values(PANEL_SLOTS).map((slot) => slot.viewType);

/** The kinds of panel open now. */
export function openPanelKinds(): PanelKind[] {
  return (Object.keys(PANEL_SLOTS) as PanelKind[]).filter((kind) => PANEL_SLOTS[kind].current !== undefined);
}

export class Panels implements vscode.Disposable {
  readonly store = new PanelStore();
  private readonly live = new LivePosts((b) => this.postLive(b));
  readonly host: PanelHost;
  private readonly requests = new vscode.EventEmitter<{ from: PanelKind; request: PanelRequest }>();
  /** A page asked for something: a head opened, the cursor moved, an input's attention. */
  readonly onDidRequest = this.requests.event;
  private readonly revived = new vscode.EventEmitter<PanelKind>();
  /** VS Code restored a panel after a window reload: it needs its data again. */
  readonly onDidRevive = this.revived.event;

  private answers: PanelAnswers | undefined;
  private readonly pageScripts: string[] = [];

  constructor(extensionUri: vscode.Uri, log: (line: string) => void) {
    this.host = {
      extensionUri,
      store: this.store,
      log,
      request: (from, request) => this.requests.fire({ from, request }),
      answers: () => this.answers,
      pageScripts: this.pageScripts,
    };
    followAttentionColumn(() => AttentionPanel.slot.current?.panel.viewColumn);
  }

  /**
   * For the test harness: a script of dist/webview that every page opened from now on loads
   * before its own (test/vscode's page hook, which answers what a page drew). Never called by the
   * product.
   */
  addPageScript(name: string): void {
    if (!this.pageScripts.includes(name)) this.pageScripts.push(name);
  }

  /** What the panels answer their pages' own requests with (the Viewer's engine and selection). */
  answerWith(answers: PanelAnswers): void {
    this.answers = answers;
  }

  /** Each kind's slot (its open panel): for other extensions and the tests, which load their own copy of this module. */
  readonly slots = PANEL_SLOTS;

  openDashboard(column?: vscode.ViewColumn): DashboardPanel {
    return DashboardPanel.slot.createOrShow(this.host, column);
  }
  openAttention(column?: vscode.ViewColumn): AttentionPanel {
    return AttentionPanel.slot.createOrShow(this.host, column);
  }
  openHeadInspector(head?: HeadRef): HeadInspectorPanel {
    const p = HeadInspectorPanel.slot.createOrShow(this.host);
    if (head) {
      p.inspect(head);
      AttentionPanel.slot.current?.select(head);
    }
    return p;
  }
  openPositional(): PositionalPanel {
    return PositionalPanel.slot.createOrShow(this.host);
  }
  openHeads(): HeadsPanel {
    return HeadsPanel.slot.createOrShow(this.host);
  }
  /** Opens the Beam Tree panel on a tree. */
  openBeamTree(tree: BeamTreeView): BeamTreePanel {
    const p = BeamTreePanel.slot.createOrShow(this.host);
    p.showTree(tree);
    return p;
  }

  /** Opens the Head Importance panel on `runDir`'s newest saved report (the selected run's when absent). */
  openImportance(runDir?: string): ImportancePanel {
    const p = ImportancePanel.slot.createOrShow(this.host);
    if (runDir) p.showRun(runDir);
    return p;
  }

  /** Opens the Ablation Results panel on `runDir`'s ablations (the selected run's when absent). */
  openAblations(runDir?: string): AblationsPanel {
    const p = AblationsPanel.slot.createOrShow(this.host);
    if (runDir) p.showRun(runDir);
    return p;
  }

  /** Opens the Run Check panel on `runDir`, checked anew (the selected run when absent). */
  /** Opens the Global Q/K view on `head` of `runDir` (at `step`, else the newest checkpoint). */
  openGlobal(runDir: string, head: HeadRef, step?: number): GlobalPanel {
    const p = GlobalPanel.slot.createOrShow(this.host);
    p.showHead(runDir, head, step);
    return p;
  }

  openRunCheck(runDir?: string): RunCheckPanel {
    const p = RunCheckPanel.slot.createOrShow(this.host);
    if (runDir) p.showRun(runDir);
    return p;
  }

  /** A new selection: the store holds this run's data now, and every open panel gets it whole. */
  showRun(
    header: ViewHeader,
    run: {
      rows: MetricRow[];
      schedule: Schedule | null;
      snapshots: Attention[];
      telemetry?: TelemetryRow[];
      events?: RunEvent[];
    },
  ): void {
    this.store.reset();
    this.store.header = header;
    this.store.appendMetrics(run.rows);
    this.store.schedule = run.schedule;
    this.store.addSnapshots(run.snapshots);
    this.store.addTelemetry(run.telemetry ?? []);
    this.store.events = [...(run.events ?? [])];
    ImportancePanel.slot.current?.followSelection();
    AblationsPanel.slot.current?.followSelection();
    RunCheckPanel.slot.current?.followSelection();
    this.refresh();
  }

  /** What the headers say changed (the step, the input, live or not): every panel redraws from the store. */
  setHeader(header: ViewHeader): void {
    this.store.header = header;
    this.refresh();
  }

  /** Sends every open panel its whole state again (it holds what live posts were waiting). */
  refresh(): void {
    this.live.clear('all');
    for (const slot of Object.values(PANEL_SLOTS)) slot.current?.sendState();
  }

  appendMetrics(rows: MetricRow[]): void {
    this.store.appendMetrics(rows);
    DashboardPanel.slot.current?.appendMetrics(rows);
    HeadsPanel.slot.current?.appendMetrics(rows);
  }
  /** Shows an attention outright (a decode, a step chosen): a live one still waiting is dropped. */
  showAttention(attention: Attention): void {
    this.live.clear('attention');
    this.store.attention = attention;
    AttentionPanel.slot.current?.showAttention(attention);
    HeadInspectorPanel.slot.current?.showAttention(attention);
  }
  /**
   * A live snapshot joins the probe history; `shown`: it is also the attention the views show (the
   * probe at the newest step is selected). Posted with the next live post (live.ts).
   */
  addLiveSnapshot(attention: Attention, shown: boolean): void {
    this.store.addSnapshots([attention]);
    if (shown) this.store.attention = attention;
    this.live.add({ snapshots: [attention], ...(shown ? { attention } : {}) });
  }
  /** The shared step cursor: the dashboard and the Heads panel mark it, the inspector's slider goes there. */
  showCursor(step: number): void {
    this.store.cursor = step;
    const loss = this.store.lossAt(step);
    DashboardPanel.slot.current?.showCursor(step, loss);
    HeadInspectorPanel.slot.current?.showCursor(step, loss);
    HeadsPanel.slot.current?.showCursor(step);
  }
  /** The step under the pointer in one panel with a step axis, highlighted in the other. */
  showHover(from: PanelKind, step: number | null): void {
    if (from !== 'dashboard') DashboardPanel.slot.current?.showHover(step);
    if (from !== 'heads') HeadsPanel.slot.current?.showHover(step);
  }
  /** Other runs drawn on the dashboard with the selected one ([] clears them). */
  showOverlays(runs: OverlayRun[]): void {
    this.store.overlays = runs;
    DashboardPanel.slot.current?.showOverlays(runs);
  }
  addTelemetry(rows: TelemetryRow[]): void {
    this.store.addTelemetry(rows);
    this.live.add({ telemetry: rows });
  }

  /** Posts what live updates came since the last post (at most every LIVE_POST_MS). */
  private postLive(b: LiveBatch): void {
    // The new snapshots alone: the page merges them as the store does (algorithms/history.ts).
    if (b.snapshots.length) HeadInspectorPanel.slot.current?.showSnapshots(b.snapshots);
    if (b.attention) {
      AttentionPanel.slot.current?.showAttention(b.attention);
      HeadInspectorPanel.slot.current?.showAttention(b.attention);
    }
    if (b.telemetry.length) HeadsPanel.slot.current?.addTelemetry(b.telemetry);
  }
  addEvents(events: RunEvent[]): void {
    this.store.events.push(...events);
    DashboardPanel.slot.current?.showEvents(events);
    HeadsPanel.slot.current?.showEvents(events);
  }
  showPositional(positional: PositionalPayload): void {
    this.store.positional = positional;
    PositionalPanel.slot.current?.showPositional(positional);
  }

  dispose(): void {
    this.live.dispose();
    for (const slot of Object.values(PANEL_SLOTS)) slot.current?.dispose();
    this.requests.dispose();
    this.revived.dispose();
  }

  /** Called by the serializers. */
  fireRevived(kind: PanelKind): void {
    this.revived.fire(kind);
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
  for (const [kind, slot] of Object.entries(PANEL_SLOTS) as [PanelKind, PanelSlot<BasePanel>][]) {
    const viewType = slot.viewType;
    context.subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(viewType, {
        async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown) {
          try {
            slot.revive(panel, panels.host, state);
            panels.fireRevived(kind);
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
