/**
 * Five of the six panel classes: the training dashboard, the Heads panel, the attention view, the
 * head inspector and the positional-encoding view (the sixth, the Beam Tree, is beamTree.ts). Each
 * is one per window (its `slot`, slot.ts: createOrShow, revive, current) and builds its whole
 * `state` from the shared store; what changes afterwards goes out as small messages (metrics
 * appended, new attention, a snapshot, the cursor).
 */
import * as vscode from 'vscode';
import type { Ablation, AblationEffect } from '../../protocol/ablation';
import { type Attention, headId, type HeadRef } from '../../protocol/attention';
import type { MetricRow } from '../../protocol/metrics';
import {
  type AttentionFromPage,
  type AttentionToPage,
  attentionPage,
  type RequestBlockMsg,
} from '../../protocol/pages/attention';
import { type DashboardFromPage, type DashboardToPage, dashboardPage } from '../../protocol/pages/dashboard';
import { type HeadFromPage, type HeadToPage, headPage } from '../../protocol/pages/head';
import { type HeadsFromPage, type HeadsToPage, headsPage } from '../../protocol/pages/heads';
import { type PositionalFromPage, type PositionalToPage, positionalPage } from '../../protocol/pages/positional';
import type { RunEvent, TelemetryRow } from '../../protocol/telemetry';
import { ablationEffect } from '../../protocol/training';
import type { OverlayRun, PanelState, PositionalPayload } from '../../protocol/webview';
import { requestBlock } from '../blocks';
import { BasePanel } from './base';
import { PanelSlot } from './slot';

export class DashboardPanel extends BasePanel<DashboardToPage, DashboardFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'dashboard',
    viewType: 'attentionDebugger.dashboard',
    title: 'Training Dashboard',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new DashboardPanel(panel, host, dashboardPage),
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

  showOverlays(runs: OverlayRun[]): void {
    this.post({ type: 'overlay', runs });
  }

  /** Its page's asks all change the selection: the Viewer answers them. */
  protected answer(m: DashboardFromPage): void {
    this.host.request(this.kind, m);
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
      overlays: s.overlays,
    };
  }
}

/** Heads × steps: a telemetry statistic per head over training (webview/heads.ts). */
export class HeadsPanel extends BasePanel<HeadsToPage, HeadsFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'heads',
    viewType: 'attentionDebugger.heads',
    title: 'Heads',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new HeadsPanel(panel, host, headsPage),
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

  /** Its page's asks all change the selection: the Viewer answers them. */
  protected answer(m: HeadsFromPage): void {
    this.host.request(this.kind, m);
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    return { panel: 'heads', header: s.header, telemetry: s.telemetry, events: s.events, cursor: s.cursor };
  }
}

/** A run and source sentence, to tell whether an ablation's effect still belongs to what is shown. */
const sourceOf = (a: Attention) => `${a.source.runDir}\n${a.srcTokens.join(' ')}`;

export class AttentionPanel extends BasePanel<AttentionToPage, AttentionFromPage> {
  static readonly slot: PanelSlot<AttentionPanel> = new PanelSlot({
    kind: 'attention',
    viewType: 'attentionDebugger.attention',
    title: 'Attention',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new AttentionPanel(panel, host, attentionPage),
    restore: (p, saved) => {
      p.selected = saved?.head ?? null;
    },
  });
  private selected: HeadRef | null = null;
  /** What the heads switched off do to the input shown, and that input's run and source; null when none are off. */
  private ablation: { effect: AblationEffect; source: string } | null = null;

  /** Shows every layer × head of one sentence pair; an ablation of another run or input no longer applies. */
  showAttention(attention: Attention): void {
    if (this.ablation && this.ablation.source !== sourceOf(attention)) {
      this.ablation = null;
      this.sendState();
      return;
    }
    this.post({ type: 'attention', ...attention, roles: this.host.store.rolesAt(attention.source.step) });
  }

  /** The effect of the heads switched off on `attention`'s input (null: all heads on again). */
  showAblation(effect: AblationEffect | null, attention: Attention): void {
    this.ablation = effect ? { effect, source: sourceOf(attention) } : null;
    this.sendState();
  }

