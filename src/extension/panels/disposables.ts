import type * as vscode from 'vscode';

/** A list of disposables emptied once (after vscode-extension-samples' dispose.ts). */
export class DisposableList implements vscode.Disposable {
  private items: vscode.Disposable[] = [];
  private done = false;
  add<T extends vscode.Disposable>(d: T): T {
    if (this.done) d.dispose();
    else this.items.push(d);
    return d;
  }
  dispose(): void {
    if (this.done) return;
    this.done = true;
    const items = this.items;
    this.items = [];
    for (const d of items.reverse()) {
      try {
        d.dispose();
      } catch {
        // one failing disposable must not keep the others alive
      }
    }
  }
}
