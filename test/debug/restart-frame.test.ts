/**
 * Restart Frame (issue 31, item 4) through DebugClient: on a run paused at step 10, it forks the run
 * there with the launch's head edits into `<run>-fork-10`, trains the fork's first step, stops
 * (reason `restart`) and debugs the fork from then on: the views show the fork's own metrics.jsonl,
 * the fork's config.json records its parent, step and edits, Continue trains the fork to the end,
 * and the parent's folder is not changed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { initializedClient, launchToFirstStop } from './client';
import { folderHashes, rowAt } from '../runFiles';
import { microConfig, scratch } from '../train/helpers';

test('Restart Frame forks the paused run with the launch’s head edits and debugs the fork', async () => {
  const dir = scratch('ad-restart-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 20, telemetry_every: 5, checkpoint_every: 100, snapshot_every: 0 });
  const { dc, capabilities } = await initializedClient();
  assert.equal(capabilities.supportsRestartFrame, true);
  const fork = { maskHeads: ['cross:0.1'] };
  const args = { runDir, config, task: 'reverse', steps: 20, backend: 'wasm', fork };
  assert.equal((await launchToFirstStop(dc, [{ name: 'step 10' }], args)).body.description, 'step 10');
  const parent = folderHashes(runDir);

  const restarted = dc.waitForEvent('stopped');
  await dc.restartFrameRequest({ frameId: 1 });
  const stop = (await restarted) as DebugProtocol.StoppedEvent;
  assert.equal(stop.body.reason, 'restart');
  assert.equal(stop.body.description, 'step 11 of run-fork-10, forked from step 10');
  const forkDir = `${runDir}-fork-10`;
  const written = JSON.parse(readFileSync(join(forkDir, 'config.json'), 'utf8'));
  assert.equal(written.fork.parent, runDir);
  assert.equal(written.fork.step, 10);
  assert.deepEqual(written.fork.changes.mask_heads, ['cross:0.1']);
  const threads = (await dc.threadsRequest()).body.threads;
  assert.deepEqual(
    threads.map((t) => t.name),
    [basename(forkDir)],
  );
  const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0]!;
  assert.equal(frame.name, 'step 11');
  const scope = (await dc.scopesRequest({ frameId: frame.id })).body.scopes.find((s) => s.name === 'Step')!;
  const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  const loss = Number(vars.find((v) => v.name === 'loss')!.value);
  assert.equal(loss, rowAt<{ step: number; loss: number }>(join(forkDir, 'metrics.jsonl'), 11).loss);

  const ended = dc.waitForEvent('terminated');
  await dc.continueRequest({ threadId: 1 });
  await ended;
  assert.equal(rowAt<{ step: number }>(join(forkDir, 'metrics.jsonl'), 20).step, 20, 'the fork trained to the end');
  assert.deepEqual(folderHashes(runDir), parent, "the parent's folder is unchanged");
});