  select(ref: HeadRef): void {
    this.selected = ref;
  }

  protected async answer(m: AttentionFromPage): Promise<void> {
    switch (m.type) {
      case 'openHead':
      case 'inspectInput':
        this.host.request(this.kind, m);
        break;
      case 'ablateHeads':
        await this.ablate(m.ablation);
        break;
      case 'requestBlock':
        await this.sendBlock(m);
        break;
    }
  }

  /** A block of a pooled head the page's zoom asked for, of the selection's run, step and input; the reply echoes its id. */
  private async sendBlock(m: RequestBlockMsg): Promise<void> {
    const answers = this.host.answers();
    const sel = answers?.selection();
    if (!answers || !sel) return;
    const { kind, layer, head, q0, q1, k0, k1 } = m;
    const block = await requestBlock(answers.engine, sel, { kind, layer, head, q0, q1, k0, k1 });
    this.post({ type: 'attentionBlock', id: m.id, ...block });
  }

  /**
   * Heads switched off on the page: the engine scores the input shown (its target, or what the
   * intact model decoded) with and without them, at the selected checkpoint, and decodes it
   * greedily with them off. No heads: all back on.
   */
  private async ablate(ablation: Ablation): Promise<void> {
    const attention = this.host.store.attention;
    const answers = this.host.answers();
    const sel = answers?.selection();
    if (!attention || !answers || !sel) return;
    if (!ablation.heads.length) {
      this.showAblation(null, attention);
      return;
    }
    // At the selected checkpoint (the newest when none is): snapshots between checkpoints have no weights.
    const effect = await answers.engine.request(ablationEffect, {
      runDir: sel.runDir,
      input: sel.input,
      ablation,
      ...(sel.step !== undefined ? { step: sel.step } : {}),
    });
    if (this.host.store.attention === attention) this.showAblation(effect, attention);
  }

  override persisted(): { head?: HeadRef } {
    return this.selected ? { head: this.selected } : {};
  }

  protected snapshot(): PanelState {
    const s = this.host.store;
    const roles = s.attention ? s.rolesAt(s.attention.source.step) : [];
    return {
      panel: 'attention',
      header: s.header,
      attention: s.attention,
      selected: this.selected,
      roles,
      ablation: this.ablation?.effect ?? null,
    };
  }
}

export class HeadInspectorPanel extends BasePanel<HeadToPage, HeadFromPage> {
  static readonly slot: PanelSlot<HeadInspectorPanel> = new PanelSlot({
    kind: 'head',
    viewType: 'attentionDebugger.headInspector',
    title: 'Head Inspector',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new HeadInspectorPanel(panel, host, headPage),
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
    this.panel.title = `Head ${headId(head)}`;
    this.sendState();
  }

  showAttention(attention: Attention): void {
    this.post({ type: 'attention', ...attention, roles: this.host.store.rolesAt(attention.source.step) });
  }

  /** Snapshots new to the probe history: the page merges them in (protocol/history.ts). */
  showSnapshots(items: Attention[]): void {
    this.post({ type: 'snapshots', items });
  }

  showCursor(step: number, loss?: number): void {
    this.post({ type: 'cursor', step, ...(loss !== undefined ? { loss } : {}) });
  }

  /** Its page's asks all change the selection: the Viewer answers them. */
  protected answer(m: HeadFromPage): void {
    this.host.request(this.kind, m);
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

export class PositionalPanel extends BasePanel<PositionalToPage, PositionalFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'positional',
    viewType: 'attentionDebugger.positional',
    title: 'Positional Encoding',
    column: vscode.ViewColumn.Active,
    make: (panel, host) => new PositionalPanel(panel, host, positionalPage),
  });

  showPositional(positional: PositionalPayload): void {
    this.post({ type: 'positional', ...positional });
  }

  /** Its page asks nothing of its own. */
  protected answer(m: PositionalFromPage): void {
    void m;
  }

  protected snapshot(): PanelState {
    return { panel: 'positional', header: this.host.store.header, positional: this.host.store.positional };
  }
}
