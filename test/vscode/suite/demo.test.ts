/**
 * The main job as a user sees it: the demo's default job (the tiny Transformer on the reverse task,
 * what the demo workspace's startup job trains) for about a minute, with screenshots of the
 * workbench and of each panel kept in test-artifacts/vscode/ (suite/screenshot.ts). Once stopped,
 * the model it trained (some 600 steps: it reverses) gives README's beam tree and head view
 * (scripts/pictures.json), each alone in the window, in the default dark theme.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test } from './harness';
import { until } from './runs';
import { inDarkTheme, screenshot, showPart } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-demo-'));
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('the demo job for a minute: dashboard and attention view live, then each panel', async () => {
  const api = await activateExtension();
  const runDir = path.join(tmp, 'reverse-tiny');
  const summary = await vscode.commands.executeCommand<{ totalSteps: number } | undefined>('attentionDebugger.train', {
    data: { kind: 'task', task: 'reverse' },
    config: 'tiny',
    runDir,
  });
  assert.ok(summary, 'Train returned nothing (see the output)');
  const t0 = Date.now();
  while (Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 1000));
  assert.ok((api.training.lastRow?.step ?? 0) > 25, 'it trained for a minute');
  assert.equal(api.panels.store.header?.run, 'reverse-tiny');
  // README's first picture: the panels opened in the default theme, then seen as a new user sees them.
  await inDarkTheme(() => screenshot('demo-60s', api));
  await vscode.commands.executeCommand('attentionDebugger.inspectHead', { runDir, kind: 'cross', layer: 1, head: 0 });
  await screenshot('head-inspector', api);
  await vscode.commands.executeCommand('attentionDebugger.showPositional', { runDir });
  await screenshot('positional', api);
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  await until('the run stopped', () => !api.training.training, 30_000);
  const text = '4 9 5 7 6 8';
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await inDarkTheme(async () => {
    assert.ok(await vscode.commands.executeCommand('attentionDebugger.beamTree', { runDir, text }), 'Show Beam Tree');
    await until('the beam tree', () => api.panels.slots.beam.current?.isReady === true, 30_000);
    await screenshot('beam-tree-trained', api);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    assert.ok(await vscode.commands.executeCommand('attentionDebugger.decode', { runDir, text }), 'Decode');
    const attention = api.panels.slots.attention;
    await until('the attention view', () => attention.current?.isReady === true, 30_000);
    await until('its input', () => api.panels.store.attention?.srcTokens.join(' ') === `${text} </s>`, 30_000);
    const view = { '#head-view-kind': 'cross', '#head-view-layer': '1' };
    assert.ok(await showPart(attention.current!, '#head-view', view), 'the attention view has a head view');
    await screenshot('head-view', api);
  });
  for (const kind of ['dashboard', 'attention', 'head', 'positional'] as const)
    api.panels.slots[kind].current?.dispose();
}, 300_000);
