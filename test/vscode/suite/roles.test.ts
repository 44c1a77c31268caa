/**
 * Roles over training in VS Code (issue 32 item 4): a micro reverse run trained through the Train
 * command writes align_err for its cross heads (null for the rest), and the Heads panel, opened on
 * it, draws the drops the rule finds in the run's logged loss, so the metrics reached its page.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TelemetryRow } from '../../../src/protocol/telemetry';
import { lossPhases } from '../../../webview/lib/lossPhases';
import { activateExtension } from './api';
import { test } from './harness';
import { drawnIn, microConfig, trainAndWait, until } from './runs';
import { screenshot } from './screenshot';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-roles-'));
const runDir = path.join(tmp, 'reverse-roles');
process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

test('a reverse run logs align_err and the Heads panel draws the drops of its loss under the roles', async () => {
  const api = await activateExtension();
  // The panels earlier tests left open slow every page's start on 2 CPUs (the whole suite once timed
  // out waiting 30 s for this one's): this test needs none of them.
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await trainAndWait(api, runDir, 'reverse', microConfig(tmp, 60, 30));
  const rows = fs
    .readFileSync(path.join(runDir, 'telemetry.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TelemetryRow);
  assert.ok(rows.length >= 10, `${rows.length} telemetry rows`);
  for (const r of rows)
    assert.deepEqual(
      r.heads.map((h, i) => h.startsWith('cross:') === (typeof r.stats.align_err?.[i] === 'number')),
      r.heads.map(() => true),
      `step ${r.step}: align_err ${JSON.stringify(r.stats.align_err)} for ${r.heads}`,
    );
  // Opened afresh after training, its page has the metrics from its state alone (no live messages).
  api.panels.slots.heads.current?.panel.dispose();
  await until('the Heads panel closed', () => api.panels.slots.heads.current === undefined, 10_000);
  await vscode.commands.executeCommand('attentionDebugger.openHeads');
  await until('the Heads panel', () => api.panels.slots.heads.current?.isReady === true, 60_000);
  const store = api.panels.store;
  await until('every step in the store', () => store.rows.length === 60, 30_000);
  const want = lossPhases(store.rows)
    .filter((p) => p.kind === 'drop')
    .map((p) => `drop@${p.from}-${p.to}`);
  assert.ok(want.length > 0, 'the micro run’s loss has a drop');
  // The page reports its lanes once plotly has drawn them (plotly loads after the page on a busy machine).
  let drawn = await drawnIn(api.panels.slots, 'heads');
  for (let i = 0; i < 60 && !drawn.marks.includes('lanes@6'); i++) {
    await new Promise((r) => setTimeout(r, 500));
    drawn = await drawnIn(api.panels.slots, 'heads');
  }
  assert.ok(drawn.marks.includes('lanes@6'), `one lane per head of the 6: ${drawn.marks}`);
  assert.deepEqual(
    drawn.marks.filter((m) => m.startsWith('drop@')),
    want,
  );
  await screenshot('heads-roles', api);
}, 180_000);
