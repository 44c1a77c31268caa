/**
 * The debug adapter (dist/debugAdapter.js, src/debug/) through the Debug Adapter Protocol, as VS Code
 * drives it (@vscode/debugadapter-testsupport's DebugClient), on the micro model's reverse task: a
 * watch condition set as a function breakpoint pauses the run (its description naming the
 * condition and heads); the stack, scopes and variables show what the run folder's own
 * metrics.jsonl and telemetry.jsonl hold at that step; Step Over trains one step, Step Into to the
 * next telemetry row, a `step N` breakpoint pauses after step N; Continue runs to the end; a
 * condition that does not parse is an unverified breakpoint with the parser's message.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { headReportFile, type HeadReport } from '../../src/protocol/heads';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';
import { jsonLines, rowAt } from '../runFiles';

const adapter = join(REPO, 'dist', 'debugAdapter.js');
const clients: DebugClient[] = [];
after(async () => {
  for (const dc of clients) await dc.stop().catch(() => undefined);
});

async function client(): Promise<DebugClient> {
  const dc = new DebugClient(process.execPath, adapter, 'attention-debugger');
  dc.defaultTimeout = 60_000;
  await dc.start();
  clients.push(dc);
  return dc;
}

interface Telemetry {
  step: number;
  heads: string[];
  stats: Record<string, (number | null)[]>;
}
interface Metrics {
  step: number;
  loss: number;
  lr: number;
  grad_norm: number;
  tokens_per_sec: number;
}

/** Launch arguments (the adapter's own, launch.ts) as DAP's type. */
const launchArgs = (a: Record<string, unknown>) => a as DebugProtocol.LaunchRequestArguments;
const stopped = async (dc: DebugClient) => (await dc.waitForEvent('stopped')) as DebugProtocol.StoppedEvent;
const topFrame = async (dc: DebugClient) => (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0]!.name;
const named = (vs: DebugProtocol.Variable[]) => Object.fromEntries(vs.map((v) => [v.name, v]));

