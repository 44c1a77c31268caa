/**
 * Never another run's data under this run's name (issue 26 items 1, 2, 10, 11), replayed in a real
 * VS Code with the real engine: a refused Decode (blank, empty, too long) and a broken folder or
 * checkpoint leave the selection, the header and the large head card as they were, and say what
 * is wrong, naming the file and what to do; the long-input advice is a length that then decodes.
 * A micro run (d_model 16, 1+1 layers) keeps this to seconds; the tests run in order and share it.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import type { DrawnMsg } from './drawn';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { inDarkTheme, screenshot } from './screenshot';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-labels-'));
const run = path.join(tmp, 'runs', 'reverse-labels');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

let api: AttentionDebuggerApi;
/** What the attention page drew, once its page is ready (a busy machine may take a while to load it). */
async function drawn(): Promise<DrawnMsg> {
  api.panels.openAttention(); // shown: a page behind another tab draws nothing
  await until('the attention page', () => api.panels.slots.attention.current?.isReady === true, 60_000);
  return drawnIn(api.panels.slots, 'attention');
}
/** The large head card's content, as the page reports it: run, step, input and head. */
const detailOf = (d: DrawnMsg): string | undefined => d.marks.find((m) => m.startsWith('detail '));

/** Runs a command while the window's prompts are answered by nobody; returns its result and the errors shown. */
async function withErrors<T>(command: string, arg: unknown): Promise<{ result: T | undefined; errors: string[] }> {
  const ui = answer(() => undefined);
  try {
    const result = await vscode.commands.executeCommand<T>(command, arg);
    return { result, errors: ui.asked.filter((a) => a.fn === 'showErrorMessage').map((a) => a.text) };
  } finally {
    ui.restore();
  }
}

/** Decodes "4 5 6 7" and opens cross-attention layer 1 head 1 large: what the later tests must keep. */
async function decodedAndOpen(): Promise<DrawnMsg> {
  await vscode.commands.executeCommand('attentionDebugger.decode', { runDir: run, text: '4 5 6 7' });
  api.panels.openAttention();
  api.panels.host.request('attention', { type: 'openHead', v: 3, kind: 'cross', layer: 0, head: 0 });
  api.panels.refresh(); // the page gets the selected head with its state and opens it large
  await until('the head opened large', () => api.panels.store.attention?.srcTokens.join(' ') === '4 5 6 7 </s>');
  let d = await drawn();
  for (let i = 0; i < 50 && !detailOf(d); i++) d = await drawn();
  return d;
}

/**
 * The screenshot of item 1 after the fix, in the default dark theme: the attention view alone (its
 * grid and large head card side by side) still showing the run its header names, and the error
 * that refused `broken` as VS Code shows it.
 */
async function showRefusal(broken: string): Promise<void> {
  await inDarkTheme(async () => {
    try {
      for (const kind of ['dashboard', 'head'] as const) api.panels.slots[kind].current?.panel.dispose();
      await vscode.commands.executeCommand('workbench.action.closeSidebar');
      await vscode.commands.executeCommand('workbench.action.joinAllGroups');
      api.panels.openAttention();
      await vscode.commands.executeCommand('notifications.clearAll');
      await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: broken }); // the real error, shown
      assert.ok(detailOf(await drawn()), 'the head card is drawn for the screenshot');
      await screenshot('attention-broken-folder-refused', api, { keepNotifications: true });
    } finally {
      await vscode.commands.executeCommand('notifications.clearAll');
    }
  });
}

test('issue 26: a blank or empty Decode says so and changes nothing: the header and the large head card stay', async () => {
  api = await activateExtension();
  await trainAndWait(api, run, 'reverse', microConfig(tmp, 20));
  await vscode.commands.executeCommand('attentionDebugger.openRun', { runDir: run });
  const before = await decodedAndOpen();
  assert.equal(before.run, 'reverse-labels');
  assert.equal(before.input, '4 5 6 7', 'the page names the input as the header does');
  assert.match(detailOf(before) ?? '', /^detail reverse-labels step 20 “4 5 6 7” cross:0\.0$/);
  for (const text of ['   ', '']) {
    const { result, errors } = await withErrors('attentionDebugger.decode', { runDir: run, text });
    assert.equal(result, undefined);
    assert.deepEqual(api.viewer.selection?.input, { kind: 'text', src: '4 5 6 7' }, 'the selection is unchanged');
    assert.equal(api.viewer.header().input, '4 5 6 7', 'the header still names the decoded sentence');
    assert.equal(errors.length, 1, `Decode of ${JSON.stringify(text)} says why it does nothing: ${errors.join(' | ')}`);
    assert.match(errors[0]!, /the source sentence is empty: type a sentence/);
    const after = await drawn();
    assert.equal(after.run, 'reverse-labels');
    assert.equal(after.input, '4 5 6 7');
    assert.equal(detailOf(after), detailOf(before), 'the large head card still shows what the header names');
  }
}, 120_000);

