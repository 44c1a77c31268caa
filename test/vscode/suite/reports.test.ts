/**
 * The reports in a real VS Code (issue 26 item 13): Ablate Heads from the palette asks which run
 * (the selected one first) and its toast leads with the numbers; Head Importance shows its
 * progress in a notification that counts the pruning points, and saves its report in the run
 * folder (Markdown and JSON) and shows it in the Head Importance panel, never as an unsaved
 * Untitled document (the panel itself: importance.test.ts).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AblationScore } from '../../../src/protocol/ablation';
import type { HeadReport } from '../../../src/protocol/heads';
import { activateExtension } from './api';
import { test } from './harness';
import { microConfig, trainAndWait } from './runs';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-reports-'));
const root = path.join(tmp, 'runs');
const older = path.join(root, 'reverse-older');
const run = path.join(root, 'reverse-reports');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('Reports: Ablate Heads from the palette asks which run, the selected first, and its toast starts with the numbers', async () => {
  const api = await activateExtension();
  const settings = vscode.workspace.getConfiguration('attentionDebugger');
  await settings.update('runFolder', root, vscode.ConfigurationTarget.Global);
  try {
    await trainAndWait(api, older, 'reverse', microConfig(tmp, 10, 10));
    await trainAndWait(api, run, 'reverse', microConfig(tmp, 20, 10));
    // The older run is the selected one: the newest run is listed first otherwise.
    await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: older });
    const ui = answer((a) => {
      if (a.text === 'Ablate heads of which run?') return 'reverse-older';
      if (a.text === 'Ablate which heads of reverse-older?') return ['cross:0.0'];
      if (a.text === 'Ablate 1 head: how?') return 'zero';
      return undefined;
    });
    let score: AblationScore | undefined;
    try {
      score = await vscode.commands.executeCommand<AblationScore>('attentionDebugger.ablateHeads');
    } finally {
      ui.restore();
    }
    const picker = ui.asked.find((a) => a.text === 'Ablate heads of which run?');
    assert.ok(picker, `the run was asked for; asked: ${ui.asked.map((a) => a.text).join(' | ')}`);
    assert.equal(picker.items[0], 'reverse-older', `the selected run first: ${picker.items.join(', ')}`);
    assert.ok(picker.items.includes('reverse-reports'), 'the other run is offered');
    assert.ok(score, 'a score');
    // The toast leads with the metric before and after, as the engine computed them.
    const toast = ui.asked.find((a) => a.fn === 'showInformationMessage')?.text ?? '';
    const numbers = `exact match ${score.intact.toFixed(1)} → ${score.ablated.toFixed(1)}`;
    assert.ok(toast.startsWith(numbers), `the toast starts with "${numbers}": ${toast}`);
    assert.ok(toast.includes('cross:0.0'), `the toast names the head: ${toast}`);
    assert.ok(toast.length <= 120, `a short toast (${toast.length} characters): ${toast}`);
  } finally {
    await settings.update('runFolder', undefined, vscode.ConfigurationTarget.Global);
  }
}, 240_000);

test('Reports: Head Importance shows its progress in a notification and opens a report saved in the run folder', async () => {
  const api = await activateExtension();
  const w = vscode.window as unknown as Record<string, unknown>;
  const withProgress = w['withProgress'] as typeof vscode.window.withProgress;
  const shown: { location: unknown; cancellable?: boolean; messages: string[] } = { location: undefined, messages: [] };
  w['withProgress'] = ((o: vscode.ProgressOptions, task: Parameters<typeof vscode.window.withProgress>[1]) => {
    shown.location = o.location;
    shown.cancellable = o.cancellable;
    return withProgress.call(vscode.window, o, (progress, token) =>
      task(
        {
          report: (v) => {
            if (v.message) shown.messages.push(v.message);
            progress.report(v);
          },
        },
        token,
      ),
    );
  }) as typeof vscode.window.withProgress;
  let report: HeadReport | undefined;
  try {
    report = await vscode.commands.executeCommand<HeadReport>('attentionDebugger.headImportance', {
      runDir: run,
      limit: 20,
    });
  } finally {
    w['withProgress'] = withProgress;
  }
  assert.ok(report, 'a report');
  assert.equal(shown.location, vscode.ProgressLocation.Notification, 'a notification, not the status bar');
  assert.equal(shown.cancellable, true, 'it can be cancelled');
  // micro: 6 heads, so each of the two pruning curves has 7 points (none removed, then 1 … 6).
  assert.ok(shown.messages.includes('14 of 14 pruning points (importance done)'), shown.messages.join(' | '));
  assert.ok(
    shown.messages.some((m) => m.startsWith('1 of 14 ')),
    shown.messages.join(' | '),
  );
  const untitled = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'untitled');
  assert.deepEqual(
    untitled.map((d) => d.uri.toString()),
    [],
    'no unsaved Untitled document is opened',
  );
  const file = path.join(run, `heads-report-step-${report.step}.md`);
  assert.ok(fs.existsSync(file), `${file} is saved`);
  assert.ok(fs.readFileSync(file, 'utf8').startsWith('# Heads of reverse-reports at step 20'));
  const json = path.join(run, `heads-report-step-${report.step}.json`);
  assert.deepEqual(JSON.parse(fs.readFileSync(json, 'utf8')), report, 'the JSON beside it is the report');
  assert.ok(api.panels.slots.importance.current, 'the report is shown in the Head Importance panel');
}, 120_000);
