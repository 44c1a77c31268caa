/**
 * train/start's and train/resume's `watch` (issue 31) over the real `serve` process: a condition that
 * holds pauses the run as the CLI's --watch does (train/ended `paused`, the watch event, a
 * checkpoint); a condition that cannot be parsed is refused as invalid params naming its index and
 * column, before a folder is made.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { microConfig, scratch } from '../train/helpers';
import { RawEngine } from './rawEngine';

const engine = new RawEngine();
after(() => engine.proc.kill());

const ended = (runDir: string, after = 0) =>
  engine.until('train/ended', () =>
    engine.messages.slice(after).find((m) => m.method === 'train/ended' && m.params?.runDir === runDir),
  );

test('a watch on train/start pauses the run at the first telemetry row where it holds; resume takes new ones', async () => {
  const dir = scratch('ad-serve-watch-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 40, telemetry_every: 5, checkpoint_every: 100 });
  const watch = ['step >= 8 && max(cross:*.*.confidence) > 0'];
  const started = await engine.ask('train/start', { runDir, data: { kind: 'task', task: 'reverse' }, config, watch });
  assert.equal(started.error, undefined);
  const end = (await ended(runDir)).params as {
    reason: string;
    step: number;
    event: { check: string; message: string };
  };
  assert.equal(end.reason, 'paused');
  assert.equal(end.step, 10);
  assert.equal(end.event.check, 'watch');
  assert.equal(end.event.message, `watch "${watch[0]}" holds`);
  assert.ok(existsSync(join(runDir, 'checkpoints', 'step-10.safetensors')));

  const seen = engine.messages.length;
  const resumed = await engine.ask('train/resume', { runDir, watch: ['step >= 23'] });
  assert.equal(resumed.error, undefined);
  const again = (await ended(runDir, seen)).params as { reason: string; step: number };
  assert.deepEqual([again.reason, again.step], ['paused', 25]);
});

test('a watch that does not parse is refused naming its index and column, and nothing is written', async () => {
  const dir = scratch('ad-serve-watch-');
  const runDir = join(dir, 'run');
  const config = microConfig(dir, { steps: 20 });
  const data = { kind: 'task', task: 'reverse' };
  const bad = await engine.request('train/start', { runDir, data, config, watch: ['step > 1', 'cross:0.*.entropy <'] });
  assert.equal(bad.error?.code, -32602);
  assert.equal(
    bad.error?.message,
    'train/start params.watch[1]: watch "cross:0.*.entropy <": expected a number, a metric or a head statistic, found the end',
  );
  const noHead = await engine.request('train/start', { runDir, data, config, watch: ['cross:1.0.entropy < 1'] });
  assert.match(noHead.error!.message, /params\.watch\[0\]: .*no head cross:1\.0 in this model .*column 1/);
  const empty = await engine.request('train/start', { runDir, data, config, watch: [' '] });
  assert.match(empty.error!.message, /params\.watch\[0\] must be a condition of 1 to 1000 characters/);
  assert.equal(existsSync(runDir), false);
});
