/**
 * The run's steps as a source (src/debug/steps.ts) through DebugClient: the call stack's frames sit
 * on the paused step's line of `<run>.steps`, the adapter serves its text (line N is `step N`), a
 * line breakpoint there is a step breakpoint (what VS Code's gutter and Run to Cursor set) that
 * Continue and Reverse Continue stop at, and a line breakpoint in any other file is refused, saying
 * where breakpoints go.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { initializedClient, launchToFirstStop } from './client';
import { microConfig, scratch } from '../train/helpers';

async function stopAfter(dc: DebugClient, request: Promise<unknown>): Promise<DebugProtocol.StoppedEvent> {
  const [stop] = await Promise.all([dc.waitForEvent('stopped'), request]);
  return stop as DebugProtocol.StoppedEvent;
}

test('frames sit on the step’s line of <run>.steps; a line breakpoint there is a step breakpoint, forward and back', async () => {
  const dir = scratch('ad-steps-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 30, telemetry_every: 5, checkpoint_every: 100, snapshot_every: 0 });
  const { dc } = await initializedClient();
  const args = { runDir, config, task: 'reverse', steps: 30, backend: 'wasm' };
  assert.equal((await launchToFirstStop(dc, [{ name: 'step 10' }], args)).body.description, 'step 10');

  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.deepEqual(
    frames.map((f) => [f.name, f.source?.name, f.line]),
    [
      ['step 10', 'run.steps', 10],
      ['encoder layer 0', 'run.steps', 10],
      ['decoder layer 0', 'run.steps', 10],
    ],
  );
  const source = frames[0]!.source!;
  const text = (await dc.sourceRequest({ source, sourceReference: source.sourceReference! })).body.content;
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 30, 'one line per planned step');
  assert.equal(lines[9], 'step 10');

  // A breakpoint in the gutter of line 14 (Run to Cursor sets the same): Continue pauses after step 14.
  const set = await dc.setBreakpointsRequest({ source, breakpoints: [{ line: 14 }] });
  assert.deepEqual(
    set.body.breakpoints.map((b) => [b.verified, b.line]),
    [[true, 14]],
  );
  const at14 = await stopAfter(dc, dc.continueRequest({ threadId: 1 }));
  assert.equal(at14.body.reason, 'breakpoint');
  assert.equal(at14.body.description, 'step 14');
  assert.deepEqual(at14.body.hitBreakpointIds, [set.body.breakpoints[0]!.id]);
  assert.equal((await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0]!.line, 14);

  // Line 12, behind the run: Reverse Continue stops there, replayed from the checkpoint the pause at 10 wrote.
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  await dc.setBreakpointsRequest({ source, breakpoints: [{ line: 12 }] });
  const at12 = await stopAfter(dc, dc.reverseContinueRequest({ threadId: 1 }));
  assert.equal(at12.body.description, 'step 12 (replayed from checkpoint 10)');
  assert.equal((await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0]!.line, 12);

  // Any other file has no steps: refused, saying where breakpoints go.
  const other = await dc.setBreakpointsRequest({ source: { path: join(dir, 'train.py') }, breakpoints: [{ line: 3 }] });
  assert.equal(other.body.breakpoints[0]!.verified, false);
  assert.match(
    other.body.breakpoints[0]!.message ?? '',
    /no source lines: set breakpoints on the lines of the run’s \.steps source/,
  );
  await dc.disconnectRequest({});
});
