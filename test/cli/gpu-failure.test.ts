/**
 * `train --backend webgpu` (Dawn on lavapipe) with a GPU fault planted in step 4
 * (ATTENTION_DEBUGGER_GPU_FAULT, backend/webgpu/errors.ts): an out-of-memory error, a real Dawn
 * validation error during Adam's update, and a really lost device (the device destroyed). Each
 * stops the run with exit code 4 and a message that names the failed step, the model, the batch
 * tokens, the GPU memory asked for and what to do; nothing of step 4 is logged, no checkpoint or
 * snapshot is written past step 2's checkpoint, status.json says failed with the message, and
 * `train --out RUN --resume` then trains the run to its end. The resumed run ends with the weights,
 * Adam's moments and the losses of the run that never failed, to float32 rounding: the failed step
 * moved neither the data position, nor t, nor the dropout seeds (a moved one changes a loss in its
 * second digit). Not bit for bit: two processes on lavapipe were seen to differ in the last bit of a
 * gradient norm; within one process, gpu-errors.test.ts checks the failed step's restore bit for bit.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readSafetensors } from '../../src/engine/checkpoint/safetensors';
import { useWebgpu } from '../engine/kernelHelpers';
import { REPO } from '../helpers';
import { microConfig, scratch } from '../train/helpers';

const bin = join(REPO, 'bin', 'attention-debugger');

function train(args: string[], fault?: string) {
  const env = { ...process.env, ATTENTION_DEBUGGER_GPU_FAULT: fault ?? '' };
  const r = spawnSync(process.execPath, [bin, 'train', '--backend', 'webgpu', ...args], {
    cwd: REPO,
    env,
    encoding: 'utf8',
  });
  return { code: r.status, stderr: r.stderr };
}

const rows = (run: string) =>
  readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, number>);
const files = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);
const tensors = (run: string, name: string) => readSafetensors(join(run, 'checkpoints', name)).tensors;

/** float32 rounding of one step's arithmetic, compounded over a few steps. */
const CLOSE = 1e-5;
const close = (a: number, b: number) => Math.abs(a - b) <= CLOSE * Math.max(1, Math.abs(a), Math.abs(b));

test('a step the GPU fails stops train with exit code 4, keeps nothing of it, and the run resumes', async (t) => {
  if (!(await useWebgpu(t))) return;
  const dir = scratch('ad-gpu-failure-');
  const config = microConfig(dir, { steps: 6, checkpoint_every: 2, snapshot_every: 2, eval_every: 100 });
  const newRun = (out: string, fault?: string) =>
    train(['--task', 'reverse', '--config', config, '--out', join(dir, out)], fault);
  const straight = join(dir, 'straight');
  assert.equal(newRun('straight').code, 0);
  const cases = [
    { kind: 'out-of-memory', fault: 'out-of-memory@step 4', says: /the GPU ran out of memory/ },
    { kind: 'validation', fault: 'validation@step 4 (update)', says: /the GPU refused a command/ },
    { kind: 'device-lost', fault: 'device-lost@step 4', says: /the GPU device was lost/ },
  ];
  for (const c of cases) {
    await t.test(c.kind, () => {
      const run = join(dir, c.kind);
      const failed = newRun(c.kind, c.fault);
      assert.equal(failed.code, 4, failed.stderr);
      const message = failed.stderr.slice(failed.stderr.indexOf('training stopped'));
      assert.match(message, /^training stopped: step 4 \(/);
      assert.match(message, c.says);
      assert.match(message, /config d_model 16, 2 heads, d_ff 32, 1\+1 layers/);
      assert.match(message, /batch_tokens 200 \(one micro-batch a step\)/);
      assert.match(message, /the engine had asked for [\d.]+ MiB of GPU buffers; the adapter is .*llvmpipe/);
      assert.ok(message.includes(`train --out ${run} --resume; it goes on from its checkpoint of step 2`), message);
      if (c.kind === 'device-lost') assert.ok(message.includes(`--resume --backend wasm`), message);
      else assert.ok(message.includes('--accumulate 2') && message.includes('--batch-tokens 100'), message);
      assert.deepEqual(
        rows(run).map((r) => r.step),
        [1, 2, 3],
        'nothing of step 4 logged',
      );
      assert.deepEqual(files(join(run, 'checkpoints')), ['step-2.optim.safetensors', 'step-2.safetensors']);
      assert.ok(!files(join(run, 'snapshots')).some((f) => /0*4\b/.test(f)), 'no snapshot of step 4');
      const status = JSON.parse(readFileSync(join(run, 'status.json'), 'utf8')) as { state: string; message: string };
      assert.equal(status.state, 'failed');
      assert.equal(status.message, message.trimEnd(), "status.json's message is the one train printed");

      const resumed = train(['--out', run, '--resume']);
      assert.equal(resumed.code, 0, resumed.stderr);
      // What a step computed; time and tokens_per_sec differ between any two runs.
      const computed = (r: Record<string, number>) => [r.step, r.lr, r.loss, r.nll, r.grad_norm];
      const [got, want] = [rows(run).map(computed), rows(straight).map(computed)];
      assert.deepEqual(
        got.map((r) => r[0]),
        want.map((r) => r[0]),
        'the steps of the run that never failed',
      );
      got.forEach((r, i) =>
        r.forEach((x, j) =>
          assert.ok(close(x!, want[i]![j]!), `step ${r[0]}: ${x} against ${want[i]![j]} of the run that never failed`),
        ),
      );
      for (const name of ['step-6.safetensors', 'step-6.optim.safetensors']) {
        const [mine, theirs] = [tensors(run, name), tensors(straight, name)];
        assert.deepEqual([...mine.keys()].sort(), [...theirs.keys()].sort(), `${name}: the same tensors`);
        for (const [key, t] of mine) {
          const other = theirs.get(key)!.data;
          // The key bias (rows [d, 2d) of in_proj_bias) shifts every score of a query alike: softmax
          // cancels it, its gradient is rounding noise, and Adam scales that noise to full steps.
          const d = t.data.length / 3;
          const keyBias = (i: number) => key.includes('in_proj_bias') && i >= d && i < 2 * d;
          const worst = t.data.findIndex((x, i) => !keyBias(i) && !close(x, other[i]!));
          assert.equal(worst, -1, `${name} ${key}[${worst}]: ${t.data[worst]} against ${other[worst]}`);
        }
      }
    });
  }
});
