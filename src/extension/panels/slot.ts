/**
 * One panel of a kind per window: createOrShow reveals the open one or makes it; revive adopts a
 * panel VS Code restored after a reload (its saved UI state validated first, then handed to
 * `restore`); `current` is the open one, cleared when it closes.
 */
import * as vscode from 'vscode';
import type { PanelKind, PersistedState } from '../../protocol/webview';
import { BasePanel, type PanelHost, webviewOptions } from './base';

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

  private adopt(panel: vscode.WebviewPanel, host: PanelHost): P {
    const p = this.spec.make(panel, host);
    this.current = p;
    p.onDidDispose(() => {
      if (this.current === p) this.current = undefined;
    });
    return p;
  }
}
