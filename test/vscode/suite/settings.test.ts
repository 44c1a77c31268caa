/**
 * The settings a user sets in settings.json, each read where it acts: defaultConfig (the Train
 * wizard's first model), snapshotInterval (the probe's snapshots) and startupJob (the demo's job).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { microConfig, trainAndWait } from './runs';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-settings-'));
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** Sets `attentionDebugger.<key>` for the user while `fn` runs. */
async function withSetting<T>(key: string, value: unknown, fn: () => Promise<T>): Promise<T> {
  const settings = vscode.workspace.getConfiguration('attentionDebugger');
  await settings.update(key, value, vscode.ConfigurationTarget.Global);
  try {
    return await fn();
  } finally {
    await settings.update(key, undefined, vscode.ConfigurationTarget.Global);
  }
}

test('defaultConfig is the Train wizard’s first model', async () => {
  await activateExtension();
  const ui = answer((a) => (a.text.includes('(1/4)') ? 'copy' : undefined));
  try {
    await withSetting('defaultConfig', 'small', async () => vscode.commands.executeCommand('attentionDebugger.train'));
  } finally {
    ui.restore();
  }
  const model = ui.asked.find((a) => a.text.includes('(2/4)'));
  assert.deepEqual(model?.items, ['small', 'tiny', 'base', 'big', 'JSON file…']);
}, 30_000);

test('snapshotInterval overrides the config’s snapshot_every', async () => {
  const api = await activateExtension();
  const runDir = path.join(tmp, 'snapshots-every-3');
  await withSetting('snapshotInterval', 3, () => trainAndWait(api, runDir, 'copy', microConfig(tmp, 9)));
  const steps = fs
    .readdirSync(path.join(runDir, 'snapshots'))
    .map((f) => Number(/^step-(\d+)\.safetensors$/.exec(f)?.[1]))
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  assert.deepEqual(steps, [3, 6, 9], 'every 3 steps, not the config’s 5');
}, 90_000);

test('startupJob train-reverse-tiny trains the tiny model on the reverse task in the run folder', async () => {
  const api = await activateExtension();
  const root = path.join(tmp, 'runs');
  const unknown = await withSetting('startupJob', 'train-everything', () => api.runStartupJob());
  assert.equal(unknown, undefined);
  assert.ok(
    api.engine
      .recentLog()
      .some((l) => l.includes('unknown job "train-everything" (expected one of none, train-reverse-tiny)')),
    'an unknown job is named in the output with the ones there are',
  );
  const runDir = await withSetting('runFolder', root, () =>
    withSetting('startupJob', 'train-reverse-tiny', () => api.runStartupJob()),
  );
  assert.ok(runDir, 'the startup job started no run (see the output)');
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 60_000, 'the startup run to stop');
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  await ended;
  assert.equal(path.dirname(runDir), root);
  assert.match(path.basename(runDir), /^reverse-tiny-\d{8}-\d{6}$/);
  const config = JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual([config['d_model'], config['encoder_layers']], [64, 2], 'the tiny model (d_model 64, 2+2 layers)');
}, 90_000);
