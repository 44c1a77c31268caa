/**
 * The Heads panel (its page: webview/heads/): a telemetry statistic per head over training. One
 * per window (its `slot`, ../slot.ts); it builds its whole `state` from the shared store, and what
 * changes afterwards goes out as small messages (telemetry rows appended).
 */
import * as vscode from 'vscode';
import { type HeadsFromPage, type HeadsToPage, headsPage } from '../../../protocol/pages/heads';
import type { MetricRow } from '../../../protocol/metrics';
import type { RunEvent, TelemetryRow } from '../../../protocol/telemetry';
import type { PanelState } from '../../../protocol/webview';
import { BasePanel } from '../base';
import { PanelSlot } from '../slot';

/** Heads × steps: a telemetry statistic per head over training (webview/heads/page.ts). */
export class HeadsPanel extends BasePanel<HeadsToPage, HeadsFromPage> {
  static readonly slot = new PanelSlot({
    kind: 'heads',
    viewType: 'attentionDebugger.heads',
    title: 'Heads',
    column: vscode.ViewColumn.Beside,
    make: (panel, host) => new HeadsPanel(panel, host, headsPage),
  });

  /** Appended logged steps of the selected run (the loss its roles over training are drawn under). */
  appendMetrics(rows: MetricRow[]): void {
    this.post({ type: 'metrics', rows });
  }

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
    return {
      panel: 'heads',
      header: s.header,
      telemetry: s.telemetry,
      metrics: s.rows,
      events: s.events,
      cursor: s.cursor,
    };
  }
}