test('a watch breakpoint pauses the run; the views show the run folder at that step; step over, step into, a step breakpoint, continue to the end', async () => {
  const dir = scratch('ad-debug-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 30, telemetry_every: 5, checkpoint_every: 100, snapshot_every: 0 });
  const dc = await client();
  // The event follows the reply, maybe in the same chunk: listen before asking
  const initialized = dc.waitForEvent('initialized');
  await dc.initializeRequest({
    adapterID: 'attention-debugger',
    pathFormat: 'path',
    linesStartAt1: true,
    columnsStartAt1: true,
  });
  await initialized;
  const set = await dc.setFunctionBreakpointsRequest({
    breakpoints: [{ name: 'cross:0.*.confidence > 0', condition: 'step >= 8' }, { name: 'cross:0.*.entropy <' }],
  });
  const [watch, bad] = set.body.breakpoints;
  assert.equal(watch!.verified, true);
  assert.equal(bad!.verified, false);
  assert.equal(
    bad!.message,
    'watch "cross:0.*.entropy <": expected a number, a metric or a head statistic, found the end',
  );
  await dc.setExceptionBreakpointsRequest({ filters: ['nonfinite'] });
  await dc.configurationDoneRequest();
  const launched = dc.launchRequest(launchArgs({ runDir, config, task: 'reverse', steps: 30, backend: 'wasm' }));
  const [first] = await Promise.all([stopped(dc), launched]);

  // Telemetry at 5, 10, …: the condition first holds at 10, for both cross heads.
  assert.equal(first.body.reason, 'breakpoint');
  assert.deepEqual(first.body.hitBreakpointIds, [watch!.id]);
  assert.equal(
    first.body.description,
    'step 10 · watch · cross:0.0: watch "(cross:0.*.confidence > 0) && (step >= 8)" holds for cross:0.0, cross:0.1',
  );
  const threads = await dc.threadsRequest();
  assert.deepEqual(threads.body.threads, [{ id: 1, name: 'run' }]);
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  assert.deepEqual(
    frames.map((f) => f.name),
    ['step 10', 'encoder layer 0', 'decoder layer 0'],
  );

  // A heads report saved beside the run at this step (as Head Importance saves one): its I_h shows.
  const report: HeadReport = {
    ...{ run: 'run', checkpoint: 'checkpoints/step-10', step: 10, metric: 'exact_match_percent' },
    ...{ sentences: 4, tolerance: 1, importance: { 'cross:0.0': 0.5, 'cross:0.1': 0.25 }, byImportance: [] },
    ...{ random: { seed: 1, points: [] }, prunable: { byImportance: 0, random: 0 } },
  };
  writeFileSync(join(runDir, headReportFile(10, 'json')), JSON.stringify(report));
  const metrics = rowAt<Metrics>(join(runDir, 'metrics.jsonl'), 10);
  const telemetry = rowAt<Telemetry>(join(runDir, 'telemetry.jsonl'), 10);
  const scopes = (await dc.scopesRequest({ frameId: frames[0]!.id })).body.scopes;
  assert.deepEqual(
    scopes.map((s) => s.name),
    ['Step', 'encoder layer 0 (telemetry of step 10)', 'decoder layer 0 (telemetry of step 10)'],
  );
  const step = named((await dc.variablesRequest({ variablesReference: scopes[0]!.variablesReference })).body.variables);
  assert.equal(step['step']!.value, '10');
  assert.equal(Number(step['loss']!.value), metrics.loss);
  assert.equal(Number(step['lr']!.value), metrics.lr);
  assert.equal(Number(step['grad_norm']!.value), metrics.grad_norm);
  assert.equal(Number(step['tokens_per_sec']!.value), metrics.tokens_per_sec);
  const decoder = (await dc.variablesRequest({ variablesReference: scopes[2]!.variablesReference })).body.variables;
  assert.deepEqual(
    decoder.map((v) => v.name),
    ['decoder_self:0.0', 'decoder_self:0.1', 'cross:0.0', 'cross:0.1'],
  );
  const k = telemetry.heads.indexOf('cross:0.1');
  const head = named(
    (await dc.variablesRequest({ variablesReference: decoder[3]!.variablesReference })).body.variables,
  );
  // Every statistic the row holds, the report's importance, then the head's attention map
  // (data-breakpoints.test.ts opens it). The statistics include each projection's norms.
  assert.deepEqual(Object.keys(head), [...Object.keys(telemetry.stats), 'importance', 'attention (probe pair)']);
  for (const p of ['wq', 'wk', 'wv', 'wo'])
    for (const n of ['norm', 'grad_norm']) assert.ok(`${p}_${n}` in head, p + n);
  assert.equal(head['importance']!.value, '0.25 (heads report of step 10)');
  for (const [stat, xs] of Object.entries(telemetry.stats))
    assert.equal(head[stat]!.value, xs[k] === null ? 'none' : String(xs[k]), stat);
  // A layer's own frame shows its layer first
  const encoderScopes = (await dc.scopesRequest({ frameId: frames[1]!.id })).body.scopes;
  assert.deepEqual(
    encoderScopes.map((s) => s.name),
    ['encoder layer 0 (telemetry of step 10)', 'Step'],
  );

  // The Debug Console over the newest telemetry row
  const ask = async (expression: string) => (await dc.evaluateRequest({ expression, context: 'repl' })).body.result;
  assert.equal(await ask('cross:0.1.entropy'), `cross:0.1 ${telemetry.stats['entropy']![k]}`);
  assert.equal(
    await ask('max(cross:0.*.entropy)'),
    String(Math.max(...(telemetry.stats['entropy']!.slice(4) as number[]))),
  );
  assert.equal(await ask('cross:0.*.confidence > 0'), 'true (cross:0.0, cross:0.1)');
  assert.equal(await ask('loss'), String(metrics.loss));
  await assert.rejects(dc.evaluateRequest({ expression: 'cross:5.0.entropy < 1' }), /no head cross:5\.0/);

  // Step Over: one training step (the watch taken away first, or it would hold at the next row)
  await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
  const [over] = await Promise.all([stopped(dc), dc.nextRequest({ threadId: 1 })]);
  assert.equal(over.body.reason, 'step');
  assert.equal(await topFrame(dc), 'step 11');
  const vars = async () => {
    const s = (await dc.scopesRequest({ frameId: 1 })).body.scopes[0]!;
    return named((await dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables);
  };
  assert.equal(Number((await vars())['loss']!.value), rowAt<Metrics>(join(runDir, 'metrics.jsonl'), 11).loss);

  // Step Into: on to the next telemetry row
  const [into] = await Promise.all([stopped(dc), dc.stepInRequest({ threadId: 1 })]);
  assert.equal(into.body.reason, 'step');
  assert.equal(await topFrame(dc), 'step 15');

  // A step breakpoint: Continue pauses after that step
  const stepBp = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'step 18' }] });
  assert.equal(stepBp.body.breakpoints[0]!.verified, true);
  const [at18] = await Promise.all([stopped(dc), dc.continueRequest({ threadId: 1 })]);
  assert.equal(at18.body.reason, 'breakpoint');
  assert.equal(at18.body.description, 'step 18');
  assert.deepEqual(at18.body.hitBreakpointIds, [stepBp.body.breakpoints[0]!.id]);
  assert.equal(Number((await vars())['loss']!.value), rowAt<Metrics>(join(runDir, 'metrics.jsonl'), 18).loss);

  // Continue to the end: the session terminates; the run trained every step once
  await Promise.all([dc.waitForEvent('terminated'), dc.continueRequest({ threadId: 1 })]);
  assert.deepEqual(
    [...new Set(jsonLines<Metrics>(join(runDir, 'metrics.jsonl')).map((r) => r.step))],
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  await dc.disconnectRequest({});
});

