/**
 * Where a panel opens: beside the one that asked, in at most two editor columns. VS Code's
 * ViewColumn.Beside opens a new column right of the active one each time, so the attention view,
 * the inspector, the Heads panel and the Beam Tree made four columns that cut headers and
 * thumbnails (issue 26 item 14). Beside is the other of the first two columns, named by number:
 * VS Code makes column Two when it is missing and reuses it when it is there. The panels that open
 * beside are asked for from the attention view (a thumbnail, a head, a sentence), so Beside is the
 * column the attention view is not in, which keeps it in sight; without it, the other of the active
 * column (the tab groups the extension host sees lag behind panels just created, so neither a count
 * of them nor the active group alone can decide while the attention view is open).
 */
import * as vscode from 'vscode';

/** The attention view's column while it is open (Panels sets it). */
let attentionColumn: () => vscode.ViewColumn | undefined = () => undefined;

export function followAttentionColumn(column: () => vscode.ViewColumn | undefined): void {
  attentionColumn = column;
}

/** `column` as the panels use it: Beside becomes the other of the first two columns. */
export function panelColumn(column: vscode.ViewColumn): vscode.ViewColumn {
  if (column !== vscode.ViewColumn.Beside) return column;
  const from = attentionColumn() ?? vscode.window.tabGroups.activeTabGroup.viewColumn;
  return from === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
}
