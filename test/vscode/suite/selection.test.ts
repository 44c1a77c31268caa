/**
 * Every view says which run, step and input it shows, and shows only that (the selection): what a
 * newcomer tripped on, replayed in a real VS Code with the real engine and checked as the panels
 * drew it (each page reports its header, maps and cell colours: `requestDrawn`, ./drawn.ts). Micro models
 * (d_model 16, 1+1 layers) keep runs to seconds. The tests run in order and share their runs.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import type { BeamTreeView } from '../../../src/protocol/beamTree';
import type { HeadReport } from '../../../src/protocol/heads';
import type { CellRef } from '../../../src/protocol/drawnReport';
import type { PanelKind } from '../../../src/protocol/webview';
import type { DrawnMsg } from './drawn';
import { trainResume } from '../../../src/protocol/methods';
import { ENGINE_ERROR } from '../../../src/protocol/training';
import { activateExtension } from './api';
import { test, waitFor } from './harness';
import { blankPage, drawnIn, microConfig, snapshotFiles, trainAndWait, until } from './runs';
import { screenshot } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-sel-'));
const reverse = path.join(tmp, 'runs', 'reverse-micro');
const sort = path.join(tmp, 'runs', 'sort-micro');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

const micro = (steps: number): string => microConfig(tmp, steps);

type Kind = PanelKind;
let slots: AttentionDebuggerApi['panels']['slots'];
const drawn = (kind: Kind, cells: CellRef[] = []): Promise<DrawnMsg> => drawnIn(slots, kind, cells);

async function trainMicro(api: AttentionDebuggerApi, runDir: string, task: string, steps: number): Promise<void> {
  await trainAndWait(api, runDir, task, micro(steps));
}

test('the inspector shows the selected run’s history, named in its header, while another run trains', async () => {
  const api = await activateExtension();
  slots = api.panels.slots;
  await trainMicro(api, reverse, 'reverse', 30);
  await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'sort' },
    config: micro(5000),
    runDir: sort,
  });
  await until('two snapshots of the sort run', () => (api.training.lastSnapshot?.source.step ?? 0) >= 10);
  // The reverse run's last checkpoint from the Runs view, then a click on a cross-attention thumbnail.
  await vscode.commands.executeCommand('attentionDebugger.showCheckpoint', { runDir: reverse, step: 30 });
  api.panels.host.request('attention', { type: 'openHead', v: 3, kind: 'cross', layer: 0, head: 1 });
  await until('the inspector', () => slots.head.current?.isReady === true, 30_000);
  const sortStep = api.training.lastSnapshot!.source.step;
  await until('more sort snapshots', () => (api.training.lastSnapshot?.source.step ?? 0) >= sortStep + 10);
  const head = await drawn('head');
  assert.equal(head.run, 'reverse-micro', 'the inspector names the run whose history it shows');
  assert.equal(head.step, 30);
  assert.equal(head.input, 'probe');
  assert.deepEqual(head.head, { kind: 'cross', layer: 0, head: 1 });
  assert.equal(head.frames, snapshotFiles(reverse), 'one frame per reverse snapshot, none of the sort run');
  assert.ok(api.panels.store.snapshots.every((s) => s.source.runDir === reverse));
  const view = await drawn('attention');
  assert.equal(view.run, 'reverse-micro');
  assert.equal(view.step, 30);
  await screenshot('inspector-while-another-run-trains', api);
}, 240_000);

test('Train from the palette while a run trains does not stop it', async () => {
  const api = await activateExtension();
  const pkg = vscode.extensions.getExtension('attention-debugger.attention-debugger')!.packageJSON as {
    contributes: { menus: { commandPalette: { command: string; when?: string }[] } };
  };
  const palette = pkg.contributes.menus.commandPalette.find((m) => m.command === 'attentionDebugger.train');
  assert.ok(!palette?.when?.includes('training'), 'Train stays in the palette while a run trains');
  assert.equal(api.training.runDir, sort);
  const r = await vscode.commands.executeCommand('attentionDebugger.train', {
    data: { kind: 'task', task: 'copy' },
    config: micro(10),
    runDir: path.join(tmp, 'runs', 'second'),
  });
  assert.equal(r, undefined, 'no second run: the engine trains one at a time');
  assert.equal(api.training.runDir, sort, 'the sort run still trains');
  const before = api.training.lastRow?.step ?? 0;
  await until('the sort run to go on', () => (api.training.lastRow?.step ?? 0) > before + 2);
}, 60_000);

test('a run’s context-menu Decode uses that run, with the editor’s selected text', async () => {
  await activateExtension();
  const doc = await vscode.workspace.openTextDocument({ content: '4 5 6' });
  const editor = await vscode.window.showTextDocument(doc);
  editor.selection = new vscode.Selection(0, 0, 0, 5);
  const r = await vscode.commands.executeCommand<{ payload: { source: { runDir: string; input: string } } }>(
    'attentionDebugger.decode',
    { kind: 'run', dir: reverse }, // what VS Code passes from the Runs view's context menu
  );
  assert.ok(r, 'Decode returned nothing (see the output)');
  assert.equal(r.payload.source.runDir, reverse);
  await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
}, 60_000);

test('Decode adds no frame to the history: an input is shown at its checkpoint, as such', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: reverse });
  api.panels.openHeadInspector({ kind: 'cross', layer: 0, head: 0 });
  const history = api.panels.store.snapshots.length;
  assert.equal(history, snapshotFiles(reverse));
  await vscode.commands.executeCommand('attentionDebugger.decode', { runDir: reverse, text: '5 6 7' });
  assert.equal(api.panels.store.snapshots.length, history, 'the history is the probe’s snapshots only');
  const view = await drawn('attention');
  assert.equal(view.input, '5 6 7', 'the attention view names the input as typed, as the header does');
  assert.equal(view.step, 30, 'at the newest checkpoint, not at "step 0"');
  const head = await drawn('head');
  assert.equal(head.frames, 1, 'the inspector shows the input alone: no history');
  assert.equal(head.input, '5 6 7');
  // Back to the probe: the history returns.
  api.panels.host.request('attention', { type: 'inspectInput', v: 3, input: { kind: 'probe' } });
  await until('the probe again', () => api.panels.store.attention?.source.input === 'probe', 30_000);
  assert.equal((await drawn('head')).frames, history);
}, 60_000);

test('Resume on a finished run does not hang: it asks how many more steps, and trains them', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.stop', { confirm: false });
  await assert.rejects(api.engine.request(trainResume, { runDir: reverse }), (err: { code?: number }) => {
    assert.equal(err.code, ENGINE_ERROR.runFinished);
    return true;
  });
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === reverse, 60_000, 'the resumed run to end');
  const summary = await vscode.commands.executeCommand<{ step: number } | undefined>('attentionDebugger.resume', {
    runDir: reverse,
    more: 5,
  });
  assert.ok(summary, 'Resume returned nothing (see the output)');
  assert.equal(summary.step, 30);
  const end = await ended;
  assert.deepEqual([end.reason, end.step], ['completed', 35]);
  assert.equal(api.training.training, false, 'nothing is left "training"');
  const fields = Object.fromEntries(api.currentRun.fields().map((f) => [f.label, f.value]));
  assert.equal(fields['Run'], 'reverse-micro');
  assert.equal(fields['Step'], '35 / 35', 'Current Run shows this run’s figures');
}, 90_000);

test('a PyTorch-written checkpoint folder opens and shows attention for token ids', async () => {
  const api = await activateExtension();
  const repo = vscode.extensions.getExtension('attention-debugger.attention-debugger')!.extensionPath;
  const golden = path.join(repo, 'test', 'fixtures', 'golden', 'post_ln_sinusoidal');
  const dir = path.join(tmp, 'pytorch-folder');
  fs.mkdirSync(dir);
  for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(golden, f), path.join(dir, f));
  const opened = await vscode.commands.executeCommand<{ summary: { vocab: boolean } } | undefined>(
    'attentionDebugger.openRun',
    { runDir: dir },
  );
  assert.ok(opened, 'Open Run failed (see the output)');
  assert.equal(opened.summary.vocab, false);
  api.panels.openAttention();
  api.panels.host.request('attention', { type: 'inspectInput', v: 3, input: { kind: 'ids', src: [5, 6, 7] } });
  await until('its attention', () => api.panels.store.attention?.source.runDir === dir, 30_000);
  assert.deepEqual(api.panels.store.attention!.srcTokens, ['5', '6', '7', '</s>']);
  const view = await drawn('attention');
  assert.deepEqual(
    view.maps.map((m) => m.kind),
    ['encoder_self', 'decoder_self', 'cross'],
  );
  // Text needs a vocabulary: the error says what is missing and what to type instead.
  const r = await vscode.commands.executeCommand('attentionDebugger.decode', { runDir: dir, text: 'hello world' });
  assert.equal(r, undefined);
  assert.ok(
    api.engine.recentLog().some((l) => l.includes('no vocab.json') && l.includes('type token ids')),
    'the error names the missing vocab.json',
  );
}, 60_000);

test('Show Beam Tree draws the search of a sentence; its chosen leaf is Decode’s answer; a node shows its attention', async () => {
  const api = await activateExtension();
  const args = { runDir: reverse, text: '5 6 7' };
  const decoded = await vscode.commands.executeCommand<{ tokens: string[] }>('attentionDebugger.decode', args);
  assert.ok(decoded, 'Decode returned nothing (see the output)');
  const tree = await vscode.commands.executeCommand<BeamTreeView>('attentionDebugger.beamTree', args);
  assert.ok(tree, 'Show Beam Tree returned nothing (see the output)');
  const best = tree.nBest[0]!;
  const path: string[] = [];
  for (let n = tree.nodes[best]!; n.parent >= 0; n = tree.nodes[n.parent]!) path.unshift(n.text);
  assert.deepEqual(path, [...decoded.tokens, '</s>'], 'the chosen leaf is what Decode answered');
  await until('the beam tree', () => slots.beam.current?.isReady === true, 30_000);
  const d = await drawn('beam');
  assert.equal(d.run, 'reverse-micro');
  assert.equal(d.input, '5 6 7');
  assert.equal(d.frames, tree.nodes.length, 'every hypothesis is drawn');
  const chosen = tree.nodes.filter((n) => n.chosen).map((n) => n.id);
  assert.ok(d.marks.includes(`chosen:${chosen.join(',')}`), `marks ${d.marks.join(' ')}`);
  slots.beam.current!.receive({ type: 'beamNode', v: 3, node: best }); // what the page posts on a click: its panel answers
  let shown: DrawnMsg | undefined;
  const end = Date.now() + 30_000;
  while (!shown?.marks.includes(`node:${best}`)) {
    assert.ok(Date.now() < end, 'the node’s attention never came');
    await new Promise((r) => setTimeout(r, 200));
    shown = await drawn('beam');
  }
  const T = path.length; // decoder input: <s> and the path without its </s>
  assert.deepEqual(shown.maps, [
    { kind: 'cross', shape: [1, 2, T, tree.srcIds.length] },
    { kind: 'decoder_self', shape: [1, 2, T, T] },
  ]);
  await screenshot('beam-tree', api);
}, 90_000);

test('switching heads off in the attention view shows each target token’s log-prob change and the new output', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.decode', { runDir: reverse, text: '5 6 7' });
  await until('the attention view', () => slots.attention.current?.isReady === true, 30_000);
  const heads = ['cross:0.0', 'cross:0.1'];
  slots.attention.current!.receive({ type: 'ablateHeads', v: 3, ablation: { heads, mode: 'zero' } });
  let shown: DrawnMsg | undefined;
  const end = Date.now() + 30_000;
  while (!shown?.marks.some((m) => m.startsWith('delta '))) {
    assert.ok(Date.now() < end, 'the effect of the ablation never came');
    await new Promise((r) => setTimeout(r, 200));
    shown = await drawn('attention');
  }
  assert.ok(shown.marks.includes('off cross:0.0') && shown.marks.includes('off cross:0.1'), shown.marks.join(' '));
  const deltas = shown.marks.filter((m) => m.startsWith('delta ')).map((m) => Number(m.slice(6)));
  assert.ok(
    deltas.some((d) => Math.abs(d) > 1e-3),
    `without every cross head the target's log-probs change: ${deltas}`,
  );
  await screenshot('attention-heads-off', api);
  slots.attention.current!.receive({ type: 'ablateHeads', v: 3, ablation: { heads: [], mode: 'zero' } });
  const back = Date.now() + 30_000;
  while ((await drawn('attention')).marks.some((m) => m.startsWith('off '))) {
    assert.ok(Date.now() < back, 'the heads never came back on');
    await new Promise((r) => setTimeout(r, 200));
  }
}, 90_000);

test('Open Run on a finished run fills the Heads panel with every telemetry row it wrote', async () => {
  await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: reverse });
  await vscode.commands.executeCommand('attentionDebugger.openHeads');
  await until('the Heads panel', () => slots.heads.current?.isReady === true, 30_000);
  const rows = fs.readFileSync(path.join(reverse, 'telemetry.jsonl'), 'utf8').split('\n').filter(Boolean).length;
  assert.ok(rows >= 5, `the reverse run wrote telemetry (${rows} rows)`);
  const d = await drawn('heads');
  assert.equal(d.run, 'reverse-micro');
  assert.equal(d.frames, rows, 'a column per telemetry row of the run on disk');
}, 60_000);

test('Head Importance and Pruning shows which heads of a run matter, in a report beside the editor', async () => {
  await activateExtension();
  const report = await vscode.commands.executeCommand<HeadReport>('attentionDebugger.headImportance', {
    runDir: reverse,
    limit: 20,
  });
  assert.ok(report, 'the command returned nothing (see the output)');
  assert.equal(report.metric, 'exact_match_percent');
  assert.equal(Object.keys(report.importance).length, 6, 'micro: 2 heads × 1 layer × 3 kinds');
  assert.equal(report.byImportance.length, 7);
  assert.equal(report.byImportance[6]!.metric, 0, 'nothing is exact with every head gone');
  // Saved in the run folder and shown as a rendered preview (reports.test.ts checks no Untitled is left).
  const saved = fs.readFileSync(path.join(reverse, `heads-report-step-${report.step}.md`), 'utf8');
  assert.ok(saved.startsWith('# Heads of reverse-micro'), 'the report is saved');
  // An untrained micro model scores no more than may be lost, and the report says so instead.
  const untrained = report.byImportance[0]!.metric <= report.tolerance;
  assert.match(
    saved,
    untrained
      ? new RegExp(
          `\\*\\*Step ${report.step}: with every head the model scores .* Train further before pruning\\.\\*\\*`,
        )
      : new RegExp(`\\*\\*${report.prunable.byImportance} of 6 heads can go`),
  );
  await screenshot('head-importance', await activateExtension());
}, 90_000);

test('a blank panel (its page never says ready) is replaced and shows its data again', async () => {
  const api = await activateExtension();
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: reverse });
  const before = slots.dashboard.replaced;
  slots.dashboard.current!.panel.reveal();
  await until('the dashboard shown', () => slots.dashboard.current?.panel.visible === true, 10_000);
  await blankPage(slots, 'dashboard');
  await until('the dashboard replaced', () => slots.dashboard.replaced === before + 1, 30_000);
  const d = await drawn('dashboard');
  assert.equal(d.run, 'reverse-micro');
  assert.equal(d.frames, 35, 'every logged step is back on the new page');
  await screenshot('dashboard-recovered', api);
  assert.equal(api.viewer.selection?.runDir, reverse);

  // A blank inspector comes back showing the head it showed, not an empty one.
  const shown = { kind: 'cross', layer: 0, head: 1 } as const;
  api.panels.openHeadInspector(shown);
  await until('the inspector ready', () => slots.head.current?.isReady === true, 30_000);
  const headsBefore = slots.head.replaced;
  await blankPage(slots, 'head');
  await until('the inspector replaced', () => slots.head.replaced === headsBefore + 1, 30_000);
  assert.deepEqual((await drawn('head')).head, shown);
}, 90_000);
