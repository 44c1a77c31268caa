import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID, activateExtension } from './api';
import { test } from './harness';
import { answer } from './ui';

test('the extension activates without an engine process; the first request starts one', async () => {
  const api = await activateExtension();
  assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
  assert.equal(api.engine.pid, undefined, 'no engine until a command needs one');
  await vscode.commands.executeCommand('attentionDebugger.showEngineInfo');
  assert.equal(typeof api.engine.pid, 'number', 'engine pid after the first request');
  process.kill(api.engine.pid!, 0); // throws if no such process
}, 120_000);

test('attentionDebugger.showEngineInfo is registered and answers with a backend name', async () => {
  await activateExtension();
  const commands = await vscode.commands.getCommands(true);
  assert.ok(commands.includes('attentionDebugger.showEngineInfo'), 'command registered');
  const info = await vscode.commands.executeCommand<{ version: string; backend: string; backends: string[] }>(
    'attentionDebugger.showEngineInfo',
  );
  assert.ok(info, 'the command returned no engine info (see the "Attention Debugger" output)');
  // The four backends docs/ARCHITECTURE.md names, written out here rather than imported from the engine.
  assert.ok(['webgpu', 'tensorflow', 'wasm', 'cpu'].includes(info.backend), `backend ${info.backend}`);
  assert.ok(
    info.backends.includes(info.backend),
    `active backend ${info.backend} listed in ${info.backends.join(',')}`,
  );
  const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { version: string };
  assert.equal(info.version, pkg.version);
}, 120_000);

test('Decode with no run anywhere says there is none yet and offers Train, before asking for a sentence', async () => {
  const api = await activateExtension();
  assert.equal(api.viewer.selection, undefined, 'nothing selected yet in this window');
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-empty-'));
  const settings = vscode.workspace.getConfiguration('attentionDebugger');
  await settings.update('runFolder', empty, vscode.ConfigurationTarget.Global);
  const ui = answer(() => undefined);
  try {
    assert.equal(await vscode.commands.executeCommand('attentionDebugger.decode'), undefined);
  } finally {
    ui.restore();
    await settings.update('runFolder', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(empty, { recursive: true, force: true });
  }
  assert.deepEqual(
    ui.asked.map((a) => [a.fn, a.text, a.items]),
    [
      [
        'showInformationMessage',
        `Attention Debugger: there is no run yet in ${empty}. Train one first, or open a run folder.`,
        ['Train', 'Open Run…'],
      ],
    ],
    'one question, with Train offered; no sentence asked for, no empty Browse…',
  );
}, 30_000);
