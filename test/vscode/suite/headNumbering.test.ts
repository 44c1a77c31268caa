/**
 * Heads numbered one way (issue 26 item 5), in a real VS Code with the real engine: Ablate Heads…
 * offers each head by its name, layers and heads counted from 0 (`cross:1.0`, as the CLI takes it
 * and run folders store it); picking "cross layer 1, heads 0–3" ablates exactly those four and the
 * result names them so; the head inspector and the attention view's large card then call the first
 * of them by the same name. A micro run of 1 + 2 layers × 4 heads keeps this to seconds.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AblationScore } from '../../../src/protocol/ablation';
import { MICRO_MODEL, MICRO_TRAINING } from '../../train/helpers';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, trainAndWait, until } from './runs';
import { inDarkTheme, screenshot } from './screenshot';
import { answer } from './ui';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-numbered-'));
const run = path.join(tmp, 'runs', 'numbered');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** The heads picked, written out as the decision names them: cross-attention, layer 1, heads 0–3. */
const PICKED = ['cross:1.0', 'cross:1.1', 'cross:1.2', 'cross:1.3'];

test('issue 26: Ablate Heads… offers heads from 0 by name; cross:1.0–1.3 picked are the heads ablated, and every view names cross:1.0 alike', async () => {
  const api = await activateExtension();
  const config = path.join(tmp, 'numbered.json');
  const training = { ...MICRO_TRAINING, steps: 10, checkpoint_every: 10 };
  fs.writeFileSync(config, JSON.stringify({ ...MICRO_MODEL, decoder_layers: 2, heads: 4, training }));
  await trainAndWait(api, run, 'reverse', config);

  const ui = answer((a) =>
    a.text === 'Ablate which heads of numbered?' ? PICKED : a.text === 'Ablate 4 heads: how?' ? 'zero' : undefined,
  );
  let score: AblationScore | undefined;
  try {
    score = await vscode.commands.executeCommand<AblationScore>('attentionDebugger.ablateHeads', {
      runDir: run,
      limit: 20,
    });
  } finally {
    ui.restore();
  }
  const picker = ui.asked.find((a) => a.text === 'Ablate which heads of numbered?');
  assert.ok(picker, `asked: ${ui.asked.map((a) => a.text).join(' | ')}`);
  const cross = picker.items.filter((l) => l.startsWith('cross'));
  assert.deepEqual(
    cross,
    ['cross:0.0', 'cross:0.1', 'cross:0.2', 'cross:0.3', 'cross:1.0', 'cross:1.1', 'cross:1.2', 'cross:1.3'],
    'cross-attention: layers 0–1, heads 0–3',
  );
  assert.equal(picker.items.length, 4 + 8 + 8, 'encoder self 1 × 4, decoder self and cross 2 × 4 each');
  assert.equal(picker.descriptions[picker.items.indexOf('cross:1.0')], 'cross layer 1, head 0 (from 0)');
  assert.ok(score, 'Ablate Heads returned nothing (see the output)');
  assert.deepEqual(score.ablation, { heads: PICKED, mode: 'zero' }, 'exactly the heads picked');
  const told = ui.asked.find((a) => a.fn === 'showInformationMessage')?.text ?? '';
  assert.match(told, / with cross:1\.0, cross:1\.1, cross:1\.2, cross:1\.3 zero-ablated · numbered, step 10,/);

  // The head inspector and the attention view's large card name the first head picked the same way.
  await inDarkTheme(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await vscode.commands.executeCommand('attentionDebugger.decode', { runDir: run, text: '4 5 6 7' });
    api.panels.openAttention();
    api.panels.host.request('attention', { type: 'openHead', v: 3, kind: 'cross', layer: 1, head: 0 });
    api.panels.refresh();
    await until('the attention page', () => api.panels.slots.attention.current?.isReady === true, 60_000);
    let grid = await drawnIn(api.panels.slots, 'attention');
    for (let i = 0; i < 50 && !grid.marks.some((m) => m.startsWith('title ')); i++)
      grid = await drawnIn(api.panels.slots, 'attention');
    const gridTitle = grid.marks.find((m) => m.startsWith('title '));
    assert.equal(gridTitle, 'title cross:1.0 · Encoder–decoder (cross) attention', 'the large card');

    const inspected = await vscode.commands.executeCommand<{ head: object }>('attentionDebugger.inspectHead', {
      runDir: run,
      kind: 'cross',
      layer: 1,
      head: 0,
    });
    assert.deepEqual(inspected?.head, { kind: 'cross', layer: 1, head: 0 });
    const inspector = api.panels.slots.head.current;
    assert.equal(inspector?.panel.title, 'Head cross:1.0', "the inspector's tab");
    await until('the inspector', () => api.panels.slots.head.current?.isReady === true, 60_000);
    let head = await drawnIn(api.panels.slots, 'head');
    for (let i = 0; i < 50 && !head.marks.length; i++) head = await drawnIn(api.panels.slots, 'head');
    assert.deepEqual(head.marks, ['title cross:1.0'], "the inspector's title");
    // The attention view wide enough for its grid and large card side by side, the inspector beside it.
    api.panels.openAttention();
    for (let i = 0; i < 8; i++) await vscode.commands.executeCommand('workbench.action.increaseViewWidth');
    await screenshot('heads-numbered-once', api);
  });
}, 180_000);
