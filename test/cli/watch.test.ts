/**
 * `train --watch` (issue 31's watchpoints) as a user runs it: a condition that holds pauses the run
 * at the first telemetry row where it does, with a checkpoint and exit code 3, and says which
 * condition and heads; one that names no head of the model is refused before a folder is made.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');
const train = (args: string[]) =>
  spawnSync(process.execPath, [bin, 'train', '--backend', 'wasm', '--task', 'reverse', ...args], {
    cwd: REPO,
    encoding: 'utf8',
  });

test('a watch pauses at the first telemetry row where it holds, with a checkpoint', () => {
  const dir = scratch();
  const out = join(dir, 'run');
  // Telemetry at steps 5, 10, 15, …: the condition first holds at 10 (a softmax's largest weight is
  // above 0 always, so only the step decides); it folds the heads with max, so it names none.
  const watch = 'step >= 8 && max(cross:*.*.confidence) > 0';
  const config = microConfig(dir, { steps: 40, telemetry_every: 5, checkpoint_every: 100 });
  const r = train(['--config', config, '--out', out, '--watch', watch]);
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /breakpoint: step 10 · watch: watch "step >= 8 && max\(cross:\*\.\*\.confidence\) > 0" holds/);
  const events = readFileSync(join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(events, [{ step: 10, check: 'watch', message: `watch "${watch}" holds`, severity: 'breakpoint' }]);
  assert.ok(existsSync(join(out, 'checkpoints', 'step-10.safetensors')));
  assert.equal(JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')).state, 'paused');
});

test('a head pattern reports the heads it holds for; the first is the event head', () => {
  const dir = scratch();
  const out = join(dir, 'run');
  // Every head's largest weight is at least 1/keys > 0: both cross heads of the micro model hold.
  const config = microConfig(dir, { steps: 20, telemetry_every: 5, checkpoint_every: 100 });
  const r = train(['--config', config, '--out', out, '--watch', 'cross:0.*.confidence > 0']);
  assert.equal(r.status, 3, r.stderr);
  const [event] = readFileSync(join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(event.step, 5);
  assert.equal(event.head, 'cross:0.0');
  assert.equal(event.message, 'watch "cross:0.*.confidence > 0" holds for cross:0.0, cross:0.1');
});

test('a watch naming no head of the model is refused before anything is written', () => {
  const dir = scratch();
  const out = join(dir, 'run');
  const config = microConfig(dir, { steps: 20 });
  const r = train(['--config', config, '--out', out, '--watch', 'step > 1; cross:1.0.entropy < 1']);
  assert.equal(r.status, 1);
  assert.match(
    r.stderr,
    /training\.watch\[1\]: watch "cross:1\.0\.entropy < 1": no head cross:1\.0 in this model \(heads count from 0\)/,
  );
  assert.equal(existsSync(out), false);
  const empty = train(['--config', config, '--out', out, '--watch', 'step > 1;']);
  assert.equal(empty.status, 2);
  assert.match(empty.stderr, /--watch "step > 1;": an empty condition/);
});
