/**
 * SUM_OF_SQUARES on webgpu (backend/webgpu/sumOfSquares.ts; Dawn on lavapipe here), the Σ g² of
 * train/step.ts's global gradient norm: it equals a float64 sum of squares of the tensors' values
 * for 1 to 62 tensors of mixed shapes (a scalar, 300000 elements, enough to cap the partials), in
 * one program and the final sum (more than 6 tensors laid end to end by copies first: copies.ts,
 * whose runs within a buffer binding are checked by hand); a NaN, ±Inf or overflowing element anywhere makes it non-finite; it leaves
 * no tensor or buffer behind; and a trainStep on webgpu with it gives cpu's loss and gradient norm
 * in fewer dispatches than without it (by more than one a parameter).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { SUM_OF_SQUARES, sumOfSquares } from '../../src/engine/backend/trainingOps';
import { runsWithin } from '../../src/engine/backend/webgpu/copies';
import { partialCount, registerWebgpuSumOfSquares } from '../../src/engine/backend/webgpu/sumOfSquares';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { trainStep, type StepOptions } from '../../src/engine/train/step';
import { cannotRun, smallConfig, TOY_BATCH } from '../helpers';

/** Makes webgpu active with the kernel registered; false (after cannotRun) when it does not load here. */
async function webgpu(t: TestContext): Promise<boolean> {
  try {
    await initBackend('webgpu');
  } catch (err) {
    cannotRun(t, 'webgpu', (err as Error).message);
    return false;
  }
  assert.ok(tf.getKernel(SUM_OF_SQUARES, 'webgpu'), 'webgpu has SUM_OF_SQUARES');
  return true;
}

/** Values in [−scale, scale) from a small LCG: repeatable, no symmetry. */
function values(n: number, seed: number, scale = 1): Float32Array {
  let x = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return ((x / 2 ** 32) * 2 - 1) * scale;
  });
}

/** Shapes the small tensors cycle through (ranks 1 to 4, sizes 1 to 561). */
const SHAPES = [[7], [3, 5], [2, 3, 4], [512], [33, 17], [1], [1, 1, 9], [16, 16], [2, 2, 2, 5]];
/** The big one: more elements than a workgroup sums in one pass. */
const BIG = [300000];

/**
 * n tensors: the first BIG (or `first`), the last a scalar (when n > 1), the others SHAPES in turn;
 * each of its own scale (10^−2 … 10^2), so that every one shows in the sum.
 */
function tensors(n: number, first = BIG): tf.Tensor[] {
  return Array.from({ length: n }, (_, k) => {
    const shape = k === 0 ? first : k === n - 1 ? [] : SHAPES[k % SHAPES.length]!;
    const size = shape.reduce((a, b) => a * b, 1);
    return tf.tensor(values(size, 17 + k, 10 ** ((k % 5) - 2)), shape, 'float32');
  });
}

/** Σ over xs of Σ x², in float64, from the values read back. */
async function float64SumOfSquares(xs: tf.Tensor[]): Promise<number> {
  let sum = 0;
  for (const x of xs) for (const v of await x.data()) sum += v * v;
  return sum;
}

/** Tensors and backend buffers before and after `f`: none may be left behind. */
async function leakFree<T>(what: string, f: () => Promise<T>): Promise<T> {
  const backend = tf.backend() as tf.KernelBackend & { numDataIds(): number };
  const [tensors, ids] = [tf.memory().numTensors, backend.numDataIds()];
  const out = await f();
  assert.equal(tf.memory().numTensors, tensors, `${what} leaves tensors behind`);
  assert.equal(backend.numDataIds(), ids, `${what} leaves webgpu data behind`);
  return out;
}

/** Runs f, counting the active backend's dispatches (tfjs-backend-webgpu's recordAndSubmit, as bench/gpu/dispatches.mjs). */
async function counted<T>(f: () => T | Promise<T>): Promise<{ dispatches: number; out: T }> {
  const backend = tf.backend() as unknown as Record<string, (...a: unknown[]) => unknown>;
  const original = backend.recordAndSubmit!;
  let dispatches = 0;
  backend.recordAndSubmit = function (this: unknown, ...a: unknown[]) {
    dispatches++;
    return original.apply(this, a);
  };
  try {
    const out = await f();
    return { dispatches, out };
  } finally {
    delete backend.recordAndSubmit; // back to the prototype's
  }
}

/** The kernel's sum of `xs` (a float32 scalar, disposed after) and the dispatches it took. */
async function kernelSum(xs: tf.Tensor[]): Promise<{ sum: number; dispatches: number }> {
  const { dispatches, out: s } = await counted(() => sumOfSquares(xs));
  assert.deepEqual(s.shape, []);
  assert.equal(s.dtype, 'float32');
  const [sum] = await s.data();
  s.dispose();
  return { sum: sum!, dispatches };
}