test('stop on entry, pause while training, and a launch without its step budget refused', async () => {
  const dir = scratch('ad-debug-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 100000, checkpoint_every: 100000, snapshot_every: 0 });
  const dc = await client();
  const refused = await client();
  await refused.initializeRequest({ adapterID: 'attention-debugger', pathFormat: 'path' });
  await assert.rejects(
    refused.launchRequest(launchArgs({ runDir, config, task: 'reverse' })),
    /"steps" must be a whole number ≥ 1/,
  );

  await dc.initializeRequest({ adapterID: 'attention-debugger', pathFormat: 'path' });
  await dc.configurationDoneRequest();
  const [entry] = await Promise.all([
    stopped(dc),
    dc.launchRequest(
      launchArgs({ runDir, config, task: 'reverse', steps: 100000, backend: 'wasm', stopOnEntry: true }),
    ),
  ]);
  assert.equal(entry.body.reason, 'entry');
  assert.equal(await topFrame(dc), 'step 0');
  await dc.continueRequest({ threadId: 1 });
  await new Promise((r) => setTimeout(r, 1500));
  const [paused] = await Promise.all([stopped(dc), dc.pauseRequest({ threadId: 1 })]);
  assert.equal(paused.body.reason, 'pause');
  const step = Number((await topFrame(dc)).replace('step ', ''));
  assert.ok(step > 0);
  // Pause checkpoints (train/stop): the run can go on from there
  assert.ok(readFileSync(join(runDir, 'checkpoints', `step-${step}.safetensors`)).length > 0);
  await dc.disconnectRequest({});
});

test('the bundled adapter holds neither vscode nor tfjs', () => {
  const bundle = readFileSync(adapter, 'utf8');
  assert.doesNotMatch(bundle, /require\("vscode"\)/);
  assert.doesNotMatch(bundle, /@tensorflow|tfjs-core/);
});
