/**
 * `train --config big --backend webgpu` at big's default batch (50,000 tokens) is refused up front
 * (issue 28 item 2), before the model is made and within seconds, with the step's estimate, where
 * the GPU's size came from and the largest batch_tokens and --accumulate that fit: against a
 * 16 GiB GPU (--gpu-memory 16) by the estimate, and on lavapipe, whose buffers may be bound 128 MiB
 * at most, by its largest buffer even against 80 GiB; the refusal offers the per-parameter Adam's
 * smaller footprint. A --gpu-memory that is not a size is a usage error.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gpuBufferLimits } from '../../src/engine/backend/webgpu/memorySize';
import { configFromPreset } from '../../src/engine/model/config';
import { WEBGPU_COUNTS } from '../../src/engine/run/gpuMemory';
import { trainingMemory } from '../../src/engine/run/memory';
import { useWebgpu } from '../engine/kernelHelpers';
import { REPO } from '../helpers';
import { scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');

function train(out: string, ...args: string[]) {
  const started = Date.now();
  const r = spawnSync(
    process.execPath,
    [bin, 'train', '--backend', 'webgpu', '--task', 'copy', '--config', 'big', '--out', out, ...args],
    { cwd: REPO, encoding: 'utf8', env: { ...process.env, ATTENTION_DEBUGGER_GPU_MEMORY: '' } },
  );
  return { code: r.status, stderr: r.stderr, seconds: (Date.now() - started) / 1000 };
}

test('big on webgpu at its default batch is refused before its model is made', async (t) => {
  if (!(await useWebgpu(t))) return;
  const dir = scratch('ad-gpu-memory-');

  await t.test('a 16 GiB GPU: the estimate, its source, the largest batch and the --accumulate that fit', () => {
    const out = join(dir, 'sixteen');
    const r = train(out, '--gpu-memory', '16');
    assert.equal(r.code, 1, r.stderr);
    // 6 + 6 layers of d_model 1,024 and d_ff 4,096, the copy task's 11 tokens: 176.4 M parameters.
    const m = /preset big: 176\.4 M parameters with batch_tokens 50000 need about ([\d.]+) GiB to train/.exec(r.stderr);
    assert.ok(m, r.stderr);
    assert.ok(Number(m[1]) > 16, r.stderr);
    assert.match(
      r.stderr,
      /more than the GPU's memory according to --gpu-memory \(ATTENTION_DEBUGGER_GPU_MEMORY\) \(16\.0 GiB\)/,
    );
    const largest = Number(/the largest batch_tokens that fits is (\d+)/.exec(r.stderr)?.[1]);
    const split = Number(/split each batch with --accumulate (\d+)/.exec(r.stderr)?.[1]);
    const big = configFromPreset('big', { src_vocab: 11, tgt_vocab: 11 });
    const bytes = (tokens: number, n = 1) => trainingMemory(big, tokens, n, WEBGPU_COUNTS).bytes;
    assert.ok(bytes(largest) <= 16 * 2 ** 30 && bytes(largest + 1) > 16 * 2 ** 30, r.stderr);
    assert.ok(bytes(50000, split) <= 16 * 2 ** 30 && bytes(50000, 1) > 16 * 2 ** 30, r.stderr);
    // The flat Adam (webgpu's default) holds 12 copies of the parameters, the per-parameter one 8:
    // 4 × 176.4 M × 4 bytes = 2.63 GiB less, which the refusal offers.
    assert.match(
      r.stderr,
      /; ATTENTION_DEBUGGER_ADAM=per-parameter holds 4 fewer copies of the parameters \(2\.6 GiB\)/,
    );
    assert.equal(existsSync(out), false, 'a refused run leaves no folder');
    assert.ok(r.seconds < 60, `refused after ${r.seconds} s`);
  });

  const limits = gpuBufferLimits()!;
  await t.test('80 GiB on lavapipe: the FFN layer of 25,000 tokens passes what one buffer may hold', (s) => {
    if (limits.maxStorageBufferBindingSize >= 25000 * 4096 * 4) return s.skip('this adapter binds larger buffers');
    const out = join(dir, 'eighty');
    const r = train(out, '--gpu-memory', '80');
    assert.equal(r.code, 1, r.stderr);
    // [25,000, 4,096] float32: 0.4 GiB, past 128 MiB; 8,192 rows fit, 16,384 batch tokens, 4 micro-batches.
    assert.match(
      r.stderr,
      /the FFN's hidden layer \[B·T, d_ff\] takes 0\.4 GiB, more than one GPU buffer may hold \(the adapter's maxStorageBufferBindingSize, 0\.1 GiB\)/,
    );
    if (limits.maxStorageBufferBindingSize === 2 ** 27)
      assert.match(
        r.stderr,
        /the largest batch_tokens that fits is 16384, or keep it and split each batch with --accumulate 4/,
      );
    assert.equal(existsSync(out), false);
  });

  await t.test('--gpu-memory that is not a size', () => {
    const r = train(join(dir, 'bad'), '--gpu-memory', 'lots');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--gpu-memory: expected a positive number of GiB, got "lots"/);
  });
});
