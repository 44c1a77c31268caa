/**
 * One panel of a kind per window: createOrShow reveals the open one or makes it; revive adopts a
 * panel VS Code restored after a reload (its saved UI state validated first, then handed to
 * `restore`); `current` is the open one, cleared when it closes. A panel whose page never says
 * ready (a blank panel: seen when a webview in a background tab is shown) is replaced by a new one,
 * which starts from the store with everything the old one showed.
 */
import * as vscode from 'vscode';
import type { PanelKind, PersistedState } from '../../protocol/webview';
import { BasePanel, NOT_SHOWN, type PanelHost, webviewOptions } from './base';

export interface PanelKindSpec<P extends BasePanel> {
  kind: PanelKind;
  viewType: string;
  title: string;
  column: vscode.ViewColumn;
  make(panel: vscode.WebviewPanel, host: PanelHost): P;
  /** Gives a revived panel what its webview had saved (when it passed validation). */
  restore?(panel: P, saved: PersistedState | undefined): void;
}

export class PanelSlot<P extends BasePanel> {
  current: P | undefined;

  constructor(private readonly spec: PanelKindSpec<P>) {}

  get viewType(): string {
    return this.spec.viewType;
  }

  createOrShow(host: PanelHost, column = this.spec.column): P {
    if (this.current) {
      this.current.reveal(column);
      return this.current;
    }
    return this.adopt(
      vscode.window.createWebviewPanel(this.spec.viewType, this.spec.title, column, webviewOptions(host.extensionUri)),
      host,
    );
  }

  revive(panel: vscode.WebviewPanel, host: PanelHost, state: unknown): P {
    const saved = BasePanel.restoredState(host, this.spec.kind, state);
    this.current?.dispose();
    const p = this.adopt(panel, host);
    this.spec.restore?.(p, saved);
    return p;
  }

  /**
   * An image of the open panel (Export View). A panel whose page never comes back (seen under VS
   * Code's server: a webview shown again that never loads) is replaced by a new one, which starts
   * from the store with everything the old one showed.
   */
  async requestImage(host: PanelHost, format: 'png' | 'svg', target?: vscode.Uri): Promise<vscode.Uri | string> {
    const panel = this.current;
    if (!panel) return `the ${this.spec.kind} panel is not open`;
    const saved = await panel.requestImage(format, target);
    if (saved !== NOT_SHOWN) return saved;
    host.log(`the ${this.spec.kind} panel did not come back; opening it anew for the export`);
    panel.dispose();
    return this.createOrShow(host).requestImage(format, target);
  }

  private adopt(panel: vscode.WebviewPanel, host: PanelHost): P {
    const p = this.spec.make(panel, host);
    this.current = p;
    p.onDidDispose(() => {
      if (this.current === p) this.current = undefined;
    });
    p.onDidStall(() => this.replace(host, p));
    return p;
  }

  /** Closes a panel whose page never came up and opens a new one where it was. */
  private replace(host: PanelHost, stalled: P): void {
    if (this.current !== stalled) return;
    const column = stalled.panel.viewColumn;
    stalled.dispose();
    this.createOrShow(host, column);
    this.replaced++;
  }

  /** How many blank panels this slot replaced (for the output and the tests). */
  replaced = 0;
}
