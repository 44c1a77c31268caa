/**
 * The Runs view, an engine killed mid-training, and Resume, on the runs training.test.ts left
 * (the tests run in order).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { until } from './runs';
import { runsDir, run1, run2, copyConfig, checkpointSteps } from './trainingRuns';

test('the Runs view lists run folders with their checkpoints', async () => {
  const api = await activateExtension();
  await vscode.workspace
    .getConfiguration('attentionDebugger')
    .update('runFolder', runsDir, vscode.ConfigurationTarget.Global);
  try {
    const runs = api.runs.getChildren();
    const node = runs.find((n) => n.kind === 'run' && n.dir === run1);
    assert.ok(node, `run1 listed (got ${JSON.stringify(runs)})`);
    const children = api.runs.getChildren(node).map((c) => (c.kind === 'checkpoint' ? c.step : -1));
    assert.deepEqual(
      [...children].sort((a, b) => a - b),
      checkpointSteps(run1),
    );
    // A click on a run row expands it (no command) and selects the run.
    assert.equal(api.runs.getTreeItem(node).command, undefined);
    await vscode.commands.executeCommand('workbench.view.extension.attentionDebugger');
    await vscode.commands.executeCommand('attentionDebugger.openDashboard'); // another run is selected first
    const other = path.join(runsDir, 'copy-micro-copy');
    fs.cpSync(run1, other, { recursive: true });
    await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: other });
    assert.equal(api.viewer.selection?.runDir, other);
    // The tree highlights the opened run once its row is listed; a person clicks after that.
    await until('the opened run highlighted', () => {
      const row = api.runsView.selection[0];
      return row?.kind === 'run' && row.dir === other;
    });
    const selected = waitFor(api.viewer.onDidChange, (s) => s.runDir === run1, 20_000, 'the run selected');
    await api.runsView.reveal(node, { select: true, focus: true });
    await selected;
    // A click on a checkpoint shows the probe's attention at that step.
    const ckpt = api.runs.getChildren(node).find((c) => c.kind === 'checkpoint' && c.step === 5)!;
    const click = api.runs.getTreeItem(ckpt).command!;
    // A click selects the row, then runs its command, which reads the row from the selection.
    await api.runsView.reveal(ckpt, { select: true, focus: true });
    const shown = await vscode.commands.executeCommand<{ source: { step: number } } | undefined>(
      click.command,
      ...(click.arguments ?? []),
    );
    assert.equal(shown?.source.step, 5);
    assert.equal(api.panels.store.attention?.source.step, 5);
    assert.equal(api.viewer.selection?.step, 5, 'the checkpoint click selects its step');
  } finally {
    await vscode.workspace
      .getConfiguration('attentionDebugger')
      .update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 30_000);

test('the Runs view lists a run opened from outside the run folder while the views show it', async () => {
  const api = await activateExtension();
  const outside = path.join(path.dirname(runsDir), 'outside-micro-copy');
  fs.cpSync(run1, outside, { recursive: true });
  const listed = () => api.runs.getChildren().some((n) => n.kind === 'run' && n.dir === outside);
  assert.ok(!listed(), 'not listed before it is opened');
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: outside });
  assert.equal(api.viewer.selection?.runDir, outside);
  assert.ok(listed(), `listed once open (got ${JSON.stringify(api.runs.getChildren())})`);
});

test('an engine killed mid-training is reported, restarted, and the run resumes from its checkpoint', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'copy' },
    config: copyConfig(2000),
    runDir: run2,
    openPanels: false,
  });
  assert.equal(api.training.runDir, run2);
  await until(
    'a checkpoint and two more steps',
    () => {
      const c = checkpointSteps(run2);
      return c.length > 0 && (api.training.lastRow?.step ?? 0) >= c[c.length - 1] + 2;
    },
    90_000,
  );
  const before = api.engine.pid!;
  const resumed = waitFor(
    api.training.onDidResume,
    (e) => e.runDir === run2 && e.cause === 'crash',
    60_000,
    'the run to resume',
  );
  process.kill(before, 'SIGKILL');
  const { step } = await resumed;
  assert.notEqual(api.engine.pid, before, 'a new engine process');
  const ckpts = checkpointSteps(run2);
  assert.equal(step, ckpts[ckpts.length - 1], `resumed at the newest checkpoint (${ckpts.join(', ')})`);
  assert.ok(step > 0);
  assert.ok(
    api.engine.recentLog().some((l) => l.includes('the engine died while') && l.includes(run2)),
    'the crash is reported in the output',
  );
  const next = await waitFor(api.training.onDidMetrics, (e) => e.runDir === run2, 60_000, 'metrics after the resume');
  assert.equal(next.rows[0].step, step + 1, 'the step count goes on from the checkpoint');
  assert.equal(api.training.training, true);
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  assert.equal(api.training.training, false);
}, 180_000);

test('Resume goes on with a stopped run from its newest checkpoint', async () => {
  const api = await activateExtension();
  const newest = Math.max(...checkpointSteps(run1));
  const more = waitFor(api.training.onDidMetrics, (e) => e.runDir === run1, 60_000, 'metrics of the resumed run');
  const summary = await vscode.commands.executeCommand<{ step: number; runDir: string } | undefined>(
    'attentionDebugger.resume',
    { runDir: run1, progress: false },
  );
  assert.ok(summary, 'Resume returned nothing (see the output)');
  assert.equal(summary.step, newest);
  assert.equal(api.training.runDir, run1);
  assert.equal((await more).rows[0].step, newest + 1);
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  assert.equal(api.training.training, false);
}, 90_000);
