/**
 * The `attention-debugger` debug type (package.json contributes.debuggers): VS Code runs the debug
 * adapter (dist/debugAdapter.js, src/debug/) as a Node process of its own, which runs its own engine.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';

export function registerDebugAdapter(extensionPath: string): vscode.Disposable {
  const adapter = path.join(extensionPath, 'dist', 'debugAdapter.js');
  return vscode.debug.registerDebugAdapterDescriptorFactory('attention-debugger', {
    // The extension host's Node (Electron's, run as Node), as the engine client runs the engine.
    createDebugAdapterDescriptor: () =>
      new vscode.DebugAdapterExecutable(process.execPath, [adapter], { env: { ELECTRON_RUN_AS_NODE: '1' } }),
  });
}
