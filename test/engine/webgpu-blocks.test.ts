/**
 * The block kernels on webgpu (backend/webgpu/dropout.ts, linear.ts, layerNorm.ts; Dawn on lavapipe
 * here, so the shapes are small and odd): each against the unfused tfjs ops on the same backend,
 * outputs and every gradient, to 1e-5 relative to each gradient's size — LINEAR with and without
 * ReLU, on rank-2 and rank-3 x, with blocks of rows of a stacked [3d, d] W; LAYER_NORM;
 * DROPOUT_ADD_NORM without and with dropout. Dropout masks equal the native wasm kernel's
 * (native/norm.c) for the same seed, rate and shape, bit for bit: DROPOUT's outputs and gradients,
 * and DROPOUT_ADD_NORM's mask read back from its gradients (dr = dx ⊙ m). No kernel leaks a tensor
 * or a buffer. And a whole model on webgpu's kernels (attention's too) trains as on the unfused ops.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { fusedLinear, LINEAR } from '../../src/engine/backend/inferenceOps';
import {
  blockDropout,
  blockLayerNorm,
  DROPOUT,
  DROPOUT_ADD_NORM,
  dropoutAddNorm,
  hasTrainingKernels,
  LAYER_NORM,
  LINEAR_GRAD,
  NORM_GRAD,
} from '../../src/engine/backend/trainingOps';
import { LAYER_NORM_EPS, layerNorm, linear } from '../../src/engine/model/layers';
import { maxAbsDiff } from '../helpers';
import { filled, lcgValues, leakFree, onBackend, useWebgpu, weighted, wholeModelBothWays } from './kernelHelpers';

const BLOCK_KERNELS = [LINEAR, LINEAR_GRAD, DROPOUT, DROPOUT_ADD_NORM, LAYER_NORM, NORM_GRAD];

/** Σ y ⊙ u, u fixed per shape: a scalar whose gradient sends a non-uniform upstream gradient into y. */

/** f's output and its gradients with respect to xs, as plain arrays. */
async function outputAndGrads(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[]) {
  const y = tf.tidy(() => f(...xs));
  const grads = tf.grads((...args: tf.Tensor[]) => weighted(f(...args)))(xs);
  const out = { y: await y.array(), grads: await Promise.all(grads.map((g) => g.array())) };
  tf.dispose([y, ...grads]);
  return out;
}

const zerosLike = (a: unknown): unknown => (Array.isArray(a) ? a.map(zerosLike) : 0);
/** max |a − b| / max(1, max |b|): relative to b's size (a bias or gain gradient sums over every row). */
const relDiff = (a: unknown, b: unknown): number => maxAbsDiff(a, b) / Math.max(1, maxAbsDiff(b, zerosLike(b)));

/** The kernel's f and the unfused ops' agree on outputs and every gradient, to `tol`. */
async function sameAsUnfused(
  what: string,
  fused: (...xs: tf.Tensor[]) => tf.Tensor,
  plain: (...xs: tf.Tensor[]) => tf.Tensor,
  xs: tf.Tensor[],
  tol = 1e-5,
) {
  const [a, b] = [await outputAndGrads(fused, xs), await outputAndGrads(plain, xs)];
  assert.ok(relDiff(a.y, b.y) <= tol, `${what}: output differs by ${relDiff(a.y, b.y)}`);
  a.grads.forEach((g, i) => {
    const diff = relDiff(g, b.grads[i]);
    assert.ok(diff <= tol, `${what}: gradient ${i}: max |kernel − unfused| / max(1, max |unfused|) = ${diff}`);
  });
}

/** The unfused linear map: slice the rows, then layers.ts linear, then ReLU. */
function plainLinear(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor, relu: boolean, rows: [number, number]): tf.Tensor {
  const [ws, bs] = rows[1] > 0 ? [tf.slice(w, [rows[0], 0], [rows[1], -1]), tf.slice(b, [rows[0]], [rows[1]])] : [w, b];
  const y = linear(x, ws, bs);
  return relu ? tf.relu(y) : y;
}

