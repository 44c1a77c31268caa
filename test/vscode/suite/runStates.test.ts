/**
 * A run's state tells the truth (issue 26 items 3, 4): a run whose loss diverged ends "diverged" and
 * a run paused at a breakpoint reads "paused", at once, in the notification's reason, status.json,
 * the Runs tree, the Current Run view and the dashboard header (not "completed", "(finished)" or
 * "idle" until Open Head is clicked).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import { activateExtension } from './api';
import { requestDrawn } from './drawn';
import { test, waitFor } from './harness';
import { inDarkTheme, screenshot } from './screenshot';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-states-'));
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** The micro model (d_model 16, 1+1 layers) with its learning rate `factor` times the paper's. */
function microConfig(name: string, factor: number, checks: Record<string, string>): string {
  const file = path.join(tmp, `${name}.json`);
  const training = {
    steps: 200,
    warmup: 4,
    lr_factor: factor,
    batch_tokens: 200,
    label_smoothing: 0.1,
    clip_norm: 0,
    seed: 3,
    checkpoint_every: 50,
    eval_every: 50,
    snapshot_every: 10,
    vocab_size: 100,
    max_length: 20,
    bleu_sentences: 0,
    telemetry_pairs: 8,
    checks,
  };
  const model = { d_model: 16, heads: 2, d_ff: 32, encoder_layers: 1, decoder_layers: 1, dropout: 0.1 };
  const rest = { norm_first: false, final_norm: false, positional: 'sinusoidal', max_len: 32, share_embeddings: true };
  fs.writeFileSync(file, JSON.stringify({ ...model, ...rest, training }));
  return file;
}

