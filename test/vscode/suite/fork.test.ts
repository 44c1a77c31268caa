/**
 * Fork From Here… in a real VS Code (issue 13): from a checkpoint row of the Runs view, with the
 * user's answers scripted at VS Code's own prompts (ui.ts): a head frozen and the learning rate
 * halved. The fork trains, sits under its parent in the Runs view, and the dashboard draws both.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunNode } from '../../../src/extension/views';
import { activateExtension, EXTENSION_ID } from './api';
import { test, waitFor } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { inDarkTheme, screenshot } from './screenshot';
import { answer } from './ui';
import type { AblationScore } from '../../../src/protocol/ablation';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-fork-'));
const root = path.join(tmp, 'runs');
const parent = path.join(root, 'reverse-parent');
const fork = path.join(root, 'reverse-fork');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('Fork From Here… on a checkpoint row trains a fork that sits under its parent and is drawn over it', async () => {
  const api = await activateExtension();
  const settings = vscode.workspace.getConfiguration('attentionDebugger');
  await settings.update('runFolder', root, vscode.ConfigurationTarget.Global);
  try {
    await trainAndWait(api, parent, 'reverse', microConfig(tmp, 20, 10));
    const row = api.runs
      .getChildren({ kind: 'run', dir: parent })
      .find((n) => n.kind === 'checkpoint' && n.step === 10);
    assert.ok(row, 'the parent has a checkpoint row at step 10');
    assert.equal(api.runs.getTreeItem(row).contextValue, 'checkpoint');
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
      contributes: { menus: Record<string, { command: string; when: string }[]> };
    };
    const menu = manifest.contributes.menus['view/item/context']!;
    assert.ok(
      menu.some((m) => m.command === 'attentionDebugger.forkRun' && m.when.includes('viewItem == checkpoint')),
      "Fork From Here… is on the checkpoint row's context menu",
    );

    const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === fork, 120_000, 'the end of the fork');
    const ui = answer((a) => {
      if (a.text.startsWith('Fork reverse-parent at step 10: what changes?'))
        return ['Freeze heads…', 'Learning-rate factor…'];
      if (a.text === 'Fork: Freeze heads') return ['cross:0.1'];
      if (a.text === 'Fork: Learning-rate factor') return '0.5';
      if (a.text.startsWith('Fork: train to which step?')) return '30';
      if (a.text === 'Fork: run folder') return fork;
      return undefined;
    });
    try {
      // The context menu passes the row itself.
      await vscode.commands.executeCommand('attentionDebugger.forkRun', row);
    } finally {
      ui.restore();
    }
    const heads = ui.asked.find((a) => a.text === 'Fork: Freeze heads');
    assert.equal(heads?.items.length, 6, 'every head of the micro model: 3 kinds × 1 layer × 2 heads');
    assert.equal((await ended).reason, 'completed');

    const config = JSON.parse(fs.readFileSync(path.join(fork, 'config.json'), 'utf8'));
    assert.deepEqual(config.fork, {
      parent,
      step: 10,
      changes: { freeze_heads: ['cross:0.1'], lr_factor: 0.5, steps: 30 },
    });
    const steps = fs
      .readFileSync(path.join(fork, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepEqual(steps, [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);

    // The Runs view: the fork under its parent, not at the top.
    api.runs.refresh();
    const top = api.runs.getChildren().map((n) => (n as { dir?: string }).dir);
    assert.ok(top.includes(parent) && !top.includes(fork), `top level: ${top.join(', ')}`);
    const under = api.runs.getChildren({ kind: 'run', dir: parent });
    assert.deepEqual(under[0], { kind: 'run', dir: fork } satisfies RunNode);
    assert.match(String(api.runs.getTreeItem(under[0]!).description), /fork @10/);
    // VS Code applies refresh() later: until it has, the view still holds the fork as a top-level
    // row, and revealing it under its parent fails as "already registered" (CI, 2026-11-28). A
    // person clicks a row the view shows; the test tries again as the view catches up.
    for (let tries = 10; ; tries--) {
      try {
        await api.runsView.reveal(under[0]!, { expand: false, select: true });
        break;
      } catch (e) {
        if (tries <= 1 || !String(e).includes('already registered')) throw e;
        await new Promise((r) => setTimeout(r, 300));
      }
    }

    // One dashboard: the fork's own curves, from step 11, and its parent's from step 1.
    await until('the dashboard', () => api.panels.slots.dashboard.current?.isReady === true, 30_000);
    await until('the fork’s rows', () => api.panels.store.rows.length === 20, 30_000);
    assert.equal(api.panels.store.rows[0]?.step, 11);
    const drawn = await drawnIn(api.panels.slots, 'dashboard');
    assert.equal(drawn.run, 'reverse-fork');
    assert.ok(drawn.marks.includes('overlay reverse-parent@1'), `marks: ${drawn.marks.join(', ')}`);
    // issue 26 item 12 in the default dark theme: legends outside the plot, the selected run on top
    await inDarkTheme(() => screenshot('dashboard-fork-over-parent', api));
  } finally {
    await settings.update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 240_000);

test('Ablate Heads… on a run asks which heads and how, and reports the test split’s score with and without them', async () => {
  await activateExtension();
  const ui = answer((a) => {
    if (a.text === 'Ablate which heads of reverse-parent?') return ['cross:0.0', 'cross:0.1'];
    if (a.text === 'Ablate 2 heads: how?') return 'zero';
    return undefined;
  });
  let score: AblationScore | undefined;
  try {
    score = await vscode.commands.executeCommand<AblationScore>('attentionDebugger.ablateHeads', {
      kind: 'run',
      dir: parent,
    });
  } finally {
    ui.restore();
  }
  assert.ok(score, `no score; asked: ${ui.asked.map((a) => a.text).join(' | ')}`);
  assert.deepEqual(score.ablation, { heads: ['cross:0.0', 'cross:0.1'], mode: 'zero' });
  assert.equal(score.metric, 'exact_match_percent');
  assert.equal(score.sentences, 200, "the reverse task's test split");
  assert.equal(score.step, 20);
  assert.ok(
    ui.asked.some((a) => a.fn === 'withProgress' && a.text === String(vscode.ProgressLocation.Notification)),
    'progress while the split is decoded twice',
  );
  const told = ui.asked.find((a) => a.fn === 'showInformationMessage')?.text ?? '';
  assert.match(
    told,
    /^exact match [\d.]+ → [\d.]+ \([+−][\d.]+\) with cross:0\.0, cross:0\.1 zero-ablated · reverse-parent, step 20, 200 test sentences$/,
  );
}, 120_000);
