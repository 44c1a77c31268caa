/**
 * The Run Check and Ablation Results panels in a real VS Code (issue 33 item 3). Check Run Folder
 * opens the run check on the selected run, and the panel follows the selection: a run the engine
 * trained is valid; a copy with a line of events.jsonl broken on purpose shows a finding naming that
 * file; the first run again is valid again. Ablate Heads… (its answers given, a small `limit`)
 * opens the ablation panel with the score as its row, kept in the run folder's ablations.json, and
 * the panel follows the selection: another run has none, the first shows its row again, read back.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AblationScore } from '../../../src/protocol/ablation';
import type { PanelKind } from '../../../src/protocol/webview';
import { activateExtension } from './api';
import { test } from './harness';
import { blankPage, drawnIn, microConfig, trainAndWait, until } from './runs';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-report-panels-'));
const good = path.join(tmp, 'runs', 'reverse-good');
const broken = path.join(tmp, 'runs', 'reverse-broken');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

type Slots = Awaited<ReturnType<typeof activateExtension>>['panels']['slots'];

/** Waits (2 minutes) until the `kind` panel shows `run` and its marks pass `marks`; fails saying what it shows. */
async function shows(slots: Slots, kind: PanelKind, run: string, marks: (m: string[]) => boolean): Promise<string[]> {
  let last = '';
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    try {
      const d = await drawnIn(slots, kind);
      last = JSON.stringify({ run: d.run, marks: d.marks });
      if (d.run === run && marks(d.marks)) return d.marks;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`the ${kind} panel shows ${last}, want ${run}`);
}

/** The good run, trained once; the broken one, its copy with an events.jsonl line that breaks the format. */
let trained: Promise<void> | undefined;
function runs(api: Awaited<ReturnType<typeof activateExtension>>): Promise<void> {
  trained ??= (async () => {
    await trainAndWait(api, good, 'reverse', microConfig(tmp, 10, 10));
    fs.cpSync(good, broken, { recursive: true });
    const events = path.join(broken, 'events.jsonl');
    fs.appendFileSync(events, '{"step": 3, "check": "dead_head", "severity": "fatal", "message": "planted"}\n');
  })();
  return trained;
}

test('Check Run Folder shows the selected run’s check, and the panel follows the selection to a broken copy and back', async () => {
  const api = await activateExtension();
  await runs(api);
  const slots = api.panels.slots;
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: good });
  await vscode.commands.executeCommand('attentionDebugger.checkRun');
  assert.ok(slots.runCheck.current, 'Check Run Folder opened its panel');
  const valid = (m: string[]) => m.some((x) => /^reverse-good: \d+ files checked: a valid run folder$/.test(x));
  await shows(slots, 'runCheck', 'reverse-good', valid);
  // The broken copy selected: the panel checks it, and one finding names the file, its line and field.
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: broken });
  const lines = fs.readFileSync(path.join(broken, 'events.jsonl'), 'utf8').split('\n').length - 1;
  const marks = await shows(slots, 'runCheck', 'reverse-broken', (m) =>
    m.some((x) => x.includes('not valid, 1 finding')),
  );
  const row = marks.find((x) => x.startsWith('1 | '));
  assert.ok(row, `a finding's row: ${JSON.stringify(marks)}`);
  assert.match(
    row,
    new RegExp(`^1 \\| events\\.jsonl \\| ${lines} \\| severity \\| expected "warning" or "breakpoint"`),
  );
  assert.ok(row.endsWith('| error'), row);
  // Back on the good run: valid again.
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: good });
  await shows(slots, 'runCheck', 'reverse-good', valid);
  slots.runCheck.current?.dispose();
}, 300_000);

