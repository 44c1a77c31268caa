/**
 * Entry point of the extension host side. Owns the engine client and the commands; everything
 * created here is pushed to context.subscriptions, the one place that cleans up.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type EngineInfo, engineInfo } from '../protocol/engine';
import { EngineClient } from './engineClient';

/** What activate() returns: for other extensions and for the integration tests. */
export interface AttentionDebuggerApi {
  readonly engine: EngineClient;
}

let client: EngineClient | undefined;

export function activate(context: vscode.ExtensionContext): AttentionDebuggerApi {
  const output = vscode.window.createOutputChannel('Attention Debugger');
  const engine = new EngineClient(path.join(context.extensionPath, 'dist', 'cli.js'), output);
  client = engine;
  context.subscriptions.push(output, { dispose: () => void engine.dispose() });

  context.subscriptions.push(
    vscode.commands.registerCommand('attentionDebugger.showEngineInfo', async (): Promise<EngineInfo | undefined> => {
      try {
        const info = await engine.request(engineInfo);
        void vscode.window.showInformationMessage(
          `Attention Debugger engine ${info.version}: backend ${info.backend} (available: ${info.backends.join(', ') || 'none'})`,
        );
        return info;
      } catch (err) {
        output.appendLine(`engine/info failed: ${(err as Error).message}`);
        void vscode.window.showErrorMessage(`Attention Debugger: the engine did not answer: ${(err as Error).message}`);
        return undefined;
      }
    }),
  );

  engine.start();
  return { engine };
}

export async function deactivate(): Promise<void> {
  await client?.dispose();
  client = undefined;
}
