/**
 * Screenshots of the workbench from inside a test: the launcher (test/vscode/launcher) watches the
 * log for `[screenshot] <name>` and saves test-artifacts/vscode/<name>.png; this waits until the
 * file is there. Before it asks, notifications are cleared (unless kept) and every open panel has reported a
 * drawn frame (so a screenshot never catches a page still loading); showPart scrolls a page to the part
 * a picture shows. Outside the launcher (desktop
 * VS Code) nothing is taken and nothing waits.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import { WEBVIEW_PROTOCOL_VERSION } from '../../../src/protocol/webview';
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
  for (let i = 0; i < 300 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  if (!fs.existsSync(file))
    throw new Error(`the launcher took no screenshot ${name} within 30 s (the launcher is slow on a busy machine)`);
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

/** What showPart needs of a panel (BasePanel; this bundle has its own copy of the class). */
interface Scrollable {
  readonly panel: vscode.WebviewPanel;
}

/**
 * Scrolls a part of a panel's page into view for a screenshot, each select of `selects`
 * (selector → value) set first as a person picks it: through the page hook's `showPart`
 * (test/pageHook/pageHook.js), no product message. True when the page has the part.
 */
export async function showPart(
  p: Scrollable,
  selector: string,
  selects: Record<string, string> = {},
): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the page did not show ${selector} within 10 s`)), 10_000);
    const answered = p.panel.webview.onDidReceiveMessage((m: unknown) => {
      const d = m as { type?: unknown; found?: unknown };
      if (d?.type !== 'partShown') return;
      clearTimeout(timer);
      answered.dispose();
      resolve(d.found === true);
    });
    void p.panel.webview.postMessage({ type: 'showPart', v: WEBVIEW_PROTOCOL_VERSION, selector, selects });
  });
}

/** Closes every editor tab but those labelled `keep` (a picture shows only what it is of). */
export async function closeTabsBut(...keep: string[]): Promise<void> {
  const others = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => !keep.includes(t.label));
  await vscode.window.tabGroups.close(others);
}
