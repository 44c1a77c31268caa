/**
 * The Global Q/K view (issue 32 item 3) in a real VS Code, on a reverse run made here (20 steps,
 * checkpoints at 10 and 20): Show Global Q/K View opens cross:0.1 at the newest step, its page
 * draws the engine's points under a header saying run and step; the slider's message (as the page
 * posts it) moves it to step 10 on the same basis; a point's click (its message) opens that pair at
 * step 10 in the attention view, whose header then says that step and that pair.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { screenshot } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-global-'));
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const runDir = path.join(tmp, 'runs', 'reverse-micro');

test('the global view of a head: drawn, moved by the slider, and a click opens that pair at that step', async () => {
  const api = await activateExtension();
  const slots = api.panels.slots;
  await trainAndWait(api, runDir, 'reverse', microConfig(tmp, 20));
  await vscode.commands.executeCommand('attentionDebugger.showGlobalView', {
    runDir,
    kind: 'cross',
    layer: 0,
    head: 1,
  });
  const panel = () =>
    slots.global.current as unknown as {
      shownView: {
        step: number;
        basisStep: number;
        points: { x: number[] };
        pairs: { src: number[]; srcTokens: string[]; tgtTokens: string[] }[];
      } | null;
    };
  await until('the view of step 20', () => panel()?.shownView?.step === 20, 120_000);
  const at20 = panel().shownView!;
  assert.equal(at20.basisStep, 20);
  // Its page draws every point: on a loaded two-core machine it may be opened anew before it says ready.
  await until('the global page ready', () => slots.global.current?.isReady === true, 120_000);
  let drawn = await drawnIn(slots, 'global');
  assert.equal(drawn.step, 20);
  assert.equal(drawn.run, 'reverse-micro');
  assert.ok(drawn.marks.includes(`points ${at20.points.x.length}`), drawn.marks.join(' | '));
  await screenshot('global-view', api);

  // The slider (its message): step 10, on step 20's basis.
  slots.global.current!.receive({ type: 'globalStep', v: 3, step: 10 });
  await until('the view of step 10', () => panel().shownView?.step === 10, 120_000);
  assert.equal(panel().shownView!.basisStep, 20, 'the slider keeps the basis');
  const end = Date.now() + 30_000;
  while ((drawn = await drawnIn(slots, 'global')).step !== 10) {
    assert.ok(Date.now() < end, `the page still says step ${drawn.step}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // A point of sentence 3 clicked (its message): the attention view shows pair 3 at step 10.
  const pair = panel().shownView!.pairs[3]!;
  slots.global.current!.receive({ type: 'openPair', v: 3, sentence: 3, step: 10 });
  await until('the attention view', () => slots.attention.current?.isReady === true, 30_000);
  // The header names the pair by its words (its source tokens, EOS left out), not its ids, and its
  // target too: the attention form's boxes take them, and Show then shows the same pair.
  const input = pair.srcTokens.slice(0, -1).join(' ');
  const target = pair.tgtTokens.slice(1).join(' ');
  await until(
    'pair 3 at step 10',
    () =>
      api.panels.store.header?.step === 10 &&
      api.panels.store.header?.input === input &&
      api.panels.store.header?.target === target,
    60_000,
  );
  const shown = await drawnIn(slots, 'attention');
  assert.equal(shown.step, 10);
  assert.equal(shown.input, input, 'the page names the pair as the header does, EOS left out');
  assert.equal(api.panels.store.attention?.source.step, 10, 'the attention is step 10 checkpoint’s');
  assert.deepEqual(api.panels.store.attention?.srcTokens.length, pair.src.length, 'the attention is of that pair');
  await screenshot('global-view-opened-pair', api);
}, 300_000);
