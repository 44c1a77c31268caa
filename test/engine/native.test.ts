/**
 * The native kernels on wasm (backend/wasm/native.ts, nativeOps.ts; native/blas.c, ops.c). OpenBLAS
 * products with every transpose flag and batch broadcast, worked by hand or against the cpu
 * backend; Sum over every block of axes, row gathers and Identity against cpu; a whole training
 * step (fused loss and Adam kernels included) that never reaches wasm's own matMul and whose
 * gradients and clipped Adam update equal PyTorch's (stepFixture.ts); the addon's own argument checks.
 * `npm test` builds the addon (setup installs OpenBLAS), so here it must load.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { initBackend } from '../../src/engine/backend';
import { nativeBlasStatus } from '../../src/engine/backend/wasm/native';
import { ADAM_UPDATE, hasFusedKernel, SMOOTHED_CROSS_ENTROPY } from '../../src/engine/backend/fusedKernels';
import { maxAbsDiff } from '../helpers';
import { checkStepAgainstPytorch, STEP_CASES } from './stepFixture';

// A spy in place of wasm's own kernel: it counts what falls back to XNNPACK.
let xnnpack = 0;
const original = tf.getKernel('BatchMatMul', 'wasm')!;
tf.unregisterKernel('BatchMatMul', 'wasm');
tf.registerKernel({
  ...original,
  kernelFunc: (args) => {
    xnnpack++;
    return original.kernelFunc(args);
  },
});

before(async () => {
  await initBackend('wasm');
});

test('the addon loaded and reports OpenBLAS', () => {
  assert.match(nativeBlasStatus(), /^libopenblas.*OpenBLAS \d+\.\d+/, nativeBlasStatus());
});

test('products with transpose flags give hand-worked numbers without wasm’s kernel', async () => {
  const a = tf.tensor2d([
    [1, 2, 3],
    [4, 5, 6],
  ]); // [2, 3]
  const b = tf.tensor2d([
    [1, 0, 2],
    [0, 1, 1],
  ]); // [2, 3]
  xnnpack = 0;
  // A·Bᵀ = [[1+0+6, 0+2+3], [4+0+12, 0+5+6]]
  assert.deepEqual(await tf.matMul(a, b, false, true).array(), [
    [7, 5],
    [16, 11],
  ]);
  // Aᵀ·B = [[1, 4, 6], [2, 5, 9], [3, 6, 12]]
  assert.deepEqual(await tf.matMul(a, b, true, false).array(), [
    [1, 4, 6],
    [2, 5, 9],
    [3, 6, 12],
  ]);
  // Aᵀ·Bᵀ of A [3, 2] and B [2, 3]: (B·A)ᵀ; B·A = [[1·1+0·3+2·5, 1·2+0·4+2·6], [0+3+5, 0+4+6]] = [[11, 14], [8, 10]]
  const a32 = tf.tensor2d([
    [1, 2],
    [3, 4],
    [5, 6],
  ]);
  assert.deepEqual(await tf.matMul(a32, b, true, true).array(), [
    [11, 8],
    [14, 10],
  ]);
  assert.equal(xnnpack, 0, 'a product fell back to wasm’s kernel');
  tf.dispose([a, b, a32]);
});

test('batched and broadcast products match the cpu backend', async () => {
  const cases: [number[], number[], boolean, boolean][] = [
    [[4, 3, 5], [4, 5, 2], false, false],
    [[2, 3, 4, 5], [2, 3, 2, 5], false, true], // attention's Q·Kᵀ layout
    [[2, 3, 5, 4], [2, 3, 5, 2], true, false],
    [[6, 3, 5], [5, 7], false, false], // one matrix for every batch (broadcast b)
    [[3, 5], [6, 5, 7], false, false], // broadcast a
    [[1, 3, 5], [4, 5, 2], false, false],
    [[2, 1, 3, 5], [1, 4, 5, 2], false, false], // a broadcast tfjs handles itself
  ];
  const values = (shape: number[], seed: number): number[] =>
    Array.from({ length: shape.reduce((x, y) => x * y, 1) }, (_, i) => Math.sin(seed + i * 0.7));
  for (const [sa, sb, ta, tb] of cases) {
    const product = (): number[] => {
      const a = tf.tensor(values(sa, 1), sa);
      const b = tf.tensor(values(sb, 2), sb);
      const c = tf.matMul(a, b, ta, tb);
      const out = [...c.shape, ...c.dataSync()];
      tf.dispose([a, b, c]);
      return out;
    };
    const onWasm = product();
    await initBackend('cpu');
    const onCpu = product();
    await initBackend('wasm');
    assert.ok(maxAbsDiff(onWasm, onCpu) < 1e-5, `${JSON.stringify(sa)}·${JSON.stringify(sb)} (${ta}, ${tb})`);
  }
});

/** Runs fn on wasm and on cpu and returns both results as [shape, ...values]. */
async function onBoth(fn: () => tf.Tensor): Promise<[number[], number[]]> {
  const run = (): number[] => {
    const t = fn();
    const out = [...t.shape, ...t.dataSync()];
    t.dispose();
    return out;
  };
  const wasm = run();
  await initBackend('cpu');
  const cpu = run();
  await initBackend('wasm');
  return [wasm, cpu];
}