test('webgpu LINEAR: rank-1, 2 and 3 x, ReLU on and off, blocks of rows of a stacked [3d, d] W — outputs and gradients equal matMul + add (+ relu)', async (t) => {
  if (!(await useWebgpu(t, BLOCK_KERNELS))) return;
  const d = 12;
  const w = filled([3 * d, d], 2, 0.5); // [3d, d]: W^Q, W^K, W^V stacked
  const b = filled([3 * d], 3);
  const cases: [number[], boolean, [number, number]][] = [
    [[7, d], false, [0, 0]], // rank 2, the whole [3d, d]
    [[2, 3, d], true, [0, 0]], // rank 3, ReLU
    [[7, d], true, [d, d]], // W^K, ReLU
    [[2, 3, d], false, [2 * d, d]], // W^V
    [[1, d], false, [0, d]], // one row (a decoding step), W^Q
    [[d], true, [0, 0]], // rank 1: one vector
    [[2, 150, d], true, [d, d]], // db over 300 rows, summed in one pass
    [[2, 1100, d], false, [2 * d, d]], // db over 2,200 rows: partial sums of 128-row chunks, summed again
  ];
  for (const [shape, relu, rows] of cases) {
    const x = filled(shape, shape.length + rows[0], 2);
    const what = `x [${shape}], relu ${relu}, rows ${rows}`;
    await leakFree(what, () =>
      sameAsUnfused(
        what,
        (xi, wi, bi) => fusedLinear(xi!, wi!, bi!, relu, rows),
        (xi, wi, bi) => plainLinear(xi!, wi!, bi!, relu, rows),
        [x, w, b],
      ),
    );
    x.dispose();
  }
  assert.throws(() => fusedLinear(filled([2, d], 1), w, b, false, [2 * d + 1, d]), /rows 25…36 of a \[36,12\] weight/);
  tf.dispose([w, b]);
});

test('webgpu LAYER_NORM: LayerNorm(x) equals layers.ts layerNorm, gradients included, rank 2 and 3', async (t) => {
  if (!(await useWebgpu(t, BLOCK_KERNELS))) return;
  const [gain, bias] = [filled([12], 23), filled([12], 24)];
  for (const shape of [
    [7, 12],
    [2, 3, 12],
  ]) {
    const x = filled(shape, 22, 3);
    await leakFree(`LayerNorm [${shape}]`, () =>
      sameAsUnfused(
        `LayerNorm [${shape}]`,
        (xi, g, bi) => blockLayerNorm(xi!, g!, bi!, LAYER_NORM_EPS),
        (xi, g, bi) => layerNorm({ gain: g!, bias: bi! }, xi!),
        [x, gain, bias],
      ),
    );
    x.dispose();
  }
  // A row wider than the workgroup (64 threads): each thread sums several columns.
  const [x, g, bi] = [filled([3, 150], 25, 2), filled([150], 26), filled([150], 27)];
  await sameAsUnfused(
    'LayerNorm [3, 150]',
    (xi, gi, bj) => blockLayerNorm(xi!, gi!, bj!, LAYER_NORM_EPS),
    (xi, gi, bj) => layerNorm({ gain: gi!, bias: bj! }, xi!),
    [x, g, bi],
  );
  tf.dispose([gain, bias, x, g, bi]);
  // More rows than a dispatch's 65,535 workgroups in x: tfjs folds them into x and y (a row is the global index / WG).
  const [xl, gl, bl] = [filled([70001, 3], 28, 2), filled([3], 29), filled([3], 30)];
  await sameAsUnfused(
    'LayerNorm [70001, 3]',
    (xi, gi, bj) => blockLayerNorm(xi!, gi!, bj!, LAYER_NORM_EPS),
    (xi, gi, bj) => layerNorm({ gain: gi!, bias: bj! }, xi!),
    [xl, gl, bl],
  );
  tf.dispose([xl, gl, bl]);
});