test('webgpu: SUM_OF_SQUARES equals a float64 Σx² for 1, 5, 6, 7, 13 and 62 tensors, in one program and the sum', async (t) => {
  if (!(await webgpu(t))) return;
  const cases = [
    ...[1, 5, 6, 7, 13, 62].map((n) => ({ n, first: BIG as number[] })),
    { n: 1, first: [] }, // a scalar alone: one partial, no final pass
    { n: 3, first: [3, 5] }, // small: one partial
    { n: 8, first: [2000, 3000] }, // 6·10⁶ elements: the partials capped
  ];
  let worst = 0;
  for (const { n, first } of cases) {
    const xs = tensors(n, first);
    const want = await float64SumOfSquares(xs);
    const total = xs.reduce((a, x) => a + x.size, 0);
    const got = await leakFree(`${n} tensors`, () => kernelSum(xs));
    const what = `${n} tensors, the first [${first.join(', ')}]`;
    worst = Math.max(worst, Math.abs(got.sum - want) / want);
    assert.ok(Math.abs(got.sum - want) <= 1e-6 * want, `${what}: ${got.sum}, float64 ${want}`);
    const finalPass = partialCount(total) > 1 ? 1 : 0;
    assert.equal(got.dispatches, 1 + finalPass, `${what}: dispatches`);
    tf.dispose(xs);
  }
  t.diagnostic(`worst relative error ${worst.toExponential(2)}`);
  assert.equal(partialCount(6e6), 1024, 'the last case reaches the cap');
  // An empty list sums to 0; int32 is refused.
  const zero = sumOfSquares([]);
  assert.equal((await zero.data())[0], 0);
  zero.dispose();
  const ints = tf.tensor1d([1, 2], 'int32');
  assert.throws(() => sumOfSquares([ints]), /float32/);
  ints.dispose();
});

test('runs within a buffer binding: in order, each at most the bound, a larger tensor alone', () => {
  assert.deepEqual(runsWithin([4, 4, 3, 9, 1, 1], 8), [[0, 1], [2], [3], [4, 5]]);
  assert.deepEqual(runsWithin([2, 0, 0, 6], 8), [[0, 1, 2, 3]]);
  assert.deepEqual(runsWithin([], 8), []);
  assert.deepEqual(runsWithin([5, 5], Infinity), [[0, 1]]);
});

test('webgpu: one NaN, ±Inf or overflowing element in any tensor makes SUM_OF_SQUARES non-finite', async (t) => {
  if (!(await webgpu(t))) return;
  const n = 13; // groups of 6, 6 and 1
  const cases = [
    { what: 'NaN in the big tensor’s last element', k: 0, at: -1, value: NaN, want: NaN },
    { what: 'NaN in the scalar (the last group)', k: n - 1, at: 0, value: NaN, want: NaN },
    { what: 'NaN in the middle group', k: 8, at: 3, value: NaN, want: NaN },
    { what: '+Inf in the first group', k: 4, at: 100, value: Infinity, want: Infinity },
    { what: '−Inf in the big tensor’s first element', k: 0, at: 0, value: -Infinity, want: Infinity },
    { what: '−Inf in the last group', k: n - 1, at: 0, value: -Infinity, want: Infinity },
    { what: '1e30 (its square overflows)', k: 7, at: 5, value: 1e30, want: Infinity },
  ];
  for (const c of cases) {
    const xs = tensors(n);
    const x = xs[c.k]!;
    const v = (await x.data()).slice() as Float32Array;
    v[c.at < 0 ? v.length + c.at : c.at] = c.value;
    xs[c.k] = tf.tensor(v, x.shape, 'float32');
    x.dispose();
    const { sum } = await leakFree(c.what, () => kernelSum(xs));
    assert.ok(!Number.isFinite(sum), `${c.what}: ${sum}`);
    assert.ok(Object.is(sum, c.want), `${c.what}: ${sum}, not ${c.want}`);
    tf.dispose(xs);
  }
});

test('webgpu: a trainStep with SUM_OF_SQUARES gives cpu’s loss and gradient norm, in fewer dispatches', async (t) => {
  const config = smallConfig();
  const opts: StepOptions = { lr: 1e-3, labelSmoothing: 0.1, clipNorm: 0.5, seed: 4 };
  /** Two steps of a fresh model: the first compiles the pipelines, the second is counted. */
  const run = async () => {
    const model = new Transformer(config, undefined, 5);
    const adam = new Adam();
    const first = await trainStep(model, adam, TOY_BATCH, opts);
    const { dispatches, out: second } = await counted(() => trainStep(model, adam, TOY_BATCH, opts));
    const parameters = namedVariables(model.params).length;
    model.dispose();
    adam.dispose();
    return { steps: [first, second], dispatches, parameters };
  };
  await initBackend('cpu');
  const want = await run();
  if (!(await webgpu(t))) return;
  const got = await leakFree('two trainSteps', run);
  tf.unregisterKernel(SUM_OF_SQUARES, 'webgpu');
  let without;
  try {
    without = await run();
  } finally {
    registerWebgpuSumOfSquares();
  }
  assert.ok(want.steps[0]!.gradNorm > opts.clipNorm!, 'clipping is active');
  for (const [i, w] of want.steps.entries())
    for (const [name, r] of [
      ['with the kernel', got],
      ['without it', without],
    ] as const) {
      const g = r.steps[i]!;
      assert.ok(g.applied, `step ${i + 1} ${name}: applied`);
      for (const k of ['loss', 'gradNorm'] as const)
        assert.ok(Math.abs(g[k] - w[k]) <= 1e-4 * w[k], `step ${i + 1} ${name}: ${k} ${g[k]}, cpu ${w[k]}`);
    }
  t.diagnostic(
    `dispatches a step (${got.parameters} parameters): ${without.dispatches} without SUM_OF_SQUARES, ${got.dispatches} with it`,
  );
  assert.ok(
    got.dispatches <= without.dispatches - got.parameters,
    `dispatches ${got.dispatches} with the kernel, ${without.dispatches} without, ${got.parameters} parameters`,
  );
});
