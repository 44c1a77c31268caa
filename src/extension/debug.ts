/**
 * The `attention-debugger` debug type (package.json contributes.debuggers): VS Code runs the debug
 * adapter (dist/debugAdapter.js, src/debug/) as a Node process of its own, which runs its own engine;
 * the adapter's custom events (protocol/debugEvents.ts) ask the extension's views to show things.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkOpenHead, DEBUG_TYPE, OPEN_HEAD, type OpenHead } from '../protocol/debugEvents';

export function registerDebugAdapter(extensionPath: string): vscode.Disposable {
  const adapter = path.join(extensionPath, 'dist', 'debugAdapter.js');
  return vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, {
    // The extension host's Node (Electron's, run as Node), as the engine client runs the engine.
    createDebugAdapterDescriptor: () =>
      new vscode.DebugAdapterExecutable(process.execPath, [adapter], { env: { ELECTRON_RUN_AS_NODE: '1' } }),
  });
}

/** Hands `open` each head the debugger opens (a head's attention map expanded in the Variables view). */
export function onDebugOpenHead(open: (e: OpenHead) => Promise<void>, log: (line: string) => void): vscode.Disposable {
  return vscode.debug.onDidReceiveDebugSessionCustomEvent(async (e) => {
    if (e.session.type !== DEBUG_TYPE || e.event !== OPEN_HEAD) return;
    const why = checkOpenHead(e.body, "the debugger's openHead event");
    if (why) return log(`${why}: ignored`);
    await open(e.body as OpenHead);
  });
}