test('webgpu DROPOUT_ADD_NORM without dropout equals layerNorm(x + r), gradients included', async (t) => {
  if (!(await useWebgpu(t, BLOCK_KERNELS))) return;
  const [x, r] = [filled([2, 7, 12], 4), filled([2, 7, 12], 5, 2)];
  const [gain, bias] = [filled([12], 6), filled([12], 7)];
  await leakFree('LayerNorm(x + r)', () =>
    sameAsUnfused(
      'LayerNorm(x + r)',
      (xi, ri, g, bi) => dropoutAddNorm(xi!, ri!, g!, bi!, LAYER_NORM_EPS, 0, 1),
      (xi, ri, g, bi) => layerNorm({ gain: g!, bias: bi! }, tf.add(xi!, ri!)),
      [x, r, gain, bias],
    ),
  );
  tf.dispose([x, r, gain, bias]);
});

/** The values of tensors `make` returns (made in a tidy scope), read without blocking, then disposed. */
async function read(make: () => tf.Tensor[]): Promise<Float32Array[]> {
  const ts = tf.tidy(make);
  const out = (await Promise.all(ts.map((x) => x.data()))) as Float32Array[];
  tf.dispose(ts);
  return out;
}

test('webgpu DROPOUT draws native/norm.c’s masks bit for bit: outputs and gradients equal wasm’s, for several seeds, rates and shapes', async (t) => {
  if (!(await useWebgpu(t, BLOCK_KERNELS))) return;
  const cases: [number[], number, number][] = [
    [[300, 7], 0.25, 9],
    [[7, 13, 3], 0.5, 10],
    [[1000], 0.1, 2 ** 40 + 3], // a seed past 32 bits: the key's 64-bit arithmetic (BigInt here)
    [[5, 11], 0.9, -17], // norm.c takes |seed|
  ];
  for (const [shape, rate, seed] of cases) {
    const n = shape.reduce((a, b) => a * b, 1);
    const [xs, us] = [lcgValues(n, 20), lcgValues(n, 21)];
    // y = dropout(x), and the gradient of Σ dropout(x) ⊙ u: u ⊙ m
    const run = () =>
      read(() => {
        const [x, u] = [tf.tensor(xs, shape), tf.tensor(us, shape)];
        const y = blockDropout(x, rate, seed);
        const dx = tf.grad((xi: tf.Tensor) => tf.sum(tf.mul(blockDropout(xi, rate, seed), u)))(x);
        return [y, dx];
      });
    const [wasmY, wasmDx] = await onBackend('wasm', run);
    const [y, dx] = await run();
    const what = `[${shape}], rate ${rate}, seed ${seed}`;
    assert.deepEqual(y, wasmY, `${what}: dropout(x) differs from the native kernel's`);
    assert.deepEqual(dx, wasmDx, `${what}: its gradient differs from the native kernel's`);
    const dropped = y!.filter((v) => v === 0).length / n;
    assert.ok(Math.abs(dropped - rate) <= 4 * Math.sqrt((rate * (1 - rate)) / n), `${what}: ${dropped} dropped`);
    // The unfused ops under that mask: x ⊙ m.
    const scale = Math.fround(1 / Math.fround(1 - Math.fround(rate))); // as norm.c's floats
    const m = Float32Array.from(y!, (v) => (v === 0 ? 0 : scale));
    const [plain] = await read(() => [tf.mul(tf.tensor(xs, shape), tf.tensor(m, shape))]);
    assert.ok(maxAbsDiff(Array.from(y!), Array.from(plain!)) === 0, `${what}: x ⊙ m differs`);
  }
  await leakFree('DROPOUT', async () => {
    const x = filled([7, 12], 3);
    const dx = tf.grad((xi: tf.Tensor) => tf.sum(blockDropout(xi, 0.3, 4)))(x);
    await dx.data();
    tf.dispose([x, dx]);
  });
});

