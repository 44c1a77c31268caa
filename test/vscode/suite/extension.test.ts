import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { EXTENSION_ID, activateExtension } from './api';
import { test } from './harness';

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
