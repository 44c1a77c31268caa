/**
 * The head inspector's panel (its page: webview/head/): one head over the run's snapshots, its
 * slider on the shared cursor; it answers its page's score decompositions (heads/scores). One per
 * window (its `slot`, ../slot.ts); it builds its whole `state` from the shared store, and what
 * changes afterwards goes out as small messages.
 */
import * as vscode from 'vscode';
import { type Attention, headId, type HeadRef } from '../../../protocol/attention';
import { type HeadFromPage, type HeadToPage, headPage, type RequestScoresMsg } from '../../../protocol/pages/head';
import type { PanelState } from '../../../protocol/webview';
import { scoresOf } from '../../inspection';
import { BasePanel } from '../base';
import { PanelSlot } from '../slot';

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

  /** Snapshots new to the probe history: the page merges them in (algorithms/history.ts). */
  showSnapshots(items: Attention[]): void {
    this.post({ type: 'snapshots', items });
  }

  showCursor(step: number, loss?: number): void {
    this.post({ type: 'cursor', step, ...(loss !== undefined ? { loss } : {}) });
  }

  /** A query row's scores it answers itself; its page's other asks change the selection: the Viewer answers them. */
  protected async answer(m: HeadFromPage): Promise<void> {
    if (m.type === 'requestScores') return this.sendScores(m);
    this.host.request(this.kind, m);
  }

  /** One query row of a head split into its parts, at the selection's run, step and input; the reply echoes its id. */
  private async sendScores(m: RequestScoresMsg): Promise<void> {
    const answers = this.host.answers();
    const sel = answers?.selection();
    if (!answers || !sel) return this.post({ type: 'headScores', id: m.id, error: 'no run is selected' });
    const { kind, layer, head } = m;
    this.post({
      type: 'headScores',
      id: m.id,
      ...(await scoresOf(answers.engine, sel, { kind, layer, head }, m.query)),
    });
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
      valueWeighted: s.valueWeighted,
    };
  }
}