test('webgpu DROPOUT_ADD_NORM: the mask (read back as dr = dx ⊙ m) is the native kernel’s, and under it the unfused ops agree, gradients included', async (t) => {
  if (!(await useWebgpu(t, BLOCK_KERNELS))) return;
  const [p, seed, shape] = [0.3, 42, [3, 17, 12]];
  const n = shape.reduce((a, b) => a * b, 1);
  const [xs, rs, gs, bs] = [lcgValues(n, 8), lcgValues(n, 9), lcgValues(12, 10), lcgValues(12, 11)];
  // dx and dr of Σ LayerNorm(x + Dropout(r)) ⊙ u: dr = dx ⊙ m, m = 1/(1 − p) or 0 (norm.c)
  const grads = (s: number) =>
    read(() => {
      const [x, r, gain, bias] = [tf.tensor(xs, shape), tf.tensor(rs, shape), tf.tensor1d(gs), tf.tensor1d(bs)];
      const [dx, dr] = tf.grads((xi: tf.Tensor, ri: tf.Tensor) =>
        weighted(dropoutAddNorm(xi, ri, gain, bias, LAYER_NORM_EPS, p, s)),
      )([x, r]);
      return [dx!, dr!];
    });
  const kept = (dr: Float32Array) => Array.from(dr, (v) => v !== 0);
  const [, wasmDr] = await onBackend('wasm', () => grads(seed));
  const [dx, dr] = await grads(seed);
  assert.deepEqual(kept(dr!), kept(wasmDr!), 'the kept elements differ from the native kernel’s');
  const scale = Math.fround(1 / Math.fround(1 - Math.fround(p))); // as norm.c's floats
  dr!.forEach((v, i) =>
    assert.ok(v === 0 || v === Math.fround(dx![i]! * scale), `dr[${i}] = ${v}, dx·m = ${dx![i]! * scale}`),
  );
  const dropped = dr!.filter((v) => v === 0).length / n;
  assert.ok(Math.abs(dropped - p) <= 4 * Math.sqrt((p * (1 - p)) / n), `${dropped} dropped, p = ${p}`);
  assert.notDeepEqual(kept((await grads(seed + 1))[1]!), kept(dr!), 'another seed draws another mask');
  // Under that mask, the unfused LayerNorm(x + r ⊙ m): same output and gradients.
  const mask = tf.tensor(
    Float32Array.from(dr!, (v) => (v === 0 ? 0 : scale)),
    shape,
  );
  const [x, r, gain, bias] = [tf.tensor(xs, shape), tf.tensor(rs, shape), tf.tensor1d(gs), tf.tensor1d(bs)];
  await leakFree('LayerNorm(x + Dropout(r))', () =>
    sameAsUnfused(
      'LayerNorm(x + Dropout(r))',
      (xi, ri, g, bi) => dropoutAddNorm(xi!, ri!, g!, bi!, LAYER_NORM_EPS, p, seed),
      (xi, ri, g, bi) => layerNorm({ gain: g!, bias: bi! }, tf.add(xi!, tf.mul(ri!, mask))),
      [x, r, gain, bias],
    ),
  );
  tf.dispose([x, r, gain, bias, mask]);
});

test('webgpu, every block kernel (attention.ts’s too): a post-LN and a pre-LN model’s logits and parameter gradients equal the unfused path’s', async (t) => {
  if (!(await useWebgpu(t, BLOCK_KERNELS))) return;
  assert.ok(hasTrainingKernels(), 'webgpu has every training kernel');
  for (const order of [{ norm_first: false }, { norm_first: true, final_norm: true }]) {
    const { names, fused, plain } = await wholeModelBothWays(order);
    const what = order.norm_first ? 'pre-LN' : 'post-LN';
    assert.ok(Math.abs(fused.loss - plain.loss) <= 1e-5 * Math.max(1, Math.abs(plain.loss)), `${what}: loss`);
    names.forEach((name, i) => {
      const diff = relDiff(fused.grads[i], plain.grads[i]);
      assert.ok(diff <= 1e-5, `${what} ${name}: max |fused − unfused| / max(1, max |unfused|) = ${diff}`);
    });
  }
});
