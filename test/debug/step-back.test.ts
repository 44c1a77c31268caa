/**
 * Step Back and Reverse Continue in the debug adapter (issue 31, item 4) through the Debug Adapter
 * Protocol (DebugClient), on the micro model's reverse task with telemetry every step: the step
 * shown after stepping back is the one before, with the loss and head telemetry the run folder's own
 * metrics.jsonl and telemetry.jsonl logged for it (an independent source: the replay's figures
 * equal them bit for bit, so their decimal strings match); Reverse Continue lands on the latest
 * earlier step where a `step N` or watch breakpoint held, else the first step; Step Over, Step
 * Into and Continue go forward through replayed steps to the live one; and none of it changes a
 * byte of the run folder.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';
import { folderHashes, rowAt } from '../runFiles';

const adapter = join(REPO, 'dist', 'debugAdapter.js');
const clients: DebugClient[] = [];
after(async () => {
  for (const dc of clients) await dc.stop().catch(() => undefined);
});

const named = (vs: DebugProtocol.Variable[]) => Object.fromEntries(vs.map((v) => [v.name, v]));

test('step back, reverse continue and forward again show the steps as the run logged them; the run folder is unchanged', async () => {
  const dir = scratch('ad-stepback-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 30, telemetry_every: 1, checkpoint_every: 5, snapshot_every: 0 });
  const dc = new DebugClient(process.execPath, adapter, 'attention-debugger');
  dc.defaultTimeout = 60_000;
  await dc.start();
  clients.push(dc);
  const initialized = dc.waitForEvent('initialized');
  const init = await dc.initializeRequest({ adapterID: 'attention-debugger', pathFormat: 'path' });
  assert.equal(init.body?.supportsStepBack, true);
  await initialized;
  await dc.setFunctionBreakpointsRequest({
    breakpoints: [
      { name: 'cross:0.*.confidence > 0', condition: 'step >= 3 && step <= 3' },
      { name: 'step 7' },
      { name: 'step 12' },
    ],
  });
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  await dc.configurationDoneRequest();

  /** Sends a request and returns the stopped event it leads to. */
  const stop = async (ask: () => Promise<unknown>) => {
    const [event] = await Promise.all([dc.waitForEvent('stopped'), ask()]);
    return (event as DebugProtocol.StoppedEvent).body;
  };
  /** The Step scope and the decoder layer's cross:0.1 head as the Variables view shows them, against the run's logs. */
  const showsLogged = async (step: number) => {
    const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
    assert.equal(frames[0]!.name, `step ${step}`);
    const scopes = (await dc.scopesRequest({ frameId: frames[0]!.id })).body.scopes;
    assert.equal(scopes[2]!.name, `decoder layer 0 (telemetry of step ${step})`);
    const vars = named(
      (await dc.variablesRequest({ variablesReference: scopes[0]!.variablesReference })).body.variables,
    );
    const m = rowAt<{ step: number; loss: number; lr: number; grad_norm: number }>(join(runDir, 'metrics.jsonl'), step);
    assert.deepEqual(
      [vars['step']!.value, vars['loss']!.value, vars['lr']!.value, vars['grad_norm']!.value],
      [String(step), String(m.loss), String(m.lr), String(m.grad_norm)],
      `step ${step}'s metrics`,
    );
    const t = rowAt<{ step: number; heads: string[]; stats: Record<string, (number | null)[]> }>(
      join(runDir, 'telemetry.jsonl'),
      step,
    );
    const decoder = (await dc.variablesRequest({ variablesReference: scopes[2]!.variablesReference })).body.variables;
    const k = t.heads.indexOf('cross:0.1');
    const head = named(
      (
        await dc.variablesRequest({
          variablesReference: decoder.find((v) => v.name === 'cross:0.1')!.variablesReference,
        })
      ).body.variables,
    );
    for (const [stat, xs] of Object.entries(t.stats))
      assert.equal(head[stat]!.value, xs[k] === null ? 'none' : String(xs[k]), `step ${step}'s ${stat}`);
  };

  const args = { runDir, config, task: 'reverse', steps: 30, backend: 'wasm' };
  assert.equal((await stop(() => dc.launchRequest(args as DebugProtocol.LaunchRequestArguments))).reason, 'breakpoint');
  assert.equal((await stop(() => dc.continueRequest({ threadId: 1 }))).description, 'step 7');
  assert.equal((await stop(() => dc.continueRequest({ threadId: 1 }))).description, 'step 12');
  // Paused at 12 (checkpoints at 3, 5, 7, 10 and 12: each pause writes one): the folder as it stands
  for (let i = 0; i < 100 && existsSync(join(runDir, 'writer.lock')); i++) await new Promise((r) => setTimeout(r, 50));
  const files = folderHashes(runDir);

  let at = await stop(() => dc.stepBackRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['step', 'step 11 (replayed from checkpoint 10)']);
  await showsLogged(11);
  at = await stop(() => dc.nextRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['step', 'step 12']);
  await showsLogged(12);
  await stop(() => dc.stepBackRequest({ threadId: 1 }));
  at = await stop(() => dc.stepBackRequest({ threadId: 1 }));
  assert.equal(at.description, 'step 10 (replayed from checkpoint 7)');
  await showsLogged(10);

  at = await stop(() => dc.reverseContinueRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['breakpoint', 'step 7 (replayed from checkpoint 5)']);
  await showsLogged(7);
  at = await stop(() => dc.reverseContinueRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['breakpoint', 'step 3 (replayed from the seeded start, step 0)']);
  await showsLogged(3);
  // No breakpoint and no checkpoint before step 3: back to the first step
  at = await stop(() => dc.reverseContinueRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['step', 'step 1 (replayed from the seeded start, step 0)']);
  await showsLogged(1);

  // Forward again: Continue to the next logged breakpoint, Step Into one telemetry row, Continue to the live step
  at = await stop(() => dc.continueRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['breakpoint', 'step 3 (replayed from the seeded start, step 0)']);
  at = await stop(() => dc.stepInRequest({ threadId: 1 }));
  assert.equal(at.description, 'step 4 (replayed from checkpoint 3)');
  await showsLogged(4);
  assert.equal(
    (await stop(() => dc.continueRequest({ threadId: 1 }))).description,
    'step 7 (replayed from checkpoint 5)',
  );
  at = await stop(() => dc.continueRequest({ threadId: 1 }));
  assert.deepEqual([at.reason, at.description], ['breakpoint', 'step 12']);
  await showsLogged(12);
  assert.deepEqual(folderHashes(runDir), files);

  // And on from the live step: training goes on to the end
  await Promise.all([dc.waitForEvent('terminated'), dc.continueRequest({ threadId: 1 })]);
  assert.equal(rowAt<{ step: number }>(join(runDir, 'metrics.jsonl'), 30).step, 30);
  await dc.disconnectRequest({});
});
