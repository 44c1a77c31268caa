/**
 * Attach in the debug adapter (issue 31, item 1) through the Debug Adapter Protocol (DebugClient):
 * the adapter follows a run the CLI trains in another process, from its newest logged step. A
 * `step N` breakpoint stops Continue when the writer logs that step; Reverse Continue replays back
 * to where a watch condition held; Step Over and Step Into move along the logged rows; the
 * Variables equal the run's own metrics.jsonl (an independent source). On a run written by PyTorch,
 * Step Back is refused as the UI says: attach only.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { REPO } from '../helpers';
import { rowAt } from '../runFiles';
import { microConfig, scratch } from '../train/helpers';

const adapter = join(REPO, 'dist', 'debugAdapter.js');
const bin = join(REPO, 'bin', 'attention-debugger');
const clients: DebugClient[] = [];
after(async () => {
  for (const dc of clients) await dc.stop().catch(() => undefined);
});

/** A client attached to `runDir` with these function breakpoints; resolves at the entry stop. */
async function attached(runDir: string, breakpoints: DebugProtocol.FunctionBreakpoint[]) {
  const dc = new DebugClient(process.execPath, adapter, 'attention-debugger');
  dc.defaultTimeout = 60_000;
  await dc.start();
  clients.push(dc);
  const initialized = dc.waitForEvent('initialized');
  await dc.initializeRequest({ adapterID: 'attention-debugger', pathFormat: 'path' });
  await initialized;
  await dc.setFunctionBreakpointsRequest({ breakpoints });
  await dc.setExceptionBreakpointsRequest({ filters: [] });
  const entry = dc.waitForEvent('stopped');
  await Promise.all([
    dc.attachRequest({ runDir, backend: 'wasm' } as DebugProtocol.AttachRequestArguments),
    dc.configurationDoneRequest(),
  ]);
  return { dc, entry: (await entry) as DebugProtocol.StoppedEvent };
}

/** Runs `ask` and returns the stop it leads to. */
async function stopAfter(dc: DebugClient, ask: () => Promise<unknown>): Promise<DebugProtocol.StoppedEvent> {
  const stopped = dc.waitForEvent('stopped');
  await ask();
  return (await stopped) as DebugProtocol.StoppedEvent;
}

/** The step and loss the Variables view shows now. */
async function shown(dc: DebugClient): Promise<{ step: number; loss: number }> {
  const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0]!;
  const scope = (await dc.scopesRequest({ frameId: frame.id })).body.scopes.find((s) => s.name === 'Step')!;
  const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  const value = (name: string) => Number(vars.find((v) => v.name === name)!.value);
  return { step: value('step'), loss: value('loss') };
}

test('attach follows a run another process trains: a step breakpoint, reverse continue to a watch, step over and into along the logs', async () => {
  const dir = scratch('ad-attach-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 120, telemetry_every: 5, checkpoint_every: 10, snapshot_every: 0 });
  const writer = spawn(
    process.execPath,
    [bin, 'train', '--backend', 'wasm', '--task', 'reverse', '--config', config, '--out', runDir],
    { cwd: REPO, stdio: 'ignore' },
  );
  const written = new Promise((resolve) => writer.once('exit', resolve));
  try {
    // The run folder exists once its first lines are written: attach then.
    for (let i = 0; i < 600 && !existsSync(join(runDir, 'metrics.jsonl')); i++)
      await new Promise((r) => setTimeout(r, 100));
    const { dc, entry } = await attached(runDir, [
      { name: 'step 100' },
      { name: 'cross:0.*.confidence > 0', condition: 'step >= 12' },
    ]);
    assert.equal(entry.body.reason, 'entry');
    assert.match(entry.body.description ?? '', /^attached at step \d+/);

    // Continue: on along the logs, waiting for the writer, to the first breakpoint past the entry.
    const first = await stopAfter(dc, () => dc.continueRequest({ threadId: 1 }));
    assert.equal(first.body.reason, 'breakpoint');
    await written; // the writer is done: every later row is logged
    const metrics = join(runDir, 'metrics.jsonl');
    // Continue again until the step breakpoint (the watch holds at each telemetry row before it).
    let stop = first;
    while (!/^step 100$/.test(stop.body.description ?? ''))
      stop = await stopAfter(dc, () => dc.continueRequest({ threadId: 1 }));
    assert.deepEqual(await shown(dc), { step: 100, loss: rowAt<{ step: number; loss: number }>(metrics, 100).loss });

    // Reverse Continue: back to the latest earlier step where the watch held (95), replayed.
    const back = await stopAfter(dc, () => dc.reverseContinueRequest({ threadId: 1 }));
    assert.match(back.body.description ?? '', /^step 95 \(replayed from checkpoint 90\)/);
    assert.deepEqual(await shown(dc), { step: 95, loss: rowAt<{ step: number; loss: number }>(metrics, 95).loss });

    // Step Over: the next logged step; Step Into: the next telemetry row.
    await stopAfter(dc, () => dc.nextRequest({ threadId: 1 }));
    assert.deepEqual(await shown(dc), { step: 96, loss: rowAt<{ step: number; loss: number }>(metrics, 96).loss });
    await stopAfter(dc, () => dc.stepInRequest({ threadId: 1 }));
    assert.equal((await shown(dc)).step, 100);
    await dc.disconnectRequest({});
  } finally {
    writer.kill();
  }
});

test('attached to a run PyTorch wrote, Step Back is refused: attach only', async () => {
  const dir = scratch('ad-attach-torch-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 20, telemetry_every: 5, checkpoint_every: 10, snapshot_every: 0 });
  const writer = spawn(
    process.execPath,
    [bin, 'train', '--backend', 'wasm', '--task', 'reverse', '--config', config, '--out', runDir],
    { cwd: REPO, stdio: 'ignore' },
  );
  await new Promise((resolve) => writer.once('exit', resolve));
  const torch = join(dir, 'torch');
  cpSync(runDir, torch, { recursive: true });
  const written = JSON.parse(readFileSync(join(torch, 'config.json'), 'utf8'));
  writeFileSync(join(torch, 'config.json'), JSON.stringify({ ...written, writer: 'pytorch' }));
  const { dc, entry } = await attached(torch, []);
  assert.match(entry.body.description ?? '', /^attached at step 20/);
  const output: string[] = [];
  dc.on('output', (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
  const again = await stopAfter(dc, () => dc.stepBackRequest({ threadId: 1 }));
  assert.ok(
    output.some((line) => line.includes('written by PyTorch: attach only, no step back')),
    output.join(''),
  );
  assert.equal(again.body.description, 'step 20', 'the step shown stays');
  await dc.disconnectRequest({});
});
