/**
 * The Head Importance panel in a real VS Code (issue 33 item 3): Head Importance and Pruning on a
 * micro run opens the panel on that run's report (its step, its heads, what can go), and the
 * panel follows the selection: Open Run on a run without a report makes it say so, and Open Run
 * back on the first shows its report again, read from the JSON saved in the run folder.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HeadReport } from '../../../src/protocol/heads';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait } from './runs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-importance-'));
const scored = path.join(tmp, 'runs', 'reverse-scored');
const other = path.join(tmp, 'runs', 'reverse-unscored');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('Head Importance opens its panel on the run it scored, and the panel follows the selected run', async () => {
  const api = await activateExtension();
  await trainAndWait(api, scored, 'reverse', microConfig(tmp, 10, 10));
  await trainAndWait(api, other, 'reverse', microConfig(tmp, 10, 10));
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: other });
  const report = await vscode.commands.executeCommand<HeadReport>('attentionDebugger.headImportance', {
    runDir: scored,
    limit: 10,
  });
  assert.ok(report, 'a report');
  const slots = api.panels.slots;
  assert.ok(slots.importance.current, 'Head Importance opened its panel');
  const heads = Object.keys(report.importance).length;
  // A micro model may score no more than the 1 point that may be lost: the panel then says so
  // instead of how many heads can go (protocol/heads.ts nothingToLose).
  const untrained = report.byImportance[0]!.metric <= report.tolerance;
  const said = untrained
    ? `Step ${report.step}: with every head the model scores ${report.byImportance[0]!.metric.toFixed(2)} exact match %`
    : `Step ${report.step}: ${report.prunable.byImportance} of ${heads} heads can go`;
  // What the panel shows, asked until it is `run` at `step` with `marks` (2 minutes). A page that
  // did not say ready in time is replaced by a new panel (panels/base.ts, on a loaded machine):
  // each ask takes the slot's current one.
  const shows = async (run: string, marks: (m: string[]) => boolean, step: number | null) => {
    let last = '';
    const end = Date.now() + 120_000;
    while (Date.now() < end) {
      try {
        const d = await drawnIn(slots, 'importance');
        last = JSON.stringify({ run: d.run, step: d.step, marks: d.marks });
        if (d.run === run && d.step === step && marks(d.marks)) return;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.fail(`the Head Importance panel shows ${last}, want ${run} at step ${step}`);
  };
  // The scored run, though another is selected: its report's step, one row per head, what can go.
  await shows('reverse-scored', (m) => m.includes(`rows ${heads}`) && m.some((x) => x.startsWith(said)), report.step);
  // Open Run on the other run: the panel follows it, and says it has no report yet.
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: other });
  await shows('reverse-unscored', (m) => m.includes('No head importance for reverse-unscored yet'), null);
  // Back on the scored run: its report again, from the JSON saved in its folder.
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: scored });
  await shows('reverse-scored', (m) => m.includes(`rows ${heads}`) && m.some((x) => x.startsWith(said)), report.step);
  assert.ok(fs.existsSync(path.join(scored, `heads-report-step-${report.step}.json`)), 'the JSON is saved');
  assert.ok(fs.existsSync(path.join(scored, `heads-report-step-${report.step}.md`)), 'the Markdown stays written');
  slots.importance.current?.dispose();
}, 300_000);
