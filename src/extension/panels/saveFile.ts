/**
 * Where a panel's export lands: written whole or not at all (a temporary file beside it, renamed
 * over it, as docs/RUN_FOLDER.md's writing rules ask), then said in a message whose "Open" shows
 * it: an HTML view in the browser, anything else in VS Code.
 */
import * as vscode from 'vscode';

/** Writes `bytes` to `target` whole: a reader never sees half a file, a failed write leaves none. */
export async function saveWhole(target: vscode.Uri, bytes: Uint8Array): Promise<void> {
  const tmp = target.with({ path: `${target.path}.tmp-${process.pid}-${Date.now()}` });
  await vscode.workspace.fs.writeFile(tmp, bytes);
  try {
    await vscode.workspace.fs.rename(tmp, target, { overwrite: true });
  } catch (err) {
    await Promise.resolve(vscode.workspace.fs.delete(tmp)).catch(() => undefined);
    throw err;
  }
}

/** Says that the `kind` view was saved as `file`, with a button that opens it. */
export function announceSaved(kind: string, file: vscode.Uri): void {
  void vscode.window
    .showInformationMessage(`Attention Debugger: saved the ${kind} view as ${file.fsPath}`, 'Open')
    .then((choice) => {
      if (choice !== 'Open') return;
      if (file.path.endsWith('.html')) void vscode.env.openExternal(file);
      else void vscode.commands.executeCommand('vscode.open', file);
    });
}
