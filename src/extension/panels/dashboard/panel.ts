/**
 * The training dashboard's panel (its page: webview/dashboard/): the run's curves, its schedule,
 * its findings and the runs overlaid. One per window (its `slot`, ../slot.ts); it builds its whole
 * `state` from the shared store, and what changes afterwards goes out as small messages (metrics
 * appended, the cursor).
 */
import * as vscode from 'vscode';
import type { MetricRow } from '../../../protocol/metrics';
import { type DashboardFromPage, type DashboardToPage, dashboardPage } from '../../../protocol/pages/dashboard';
import type { RunEvent } from '../../../protocol/telemetry';
import type { OverlayRun, PanelState } from '../../../protocol/webview';
import { BasePanel } from '../base';
import { PanelSlot } from '../slot';

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