test('sums over every block of axes, kept or dropped, match the cpu backend', async () => {
  const x = (): tf.Tensor =>
    tf.tensor(
      Array.from({ length: 2 * 3 * 4 * 5 }, (_, i) => Math.cos(i) * 10),
      [2, 3, 4, 5],
    );
  const cases: [number | number[], boolean][] = [
    [0, false],
    [3, false],
    [-1, true],
    [[0, 1], false],
    [[1, 2], true],
    [[2, 3], false],
    [[0, 1, 2, 3], false],
    [[1, 2, 3], true],
    [[0, 2], false],
  ];
  for (const [axis, keepDims] of cases) {
    const [wasm, cpu] = await onBoth(() => tf.tidy(() => tf.sum(x(), axis, keepDims)));
    assert.ok(maxAbsDiff(wasm, cpu) < 1e-4, `sum over ${JSON.stringify(axis)} keepDims ${keepDims}`);
  }
});

test('row gathers (embedding lookups) and Identity match the cpu backend; a bad id is tfjs’s error', async () => {
  const table = (): tf.Tensor =>
    tf.tensor(
      Array.from({ length: 6 * 4 }, (_, i) => i * 0.5),
      [6, 4],
    );
  const [wasm, cpu] = await onBoth(() =>
    tf.tidy(() =>
      tf.gather(
        table(),
        tf.tensor2d(
          [
            [5, 0, 2],
            [2, 2, 1],
          ],
          undefined,
          'int32',
        ),
      ),
    ),
  );
  assert.deepEqual(wasm, cpu);
  assert.deepEqual(wasm.slice(0, 3 + 4), [2, 3, 4, 10, 10.5, 11, 11.5]); // row 5 of the table holds 0.5 · (20, 21, 22, 23)
  const [w2, c2] = await onBoth(() => tf.tidy(() => tf.gather(table(), tf.tensor1d([1, 3], 'int32'), 1)));
  assert.deepEqual(w2, c2);
  assert.throws(() => tf.tidy(() => tf.gather(table(), tf.tensor1d([6], 'int32'))), /GatherV2|index/i);
  const a = tf.tensor1d([1, 2, 3]);
  const b = tf.clone(a); // Identity: shares a's buffer, which must outlive a's disposal
  a.dispose();
  assert.deepEqual(await b.array(), [1, 2, 3]);
  b.dispose();
});

test('a training step on wasm multiplies only through OpenBLAS; gradients and Adam step equal PyTorch', async () => {
  assert.ok(hasFusedKernel(ADAM_UPDATE) && hasFusedKernel(SMOOTHED_CROSS_ENTROPY), 'the fused kernels are on');
  xnnpack = 0;
  for (const name of STEP_CASES) await checkStepAgainstPytorch(name); // stepFixture.ts: to 1e-4, every parameter
  assert.equal(xnnpack, 0, 'a product of the step fell back to wasm’s kernel');
});

test('the addon refuses arrays shorter than the sizes it is given, naming the argument', () => {
  const file = require('node:path').join(require('../helpers').REPO, 'dist', 'native', 'blas.node') as string;
  const m = { exports: {} as { matmul(...args: unknown[]): void } };
  process.dlopen(m, file);
  const f = new Float32Array(6);
  assert.throws(() => m.exports.matmul(f, f, f, 2, 2, 3, 3, false, false, 9, 0), /shorter than batch/);
  assert.throws(() => m.exports.matmul([1, 2], f, f, 1, 1, 1, 1, false, false, 0, 0), /a must be a Float32Array/);
  assert.throws(() => m.exports.matmul(f, f, f, -1, 1, 1, 1, false, false, 0, 0), /batch must be a non-negative int32/);
  assert.throws(() => m.exports.matmul(f, f), /expected 11 arguments/);
});
