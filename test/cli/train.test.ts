/**
 * The train command as a process: killed at arbitrary moments it leaves a run that resumes, with
 * every checkpoint readable; Ctrl-C (SIGINT) stops it after a consistent checkpoint.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');
const metricsLines = (run: string): number =>
  existsSync(join(run, 'metrics.jsonl'))
    ? readFileSync(join(run, 'metrics.jsonl'), 'utf8').split('\n').filter(Boolean).length
    : 0;

function startTrain(args: string[]) {
  const child = spawn(process.execPath, [bin, 'train', '--backend', 'wasm', ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

async function until(cond: () => boolean, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every step-N checkpoint reads whole. A temp file may stay after a SIGKILL mid-write (nothing can
 *  remove it then); with `settled`, after a run that resumed and finished, none may be left. */
function checkpointsAreWhole(run: string, settled = false): number[] {
  const files = readdirSync(join(run, 'checkpoints'));
  if (settled)
    assert.deepEqual(
      files.filter((f) => f.includes('.tmp')),
      [],
      'resuming removes what a killed write left',
    );
  const steps: number[] = [];
  for (const f of files.filter((n) => /^step-\d+\.safetensors$/.test(n))) {
    readSafetensors(join(run, 'checkpoints', f)); // throws on a torn file
    steps.push(Number(/\d+/.exec(f)![0]));
  }
  return steps.sort((a, b) => a - b);
}

test('killing training at arbitrary moments leaves a run that resumes to the end', async () => {
  const dir = scratch();
  const run = join(dir, 'run');
  const config = microConfig(dir, { steps: 40, checkpoint_every: 3, eval_every: 7 });
  let proc = startTrain(['--task', 'copy', '--config', config, '--out', run]);
  // Kill at a few different points: early (before and after the first checkpoint) and late.
  for (const afterLines of [2, 4, 11, 23]) {
    await until(() => metricsLines(run) >= afterLines);
    proc.child.kill('SIGKILL');
    const killed = await proc.done;
    assert.equal(killed.signal, 'SIGKILL');
    checkpointsAreWhole(run);
    proc = startTrain(['--out', run, '--resume']);
  }
  const r = await proc.done;
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.step, 40);
  const steps = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).step);
  assert.deepEqual(
    steps,
    Array.from({ length: 40 }, (_, i) => i + 1),
    'every step logged exactly once after the resumes',
  );
  assert.ok(checkpointsAreWhole(run, true).includes(40));
});

test('Ctrl-C stops training after a consistent checkpoint at the current step', async () => {
  const dir = scratch();
  const run = join(dir, 'run');
  const p = startTrain([
    '--task',
    'copy',
    '--config',
    microConfig(dir, { steps: 100000, checkpoint_every: 1000 }),
    '--out',
    run,
  ]);
  await until(() => metricsLines(run) >= 5);
  p.child.kill('SIGINT');
  const r = await p.done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /stopping after this step, with a checkpoint/);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.stopped, true);
  assert.equal(summary.step, metricsLines(run));
  assert.deepEqual(checkpointsAreWhole(run, true), [summary.step]);
  assert.ok(existsSync(join(run, 'checkpoints', `step-${summary.step}.optim.safetensors`)));
});

test('train reports data errors by file and line, and exits non-zero', () => {
  const dir = scratch();
  const data = join(dir, 'data');
  spawnSync('mkdir', ['-p', data]);
  require('node:fs').writeFileSync(join(data, 'train.en'), 'one\ntwo\nthree\n');
  require('node:fs').writeFileSync(join(data, 'train.de'), 'eins\nzwei\n');
  const r = spawnSync(
    process.execPath,
    [bin, 'train', '--data', data, '--out', join(dir, 'run'), '--backend', 'wasm'],
    { encoding: 'utf8', cwd: REPO },
  );
  assert.equal(r.status, 1);
  // The first line train.de lacks is line 3 of train.en: the message names it and both counts.
  const en = join(data, 'train.en');
  const de = join(data, 'train.de');
  assert.equal(r.stderr, `attention-debugger: ${en}:3: unequal line counts: ${en} has 3 lines, ${de} has 2\n`);
});

test('train --break-on prints the check as it fires, stops with a checkpoint and exits 3', () => {
  const dir = scratch();
  const config = microConfig(dir, { steps: 300, warmup: 4, lr_factor: 100, snapshot_every: 5, telemetry_pairs: 8 });
  const out = join(dir, 'hot');
  const r = spawnSync(
    process.execPath,
    [
      bin,
      'train',
      '--task',
      'reverse',
      '--config',
      config,
      '--out',
      out,
      '--break-on',
      'entropy_collapse',
      '--backend',
      'wasm',
    ],
    { encoding: 'utf8', cwd: REPO },
  );
  assert.equal(r.status, 3, r.stderr.slice(-2000));
  assert.match(r.stderr, /breakpoint: step \d+ · entropy_collapse · (encoder_self|decoder_self|cross):\d+\.\d+/);
  const status = JSON.parse(readFileSync(join(out, 'status.json'), 'utf8')) as { state: string; step: number };
  assert.equal(status.state, 'paused');
  assert.ok(existsSync(join(out, 'checkpoints', `step-${status.step}.safetensors`)), 'a checkpoint at that step');
});
