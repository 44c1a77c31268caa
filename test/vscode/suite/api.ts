import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import { PAGE_HOOK } from './drawn';
import { onFailurePrint } from './harness';

export const EXTENSION_ID = 'attention-debugger.attention-debugger';

/** Activates the extension under test and returns what activate() returned. */
export async function activateExtension(): Promise<AttentionDebuggerApi> {
  const ext = vscode.extensions.getExtension<AttentionDebuggerApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not installed in this window`);
  const api = await ext.activate();
  api.panels.addPageScript(PAGE_HOOK); // every page opened from now on answers what it drew
  onFailurePrint(() => ['recent "Attention Debugger" output:', ...api.engine.recentLog().slice(-30)]);
  return api;
}
