/**
 * Screenshots of the workbench from inside a test: the launcher (test/vscode/launcher) watches the
 * log for `[screenshot] <name>` and saves test-artifacts/vscode/<name>.png; this waits until the
 * file is there. Before it asks, notifications are cleared (unless kept) and every open panel has reported a
 * drawn frame (so a screenshot never catches a page still loading). Outside the launcher (desktop
 * VS Code) nothing is taken and nothing waits.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import { requestDrawn } from './drawn';

export async function screenshot(
  name: string,
  api?: AttentionDebuggerApi,
  { keepNotifications = false } = {},
): Promise<string | undefined> {
  const dir = process.env.ATTENTION_DEBUGGER_SCREENSHOTS;
  if (!dir) return undefined;
  if (!keepNotifications) await vscode.commands.executeCommand('notifications.clearAll');
  for (const slot of Object.values(api?.panels.slots ?? {})) {
    const p = slot.current;
    if (p && !p.isDisposed && p.panel.visible) await requestDrawn(p, [], 20_000);
  }
  await new Promise((r) => setTimeout(r, 500)); // plotly's transitions
  const file = path.join(dir, `${name}.png`);
  fs.rmSync(file, { force: true });
  console.log(`[screenshot] ${name}`);
  for (let i = 0; i < 100 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  if (!fs.existsSync(file)) throw new Error(`the launcher took no screenshot ${name} within 10 s`);
  return file;
}

/** Runs `fn` in VS Code's default dark theme (Default Dark Modern), the theme restored after. */
export async function inDarkTheme<T>(fn: () => Promise<T>): Promise<T> {
  const workbench = vscode.workspace.getConfiguration('workbench');
  await workbench.update('colorTheme', 'Default Dark Modern', vscode.ConfigurationTarget.Global);
  try {
    await new Promise((r) => setTimeout(r, 1000)); // the workbench and the panels take the theme
    return await fn();
  } finally {
    await workbench.update('colorTheme', undefined, vscode.ConfigurationTarget.Global);
  }
}
