/**
 * The wasm defects handled in backend/wasm/wasmFixes.ts. Each test fails without its fix:
 * without the UnsortedSegmentSum kernel, the gradient of gather throws on wasm; without the
 * BatchMatMul wrapper, transposed products (autodiff's matMul gradients among them) reach the
 * XNNPACK kernel with transpose flags, which the spy below records; without the OneHot wrapper a
 * float32 one-hot holds 1.4e-45 where it should hold 1; the Slice override (no readSync copy of the
 * whole input) must take the same elements as a reference slice. A whole training step on this plain wasm
 * path (no native kernels) gives PyTorch's gradients and clipped Adam update (stepFixture.ts).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { initBackend } from '../../src/engine/backend';
import { ADAM_UPDATE, hasFusedKernel } from '../../src/engine/backend/fusedKernels';
import { checkStepAgainstPytorch, STEP_CASES } from './stepFixture';

// These fixes are the path when the OpenBLAS matMul (native-matmul.test.ts) is off or not built.
process.env.ATTENTION_DEBUGGER_NATIVE = '0';

// Put a spy in place of the wasm kernel before the engine wraps it: the spy sees what reaches XNNPACK.
const seen = { plain: 0, transposed: 0 };
const original = tf.getKernel('BatchMatMul', 'wasm')!;
tf.unregisterKernel('BatchMatMul', 'wasm');
tf.registerKernel({
  ...original,
  kernelFunc: (args) => {
    const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
    if (transposeA || transposeB) seen.transposed++;
    else seen.plain++;
    return original.kernelFunc(args);
  },
});

before(async () => {
  await initBackend('wasm');
});

test('the gradient of gather (embedding lookup) works on wasm and sums repeated rows', async () => {
  // d/dE Σ gather(E, [0, 2, 2, 0, 0]) ⊙ W: row 0 collects W rows 0, 3, 4; row 2 collects rows 1, 2; row 1 gets 0.
  const e = tf.zeros([3, 2]);
  const w = tf.tensor2d([
    [1, 2],
    [3, 4],
    [5, 6],
    [7, 8],
    [9, 10],
  ]);
  const ids = tf.tensor1d([0, 2, 2, 0, 0], 'int32');
  const g = tf.grad((x: tf.Tensor) => tf.sum(tf.mul(tf.gather(x, ids), w)))(e);
  assert.deepEqual(await g.array(), [
    [17, 20],
    [0, 0],
    [8, 10],
  ]);
  tf.dispose([e, w, ids, g]);
});

test('a float32 one-hot holds 1 and 0 (and any on/off values), not int bits', async () => {
  const ids = tf.tensor1d([2, 0, -1], 'int32');
  assert.deepEqual(await tf.oneHot(ids, 3, 1, 0, 'float32').array(), [
    [0, 0, 1],
    [1, 0, 0],
    [0, 0, 0],
  ]);
  assert.deepEqual(await tf.oneHot(ids, 3, 0.5, -2, 'float32').array(), [
    [-2, -2, 0.5],
    [0.5, -2, -2],
    [-2, -2, -2],
  ]);
  assert.deepEqual(await tf.oneHot(ids, 3).array(), [
    [0, 0, 1],
    [1, 0, 0],
    [0, 0, 0],
  ]); // int32: wasm's own kernel
  ids.dispose();
});

test('slices read from the heap equal a reference slice: ranks 1–5, contiguous or not, every dtype', async () => {
  // The reference: element by element from the full array.
  const reference = (data: ArrayLike<number>, shape: number[], from: number[], size: number[]): number[] => {
    const strides = shape.map((_, a) => shape.slice(a + 1).reduce((p, q) => p * q, 1));
    const out: number[] = [];
    const walk = (a: number, at: number): void => {
      if (a === shape.length) return void out.push(data[at]!);
      for (let i = 0; i < size[a]!; i++) walk(a + 1, at + (from[a]! + i) * strides[a]!);
    };
    walk(0, 0);
    return out;
  };
  const cases: [number[], number[], number[]][] = [
    [[7], [2], [4]],
    [
      [512, 6],
      [3, 0],
      [1, 6],
    ], // one row: contiguous
    [
      [5, 6],
      [1, 2],
      [3, 3],
    ],
    [
      [3, 4, 5],
      [1, 0, 1],
      [2, 4, 3],
    ],
    [
      [2, 3, 4, 5],
      [0, 1, 2, 1],
      [2, 2, 2, 4],
    ],
    [
      [2, 2, 3, 2, 3],
      [1, 0, 1, 0, 1],
      [1, 2, 2, 2, 2],
    ],
    [
      [4, 3],
      [1, 0],
      [0, 3],
    ], // empty
  ];
  for (const [shape, from, size] of cases)
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      const n = shape.reduce((p, q) => p * q, 1);
      const data = Array.from({ length: n }, (_, i) => (dtype === 'bool' ? i % 3 === 0 : i * 1.5) as number);
      const x = tf.tensor(data, shape, dtype);
      const got = tf.slice(x, from, size);
      assert.deepEqual(got.shape, size, `${dtype} ${shape}: shape`);
      assert.deepEqual([...(await got.data())], reference(await x.data(), shape, from, size), `${dtype} ${shape}`);
      tf.dispose([x, got]);
    }
});

test('transposed matMuls give the right numbers and never reach the kernel with transpose flags', async () => {
  const a = tf.tensor2d([
    [1, 2, 3],
    [4, 5, 6],
  ]); // [2, 3]
  const b = tf.tensor2d([
    [1, 0, 2],
    [0, 1, 1],
  ]); // [2, 3]
  seen.plain = seen.transposed = 0;
  // A·Bᵀ = [[1+0+6, 0+2+3], [4+0+12, 0+5+6]] = [[7, 5], [16, 11]]
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
  assert.equal(seen.transposed, 0);
  assert.equal(seen.plain, 2);
  tf.dispose([a, b]);
});

test('a whole training step on wasm uses only plain matMuls; its gradients and Adam step equal PyTorch', async () => {
  assert.equal(hasFusedKernel(ADAM_UPDATE), false, 'the native kernels are off in this file');
  seen.plain = seen.transposed = 0;
  for (const name of STEP_CASES) await checkStepAgainstPytorch(name); // stepFixture.ts: to 1e-4, every parameter
  assert.equal(seen.transposed, 0, 'transposed matMul reached XNNPACK');
  assert.ok(seen.plain > 10, `expected the step's matMuls to go through the kernel, saw ${seen.plain}`);
});
