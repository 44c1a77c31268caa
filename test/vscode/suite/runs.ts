/**
 * Micro runs for the integration tests: a config file (d_model 16, 1+1 layers: seconds a run),
 * a poll helper, and Train-and-wait through the real command.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttentionDebuggerApi } from '../../../src/extension/extension';
import type { CellRef } from '../../../src/protocol/drawnReport';
import type { PanelKind } from '../../../src/protocol/webview';
import { type DrawnMsg, requestDrawn } from './drawn';
import { MICRO_MODEL, MICRO_TRAINING } from '../../train/helpers';
import { waitFor } from './harness';

/**
 * Writes a micro config of `steps` steps into `dir` (snapshots every 5 steps, checkpoints every 10
 * and validation every 10 by default).
 */
export function microConfig(
  dir: string,
  steps: number,
  checkpointEvery = 10,
  evalEvery = MICRO_TRAINING.eval_every,
): string {
  const file = path.join(dir, `micro-${steps}-${checkpointEvery}-${evalEvery}.json`);
  const training = { ...MICRO_TRAINING, steps, checkpoint_every: checkpointEvery, eval_every: evalEvery };
  fs.writeFileSync(file, JSON.stringify({ ...MICRO_MODEL, training }));
  return file;
}

/** Polls `cond` every 50 ms; rejects after `ms`. */
export async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Trains a micro run of a task through the Train command and waits until it completes. */
export async function trainAndWait(
  api: AttentionDebuggerApi,
  runDir: string,
  task: string,
  config: string,
): Promise<void> {
  const ended = waitFor(api.training.onDidEnd, (e) => e.runDir === runDir, 120_000, `the end of ${runDir}`);
  await vscode.commands.executeCommand('attentionDebugger.train', { data: { kind: 'task', task }, config, runDir });
  assert.equal((await ended).reason, 'completed');
}

/** Snapshot files of a run on disk. */
export const snapshotFiles = (run: string): number =>
  fs.readdirSync(path.join(run, 'snapshots')).filter((f) => /^step-\d+\.safetensors$/.test(f)).length;

/**
 * What a panel's page drew, as it reports it (fails the test when it cannot say). `slots` are the
 * extension's own (api.panels.slots): this bundle has its own copy of the panels module.
 */
export async function drawnIn(
  slots: AttentionDebuggerApi['panels']['slots'],
  kind: PanelKind,
  cells: CellRef[] = [],
): Promise<DrawnMsg> {
  const panel = slots[kind].current;
  assert.ok(panel, `the ${kind} panel is open`);
  // Panels share two columns (issue 26 item 14): one behind another's tab draws nothing until shown,
  // as for a person, who clicks its tab.
  if (!panel.panel.visible) {
    panel.panel.reveal(undefined, true);
    await until(`the ${kind} panel shown`, () => panel.panel.visible, 10_000);
  }
  // A page hidden behind a tab is unloaded; shown again (here, or by the command a test ran), it
  // loads and says ready anew.
  await until(`the ${kind} page ready`, () => panel.isReady, 30_000);
  // 30 s: a page that does not say ready in 10 s is opened anew (panels/base.ts), which the default
  // 15 s can cut short on a loaded 2-CPU machine.
  const d = await requestDrawn(panel, cells, 30_000);
  assert.ok(typeof d !== 'string', typeof d === 'string' ? d : '');
  return d as DrawnMsg;
}

/** Turns the open panel's page into one that never starts (no script): what a user saw as a blank panel. */
export async function blankPage(slots: AttentionDebuggerApi['panels']['slots'], kind: PanelKind): Promise<void> {
  const panel = slots[kind].current!;
  const internals = panel as unknown as { ready: boolean; watchReady(): void };
  panel.panel.webview.html = '<!DOCTYPE html><html><body></body></html>';
  // A 'ready' the old page sent just before (the answer to a ping) lands first; it would mark the
  // blank page ready, and its clock would never run out.
  await new Promise((r) => setTimeout(r, 2000));
  internals.ready = false;
  internals.watchReady();
}
