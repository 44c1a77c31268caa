/**
 * Data breakpoints on a head's statistic (issue 31, item 3): the Variables view's *Break on Value
 * Change* on `cross:0.1`'s entropy is a watch condition on it. Its condition compares the
 * statistic; without one it breaks on a move of more than 10% from the value where it was set
 * (hand-worked bounds below). Through DebugClient: the info request names the statistic and
 * refuses a metric; the breakpoint, set while paused, pauses the run at the next telemetry row.
 * Expanding a head's attention map sends the extension the event that opens that head at that step.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { readDataBreakpoint } from '../../src/debug/breakpoints';
import { initializedClient, launchToFirstStop } from './client';
import { microConfig, scratch } from '../train/helpers';

const model = { encoderLayers: 1, decoderLayers: 1, heads: 2 };

test('a data breakpoint is a watch on the statistic: its condition, or a move of more than 10%', () => {
  const at = { dataId: 'cross:0.1.entropy' };
  assert.deepEqual(readDataBreakpoint(1, { ...at, condition: '< 0.2' }, 1.5, model), {
    id: 1,
    watch: 'cross:0.1.entropy < 0.2',
  });
  // 2 ± 0.2
  assert.deepEqual(readDataBreakpoint(2, at, 2, model), {
    id: 2,
    watch: 'cross:0.1.entropy < 1.8 || cross:0.1.entropy > 2.2',
  });
  // −0.5 ± 0.05: the language has no unary minus, so 0 − x
  assert.deepEqual(readDataBreakpoint(3, at, -0.5, model), {
    id: 3,
    watch: 'cross:0.1.entropy < (0 - 0.55) || cross:0.1.entropy > (0 - 0.45)',
  });
  // Any other condition is joined to the move with &&.
  assert.deepEqual(readDataBreakpoint(4, { ...at, condition: 'step > 100' }, 2, model), {
    id: 4,
    watch: '(cross:0.1.entropy < 1.8 || cross:0.1.entropy > 2.2) && (step > 100)',
  });
  const none = readDataBreakpoint(5, at, null, model);
  assert.ok('error' in none && /has no value at this row: give the breakpoint a condition/.test(none.error));
  const wrong = readDataBreakpoint(6, { dataId: 'cross:3.0.entropy', condition: '< 1' }, 1, model);
  assert.ok('error' in wrong && /no head cross:3\.0/.test(wrong.error), JSON.stringify(wrong));
});

test('a head map expanded opens the head; Break on Value Change on a head statistic, set while paused, pauses the run at the next telemetry row', async () => {
  const dir = scratch('ad-data-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 30, telemetry_every: 5, checkpoint_every: 100, snapshot_every: 0 });
  const { dc, capabilities } = await initializedClient();
  assert.equal(capabilities.supportsDataBreakpoints, true);
  const args = { runDir, config, task: 'reverse', steps: 30, backend: 'wasm' };
  assert.equal((await launchToFirstStop(dc, [{ name: 'step 10' }], args)).body.description, 'step 10');

  const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0]!;
  const scopes = (await dc.scopesRequest({ frameId: frame.id })).body.scopes;
  const decoder = scopes.find((s) => s.name.startsWith('decoder layer 0'))!;
  const heads = (await dc.variablesRequest({ variablesReference: decoder.variablesReference })).body.variables;
  const head = heads.find((v) => v.name === 'cross:0.1')!;
  // The head's attention map, expanded, asks the extension to open that head at that step.
  const stats = (await dc.variablesRequest({ variablesReference: head.variablesReference })).body.variables;
  const map = stats.find((v) => v.name === 'attention (probe pair)')!;
  const opened = dc.waitForEvent('attentionDebugger.openHead');
  await dc.variablesRequest({ variablesReference: map.variablesReference });
  assert.deepEqual((await opened).body, { runDir, step: 10, head: 'cross:0.1' });
  const offered = await dc.dataBreakpointInfoRequest({ variablesReference: head.variablesReference, name: 'entropy' });
  assert.equal(offered.body.dataId, 'cross:0.1.entropy');
  const step = scopes.find((s) => s.name === 'Step')!;
  const refused = await dc.dataBreakpointInfoRequest({ variablesReference: step.variablesReference, name: 'loss' });
  assert.equal(refused.body.dataId, null);

  const set = await dc.setDataBreakpointsRequest({ breakpoints: [{ dataId: 'cross:0.1.entropy', condition: '> 0' }] });
  const [bp] = set.body.breakpoints;
  assert.equal(bp!.verified, true);
  const next = dc.waitForEvent('stopped');
  await dc.continueRequest({ threadId: 1 });
  const hit = (await next) as DebugProtocol.StoppedEvent;
  assert.equal(hit.body.reason, 'breakpoint');
  assert.deepEqual(hit.body.hitBreakpointIds, [bp!.id]);
  assert.match(
    hit.body.description ?? '',
    /^step 15 · watch · cross:0\.1: watch "cross:0\.1\.entropy > 0" holds for cross:0\.1/,
  );
  await dc.disconnectRequest({});
});