test('issue 26: Open Run on a folder whose model.safetensors is not safetensors names the file, and changes nothing', async () => {
  const broken = path.join(tmp, 'not-safetensors');
  fs.mkdirSync(broken);
  fs.copyFileSync(path.join(run, 'config.json'), path.join(broken, 'config.json'));
  fs.writeFileSync(path.join(broken, 'model.safetensors'), 'this is a text file, not a checkpoint\n');
  const before = await drawn();
  const { result, errors } = await withErrors('attentionDebugger.openRun', { runDir: broken });
  assert.equal(result, undefined, 'the folder was not opened');
  assert.equal(errors.length, 1, 'one error says why');
  assert.match(errors[0]!, /model\.safetensors: header length \d+ runs past the end of the file \(38 bytes\)/);
  assert.match(errors[0]!, /replace model\.safetensors with the model your trainer saved/);
  assert.equal(api.viewer.selection?.runDir, run, 'the selection is still the run shown');
  const after = await drawn();
  assert.equal(after.run, 'reverse-labels', 'the header still names the run whose attention is shown');
  assert.equal(detailOf(after), detailOf(before));
  await showRefusal(broken);
}, 90_000);

test('issue 26: a truncated checkpoint is named on Open Run and on its click, with what to do', async () => {
  const copy = path.join(tmp, 'runs', 'truncated');
  fs.cpSync(run, copy, { recursive: true });
  const newest = path.join(copy, 'checkpoints', 'step-20.safetensors');
  fs.truncateSync(newest, Math.floor(fs.statSync(newest).size / 2));
  const opened = await withErrors('attentionDebugger.openRun', { runDir: copy });
  assert.equal(opened.result, undefined);
  assert.equal(opened.errors.length, 1);
  assert.match(opened.errors[0]!, /checkpoints\/step-20\.safetensors/);
  assert.match(opened.errors[0]!, /move checkpoints\/step-20\.safetensors out of the folder .* step 10/);
  const clicked = await withErrors('attentionDebugger.showCheckpoint', { runDir: copy, step: 20 });
  assert.equal(clicked.errors.length, 1);
  assert.match(clicked.errors[0]!, /checkpoints\/step-20\.safetensors: .*pick another checkpoint \(steps 10\)/);
  assert.equal(api.viewer.selection?.runDir, run, 'neither changed the selection');
  // The whole checkpoint of step 10 still opens, from its click.
  const ok = await withErrors('attentionDebugger.showCheckpoint', { runDir: copy, step: 10 });
  assert.deepEqual(ok.errors, []);
  assert.equal(api.viewer.selection?.runDir, copy);
}, 60_000);

test('issue 26: the advice for a long Decode is a length that then decodes', async () => {
  const long = Array.from({ length: 5000 }, (_, i) => String(4 + (i % 5))).join(' ');
  const refused = await withErrors('attentionDebugger.decode', { runDir: run, text: long });
  assert.equal(refused.result, undefined);
  assert.equal(refused.errors.length, 1);
  const n = Number(/shorten (?:it|the input) to (?:about |at most )?(\d+) tokens/.exec(refused.errors[0]!)?.[1]);
  assert.ok(n > 0, `the error says how long an input may be: ${refused.errors[0]}`);
  const fits = Array.from({ length: n }, (_, i) => String(4 + (i % 5))).join(' ');
  const decoded = await withErrors<{ text: string }>('attentionDebugger.decode', { runDir: run, text: fits });
  assert.deepEqual(decoded.errors, [], `${n} tokens, as advised, decode`);
  assert.ok(decoded.result, 'Decode answered');
}, 120_000);