/** What the side bar and the dashboard say of `runDir` once its run ended. */
async function shownState(api: AttentionDebuggerApi, runDir: string, expected: string): Promise<void> {
  const state = api.currentRun.fields().find((f) => f.label === 'State')?.value;
  assert.equal(state, expected === 'paused' ? 'paused at a breakpoint' : expected, 'the Current Run view');
  const item = api.runs.getTreeItem({ kind: 'run', dir: runDir });
  assert.match(String(item.description ?? ''), new RegExp(`^${expected}`), 'the Runs tree');
  const status = JSON.parse(fs.readFileSync(path.join(runDir, 'status.json'), 'utf8')) as { state: string };
  assert.equal(status.state, expected, 'status.json');
  // the dashboard header, without selecting the run again (run/open answers once); a page that is
  // slow to load on a busy machine is opened anew by the panels (up to 10 s each)
  const deadline = Date.now() + 60_000;
  for (;;) {
    const d = await requestDrawn(api.panels.slots.dashboard.current!, []);
    const activity = typeof d === 'string' ? d : d.activity;
    if (activity === expected) break;
    assert.ok(Date.now() < deadline, `the dashboard header says ${activity}, not ${expected}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A screenshot in VS Code's default dark theme, notifications kept. */
const darkScreenshot = (name: string, api: AttentionDebuggerApi): Promise<unknown> =>
  inDarkTheme(() => screenshot(name, api, { keepNotifications: true }));

test('a run at LR factor 1000 ends diverged, with checks from the settings, everywhere at once', async () => {
  const api = await activateExtension();
  const cfg = vscode.workspace.getConfiguration('attentionDebugger');
  await cfg.update('runFolder', path.join(tmp, 'runs'), vscode.ConfigurationTarget.Global);
  // the setting turns the spike and collapse warnings off and NaN steps into warnings (the config says nothing)
  const checks = { loss_spike: 'off', entropy_collapse: 'off', nonfinite: 'warn', divergence: 'warn' };
  await cfg.update('checks', checks, vscode.ConfigurationTarget.Global);
  const runDir = path.join(tmp, 'runs', 'reverse-lr1000');
  try {
    const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 180_000, 'the run');
    await vscode.commands.executeCommand('attentionDebugger.train', {
      data: { kind: 'task', task: 'reverse' },
      config: microConfig('lr1000', 1000, {}),
      runDir,
    });
    const end = await ended;
    assert.equal(end.reason, 'diverged', `the run ended ${end.reason}`);
    assert.equal(end.step, 200, 'a warning: it trained on to its end');
    assert.equal(end.event?.check, 'divergence');
    const config = JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as {
      training: { checks: Record<string, string> };
    };
    assert.deepEqual(config.training.checks, checks, "the setting's checks are the run's");
    await shownState(api, runDir, 'diverged');
    await vscode.commands.executeCommand('attentionDebugger.runs.focus');
    await darkScreenshot('run-diverged', api);
  } finally {
    await cfg.update('checks', undefined, vscode.ConfigurationTarget.Global);
    await cfg.update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 300_000);

test('a run paused at a breakpoint reads paused at once, before Open Head', async () => {
  const api = await activateExtension();
  const cfg = vscode.workspace.getConfiguration('attentionDebugger');
  await cfg.update('runFolder', path.join(tmp, 'runs'), vscode.ConfigurationTarget.Global);
  const runDir = path.join(tmp, 'runs', 'reverse-paused');
  try {
    const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 180_000, 'the breakpoint');
    await vscode.commands.executeCommand('attentionDebugger.train', {
      data: { kind: 'task', task: 'reverse' },
      config: microConfig('hot', 100, {
        entropy_collapse: 'break',
        loss_spike: 'off',
        nonfinite: 'warn',
        dead_head: 'off',
      }),
      runDir,
    });
    const end = await ended;
    assert.equal(end.reason, 'paused', `the run ended ${end.reason}`);
    await shownState(api, runDir, 'paused');
    await vscode.commands.executeCommand('attentionDebugger.runs.focus');
    await darkScreenshot('run-paused', api);
  } finally {
    await cfg.update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 300_000);

test('the Train wizard asks which checks break: divergence picked ends the run at once, diverged', async () => {
  const api = await activateExtension();
  const runDir = path.join(tmp, 'runs', 'wizard-break');
  const config = microConfig('wizard', 1000, {});
  const cfg = vscode.workspace.getConfiguration('attentionDebugger');
  await cfg.update('runFolder', path.join(tmp, 'runs'), vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('notifications.clearAll'); // the earlier tests' ends
  let offered: string[] = [];
  const ui = answer((a) => {
    if (a.text.includes('(1/4)')) return 'reverse';
    if (a.text.includes('(2/4)')) return 'JSON file…';
    if (a.fn === 'showOpenDialog') return config;
    if (a.text.includes('(3/4)')) return 'Advanced…';
    if (a.text.includes('— Break on')) {
      offered = a.items;
      return ['divergence'];
    }
    if (a.text.includes('(4/4)')) return runDir;
    return a.fn === 'showInputBox' ? '' : undefined; // steps, warmup…: the config's
  });
  try {
    const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 180_000, 'the run');
    await vscode.commands.executeCommand('attentionDebugger.train');
    ui.restore(); // the wizard is done: the end's notification is shown for real
    const end = await ended;
    await vscode.commands.executeCommand('attentionDebugger.runs.focus');
    // at once, before the notification hides (no wait for the panels' frames)
    await screenshot('run-diverged-notification', undefined, { keepNotifications: true });
    assert.deepEqual(offered, [
      'nonfinite',
      'loss_spike',
      'entropy_collapse',
      'dead_head',
      'mask_leak',
      'padding_leak',
      'divergence',
    ]);
    assert.equal(end.reason, 'diverged', `the run ended ${end.reason}`);
    assert.ok(end.step < 200, `it ended at once, at step ${end.step}, not at its last step`);
    assert.equal(end.event?.step, end.step, 'at the step the check fired');
    const saved = JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as {
      training: { checks: Record<string, string> };
    };
    assert.equal(saved.training.checks['divergence'], 'break');
    assert.equal(saved.training.checks['nonfinite'], 'warn', 'not picked: a warning');
  } finally {
    ui.restore();
    await cfg.update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 300_000);
