/**
 * Issue 32's views in a real VS Code, on a reverse run's attention: the attention page's
 * value-weighted toggle (its message, as the page posts it) makes the panel ask the engine for
 * attention/get with valueWeighted, keep the norms beside the weights and the toggle in its saved
 * state, and the page draw the norms, saying so; the head inspector's score request is answered by
 * heads/scores with each key's parts summing to its score. And the page may compile WebAssembly.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HeadScoresMsg } from '../../../src/protocol/pages/head';
import type { RequestDef } from '../../../src/protocol/rpc';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { screenshot } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-vw-'));
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const runDir = path.join(tmp, 'runs', 'reverse-micro');

test('the value-weighted toggle asks the engine with valueWeighted and the attention view draws the norms', async () => {
  const api = await activateExtension();
  const slots = api.panels.slots;
  await trainAndWait(api, runDir, 'reverse', microConfig(tmp, 20));
  await vscode.commands.executeCommand('attentionDebugger.decode', { runDir, text: '5 6 7' });
  await until('the attention view', () => slots.attention.current?.isReady === true, 30_000);
  const asked: { method: string; params: unknown }[] = [];
  const engine = api.engine;
  const request = engine.request.bind(engine);
  engine.request = <P, R>(def: RequestDef<P, R>, params?: P, token?: vscode.CancellationToken) => {
    asked.push({ method: def.method, params });
    return request(def, params, token);
  };
  try {
    slots.attention.current!.receive({ type: 'showValueWeighted', v: 3, id: 1, on: true });
    await until('the norms beside the weights', () => !!api.panels.store.attention?.maps.every((m) => m.valueWeighted));
    const get = asked.find((a) => a.method === 'attention/get');
    assert.equal((get?.params as { valueWeighted?: boolean } | undefined)?.valueWeighted, true, JSON.stringify(asked));
    assert.equal(slots.attention.current!.persisted().valueWeighted, true, 'the toggle is in the saved state');
    api.panels.refresh(); // what the page gets when shown again: the toggle and the norms
    const end = Date.now() + 30_000;
    let marks: string[] = [];
    while (!marks.some((m) => m.startsWith('measure value-weighted ‖α·vW^O‖ · colour'))) {
      assert.ok(Date.now() < end, `the page never said it draws the norms: ${marks.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 200));
      marks = (await drawnIn(slots, 'attention')).marks;
    }
    await screenshot('attention-value-weighted', api);
    // poolMax.wat (issue 34) runs only where VS Code's webview lets the page's CSP allow it.
    const page = await drawnIn(slots, 'attention');
    assert.equal(page.compilesWasm, true, 'the attention page cannot compile WebAssembly in VS Code');

    // The head inspector's score table: heads/scores for a query row, its parts summing to the score.
    await vscode.commands.executeCommand('attentionDebugger.inspectHead', { runDir, kind: 'cross', layer: 0, head: 1 });
    await until('the head inspector', () => slots.head.current?.isReady === true, 30_000);
    const head = slots.head.current!;
    const replies: HeadScoresMsg[] = [];
    const post = (head as unknown as { post(m: unknown): void }).post.bind(head);
    (head as unknown as { post(m: unknown): void }).post = (m) => {
      if ((m as { type: string }).type === 'headScores') replies.push(m as HeadScoresMsg);
      post(m);
    };
    head.receive({ type: 'requestScores', v: 3, id: 7, kind: 'cross', layer: 0, head: 1, query: 0 });
    await until('the scores', () => replies.length > 0, 30_000);
    const r = replies[0]!;
    assert.equal(r.id, 7);
    assert.ok(r.scores, `heads/scores answered ${r.error}`);
    assert.ok(asked.some((a) => a.method === 'heads/scores'));
    assert.ok(r.scores.embeddingNote, 'cross-attention has no token/position split');
    r.scores.scores.forEach((s, j) => {
      const dims = r.scores!.dimensions[j]!.reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(dims - s) < 1e-5, `key ${j}: the dimensions sum to ${dims}, the score is ${s}`);
    });
  } finally {
    engine.request = request;
    slots.attention.current?.receive({ type: 'showValueWeighted', v: 3, id: 2, on: false });
  }
}, 180_000);
