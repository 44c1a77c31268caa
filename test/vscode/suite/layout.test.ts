/**
 * Issue 26 item 14 in a real VS Code: Train opens the dashboard and the attention view, a click on
 * a thumbnail opens the head inspector, then the Heads panel and a Beam Tree: every panel opens
 * beside the one that asked, in at most two editor columns (it made five). The screenshot, in the
 * default dark theme, shows the attention view in its column after the fix.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PanelKind } from '../../../src/protocol/webview';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { inDarkTheme, screenshot } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-layout-'));
const run = path.join(tmp, 'runs', 'reverse-layout');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** The editor columns and what each holds, for the failure message. */
const columns = (): string =>
  vscode.window.tabGroups.all.map((g) => `${g.viewColumn}: ${g.tabs.map((t) => t.label).join(', ')}`).join(' | ');

/** Makes `kind`'s panel the active one, as a click in it does, and waits until the tab groups say so. */
async function focus(api: Awaited<ReturnType<typeof activateExtension>>, kind: PanelKind): Promise<void> {
  const panel = api.panels.slots[kind].current;
  assert.ok(panel, `the ${kind} panel is open`);
  panel.panel.reveal(undefined, false);
  await until(`the ${kind} panel active`, () => panel.panel.active, 10_000);
  await new Promise((r) => setTimeout(r, 300)); // the tab groups follow the panel's state a moment later
}

test('issue 26: the attention, dashboard, head inspector, Heads and Beam Tree panels share at most two columns', async () => {
  const api = await activateExtension();
  for (const slot of Object.values(api.panels.slots)) slot.current?.dispose();
  await vscode.commands.executeCommand('workbench.action.closeAllGroups');
  await trainAndWait(api, run, 'reverse', microConfig(tmp, 20)); // opens the dashboard and the attention view
  await until('the attention page', () => api.panels.slots.attention.current?.isReady === true, 60_000);
  // Each panel asks from a column the user works in (a click in a panel makes its column the active one).
  await focus(api, 'attention');
  api.panels.host.request('attention', { type: 'openHead', v: 3, kind: 'cross', layer: 0, head: 0 }); // a thumbnail's click
  await until('the head inspector', () => api.panels.slots.head.current !== undefined);
  await focus(api, 'attention');
  api.panels.host.request('attention', { type: 'openHead', v: 3, kind: 'cross', layer: 0, head: 1 }); // another head
  await focus(api, 'head');
  await vscode.commands.executeCommand('attentionDebugger.openHeads');
  await until('the Heads panel', () => api.panels.slots.heads.current !== undefined);
  await focus(api, 'heads');
  await vscode.commands.executeCommand('attentionDebugger.beamTree', { runDir: run, text: '4 5 6 7' });
  await until('the Beam Tree', () => api.panels.slots.beam.current !== undefined);
  const kinds = ['attention', 'dashboard', 'head', 'heads', 'beam'] as const;
  // The tab groups the extension host sees catch up with the panels a moment later.
  const tabbed = () =>
    kinds.every((kind) => {
      const title = api.panels.slots[kind].current?.panel.title;
      return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.label === title));
    });
  await until('every panel in a tab', tabbed, 30_000);
  assert.ok(vscode.window.tabGroups.all.length <= 2, `${vscode.window.tabGroups.all.length} columns: ${columns()}`);

  await inDarkTheme(async () => {
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    api.panels.openAttention();
    await until('the attention page', () => api.panels.slots.attention.current?.isReady === true, 60_000);
    const d = await drawnIn(api.panels.slots, 'attention');
    assert.equal(d.run, 'reverse-layout', 'the attention view names the run');
    await screenshot('layout-two-columns', api);
    assert.ok(vscode.window.tabGroups.all.length <= 2, `after the screenshot: ${columns()}`);
  });
}, 240_000);
