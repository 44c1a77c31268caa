/**
 * Where a panel opens: beside the one that asked, in at most two editor columns. VS Code's
 * ViewColumn.Beside opens a new column right of the active one each time, so the attention view,
 * the inspector, the Heads panel and the Beam Tree made four columns that cut headers and
 * thumbnails (issue 26 item 14). Beside is the other of the first two columns, named by number:
 * VS Code makes column Two when it is missing and reuses it when it is there. (The tab groups the
 * extension host sees lag behind panels just created, so a count of them cannot decide.)
 */
import * as vscode from 'vscode';

/** `column` as the panels use it: Beside becomes the other of the first two columns. */
export function panelColumn(column: vscode.ViewColumn): vscode.ViewColumn {
  if (column !== vscode.ViewColumn.Beside) return column;
  const active = vscode.window.tabGroups.activeTabGroup.viewColumn;
  return active === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
}
