/**
 * One panel of a kind per window: createOrShow reveals the open one or makes it; revive adopts a
 * panel VS Code restored after a reload (its saved UI state validated first, then handed to
 * `restore`); `current` is the open one, cleared when it closes. A panel whose page never says
 * ready (a blank panel: seen when a webview in a background tab is shown) is replaced by a new one,
 * which starts from the store with everything the old one showed.
 */
import * as vscode from 'vscode';
import type { PageExportFormat, PanelKind, PersistedState } from '../../protocol/webview';
import { WEBVIEW_PROTOCOL_VERSION } from '../../protocol/webview';
import { BasePanel, NOT_SHOWN, type PanelHost, READY_WITHIN_MS, webviewOptions } from './base';
import { panelColumn } from './column';

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

  /** Shows the open panel (where it is, unless `column` is given) or opens one (panelColumn: at most two columns). */
  createOrShow(host: PanelHost, column?: vscode.ViewColumn): P {
    if (this.current) {
      // An open panel asked for beside another is shown where it is (Beside never moves it).
      this.current.reveal(column === undefined || column === vscode.ViewColumn.Beside ? undefined : column);
      return this.current;
    }
    const where = panelColumn(column ?? this.spec.column);
    return this.adopt(
      vscode.window.createWebviewPanel(this.spec.viewType, this.spec.title, where, webviewOptions(host.extensionUri)),
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
  async requestImage(host: PanelHost, format: PageExportFormat, target?: vscode.Uri): Promise<vscode.Uri | string> {
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

  /**
   * Closes a panel whose page never came up and opens a new one where it was, showing what the old
   * one showed (the store, and the panel's own head or step). Replacements in a row wait longer
   * each time (up to 8× READY_WITHIN_MS); a page that says ready ends the row.
   */
  private replace(host: PanelHost, stalled: P): void {
    if (this.current !== stalled) return;
    const column = stalled.panel.viewColumn;
    const shown = { ...stalled.persisted(), panel: this.spec.kind, v: WEBVIEW_PROTOCOL_VERSION };
    stalled.dispose();
    const p = this.createOrShow(host, column);
    this.spec.restore?.(p, shown);
    this.replaced++;
    this.inARow++;
    p.setPatience(READY_WITHIN_MS * 2 ** Math.min(this.inARow, 3));
    const once = p.onDidSayReady(() => {
      this.inARow = 0;
      once.dispose();
    });
  }

  /** How many blank panels this slot replaced (for the output and the tests). */
  replaced = 0;
  /** Replacements since a page last said ready. */
  private inARow = 0;
}