test('Ablate Heads fills a row of the ablation panel, kept in the run folder; the panel follows the selection', async () => {
  const api = await activateExtension();
  await runs(api);
  const slots = api.panels.slots;
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: broken });
  // An ablation an earlier session saved, with numbers worked by hand: 96.0 → 41.5 is −54.5. The
  // micro run scores 0.0 → 0.0, so this row is what shows the columns' order and Δ's sign.
  const earlier = {
    ablation: { heads: ['cross:0.1'], mode: 'mean' },
    runDir: good,
    step: 10,
    metric: 'exact_match_percent',
    sentences: 200,
    intact: 96,
    ablated: 41.5,
    time: 1,
  };
  fs.writeFileSync(path.join(good, 'ablations.json'), JSON.stringify([earlier]));
  const earlierCells = '1 | cross:0.1 | mean | 10 | exact match % | 96.0 | 41.5 | −54.5 | 200';
  const score = await vscode.commands.executeCommand<AblationScore>('attentionDebugger.ablateHeads', {
    runDir: good,
    heads: ['cross:0.0'],
    mode: 'zero',
    limit: 10,
  });
  assert.ok(score, 'a score');
  assert.equal(score.sentences, 10);
  assert.ok(slots.ablations.current, 'Ablate Heads opened the ablation panel');
  const delta = score.ablated - score.intact;
  const cells = [
    '2',
    'cross:0.0',
    'zero',
    String(score.step),
    'exact match %',
    score.intact.toFixed(1),
    score.ablated.toFixed(1),
    `${delta < 0 ? '−' : '+'}${Math.abs(delta).toFixed(1)}`,
    '10',
  ].join(' | ');
  // The run it scored, though another is selected: the earlier row kept, then the score's numbers.
  const one = (m: string[]) => m.includes('rows 2') && m.includes(earlierCells) && m.includes(cells);
  await shows(slots, 'ablations', 'reverse-good', one);
  // A page that never comes up is replaced (panels/slot.ts): the new panel shows the run it was
  // given, not the selected one.
  const before = slots.ablations.replaced;
  await blankPage(slots, 'ablations');
  await until('the ablation panel replaced', () => slots.ablations.replaced === before + 1, 30_000);
  await shows(slots, 'ablations', 'reverse-good', one);
  const saved = JSON.parse(fs.readFileSync(path.join(good, 'ablations.json'), 'utf8')) as AblationScore[];
  assert.equal(saved.length, 2, 'the earlier ablation kept, the new one added in the run folder');
  assert.deepEqual(saved[0], earlier, 'the earlier ablation as it was');
  assert.deepEqual(
    { ...saved[1], time: undefined },
    { ...score, runDir: good, time: undefined },
    'the score as the engine gave it',
  );
  // The selection: the broken copy has no ablations; the good run shows its row again, read back.
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: broken });
  await shows(slots, 'ablations', 'reverse-broken', (m) => m.includes('No ablations of reverse-broken yet'));
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: good });
  await shows(slots, 'ablations', 'reverse-good', one);
  // Show Ablation Results from the palette opens it on the selected run.
  slots.ablations.current?.dispose();
  await vscode.commands.executeCommand('attentionDebugger.showAblations');
  await shows(slots, 'ablations', 'reverse-good', one);
  slots.ablations.current?.dispose();
}, 300_000);

test('Show Head Importance opens the Head Importance panel on the selected run', async () => {
  const api = await activateExtension();
  await runs(api);
  const slots = api.panels.slots;
  slots.importance.current?.dispose();
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: broken });
  await vscode.commands.executeCommand('attentionDebugger.showImportance');
  assert.ok(slots.importance.current, 'Show Head Importance opened its panel');
  await shows(slots, 'importance', 'reverse-broken', (m) => m.includes('No head importance for reverse-broken yet'));

  // Export View offers it images and HTML, not the attention view's data as its CSV or JSON.
  const picked = answer(() => undefined); // the format pick, cancelled
  const file = path.join(tmp, 'importance.csv');
  let refused = '';
  try {
    await vscode.commands.executeCommand('attentionDebugger.exportView', { panel: 'importance' });
    await vscode.commands.executeCommand('attentionDebugger.exportView', {
      panel: 'importance',
      format: 'csv',
      path: file,
    });
  } finally {
    picked.restore();
    refused = picked.asked.find((a) => a.fn === 'showErrorMessage')?.text ?? '';
  }
  const offered = picked.asked.find((a) => a.fn === 'showQuickPick')?.items;
  assert.deepEqual(offered, ['png', 'svg', 'html'], 'the formats offered');
  assert.match(refused, /the importance panel has no CSV export here: choose png, svg or html/);
  assert.ok(!fs.existsSync(file), 'nothing written');
  slots.importance.current?.dispose();
}, 300_000);
