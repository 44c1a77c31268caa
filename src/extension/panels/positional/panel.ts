/**
 * The positional-encoding view's panel (its page: webview/positional/). One per window (its
 * `slot`, ../slot.ts); it builds its whole `state` from the shared store.
 */
import * as vscode from 'vscode';
import { type PositionalFromPage, type PositionalToPage, positionalPage } from '../../../protocol/pages/positional';
import type { PanelState, PositionalPayload } from '../../../protocol/webview';
import { BasePanel } from '../base';
import { PanelSlot } from '../slot';

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
