/**
 * The training kernels with gradients (backend/trainingOps.ts; native/attention.c, norm.c, blas.c's
 * linear backward) against the unfused tfjs ops they replace, outputs and every gradient, to 1e-5:
 * a linear map (with ReLU, and with a block of rows of the stacked W^Q, W^K, W^V), the residual
 * LayerNorm and LayerNorm alone, self- and cross-attention with padding and causal masks, and a whole
 * post-LN and pre-LN model's logits and parameter gradients. Dropout in the fused LayerNorm draws its own mask: its values are 0 or
 * 1/(1 − p), its zero fraction is p within 3σ, a seed repeats it, and with the mask it drew (read
 * back from the gradients) the unfused ops give the same output and gradients.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { fusedLinear } from '../../src/engine/backend/inferenceOps';
import { blockDropout, blockLayerNorm, dropoutAddNorm, hasTrainingKernels } from '../../src/engine/backend/trainingOps';
import { attendTo, causalMask, paddingMask, projectKeysValues } from '../../src/engine/model/attention';
import { attendBlock } from '../../src/engine/ops/block';
import { LAYER_NORM_EPS, layerNorm, linear } from '../../src/engine/model/layers';
import { maxAbsDiff, REPO } from '../helpers';
import { filled, weighted, wholeModelBothWays } from './kernelHelpers';

before(async () => {
  await initBackend('wasm');
  assert.ok(hasTrainingKernels(), 'the native addon must load here (npm test builds it)');
});

/** f's value and its gradients with respect to xs, as plain arrays. */
async function valueAndGrads(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[]) {
  const { value, grads } = tf.valueAndGrads((...args: tf.Tensor[]) => weighted(f(...args)))(xs);
  const out = { value: await value.data(), grads: await Promise.all(grads.map((g) => g.array())) };
  tf.dispose([value, ...grads]);
  return out;
}

/** Zeros in the shape of a nested array. */
const zerosLike = (a: unknown): unknown => (Array.isArray(a) ? a.map(zerosLike) : 0);

/** Runs f with the kernels (f(true)) and without (f(false)), and checks outputs and gradients agree to `tol`. */
async function sameWithAndWithout(
  f: (kernels: boolean) => (...xs: tf.Tensor[]) => tf.Tensor,
  xs: tf.Tensor[],
  tol = 1e-5,
) {
  const fusedOut = await valueAndGrads(f(true), xs);
  const plain = await valueAndGrads(f(false), xs);
  assert.ok(maxAbsDiff(fusedOut.value[0], plain.value[0]) <= tol * Math.max(1, Math.abs(plain.value[0]!)));
  fusedOut.grads.forEach((g, i) => {
    // Relative to the gradient's size: a bias or gain gradient sums over every row.
    const diff = maxAbsDiff(g, plain.grads[i]) / Math.max(1, maxAbsDiff(plain.grads[i], zerosLike(plain.grads[i])));
    assert.ok(diff <= tol, `gradient ${i}: max |fused − unfused| / max(1, max |unfused|) = ${diff}`);
  });
}

test('a linear map, with ReLU and with a block of rows of W, equals matMul + add (+ relu), gradients included', async () => {
  const x = filled([2, 5, 8], 1); // [B, T, in]
  const w = filled([12, 8], 2, 0.5); // [out, in]; rows 4…7 are W^K of a stacked [3·4, 8]
  const b = filled([12], 3);
  const kernel =
    (relu: boolean, rows: [number, number]) => (k: boolean) => (xi: tf.Tensor, wi: tf.Tensor, bi: tf.Tensor) =>
      k ? fusedLinear(xi, wi, bi, relu, rows) : plainLinear(xi, wi, bi, relu, rows);
  await sameWithAndWithout(kernel(true, [0, 0]), [x, w, b]);
  await sameWithAndWithout(kernel(false, [4, 4]), [x, w, b]);
  tf.dispose([x, w, b]);
});

/** The unfused reference: slice the rows, then layers.ts linear, then ReLU. */
function plainLinear(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor, relu: boolean, rows: [number, number]): tf.Tensor {
  const [ws, bs] = rows[1] > 0 ? [tf.slice(w, [rows[0], 0], [rows[1], -1]), tf.slice(b, [rows[0]], [rows[1]])] : [w, b];
  const y = linear(x, ws, bs);
  return relu ? tf.relu(y) : y;
}

test('LayerNorm(x + r) without dropout equals layers.ts layerNorm, gradients included', async () => {
  const [x, r] = [filled([3, 4, 16], 4), filled([3, 4, 16], 5, 2)];
  const [gain, bias] = [filled([16], 6), filled([16], 7)];
  const f = (k: boolean) => (xi: tf.Tensor, ri: tf.Tensor, g: tf.Tensor, bi: tf.Tensor) =>
    k ? dropoutAddNorm(xi, ri, g, bi, LAYER_NORM_EPS, 0, 1) : layerNorm({ gain: g, bias: bi }, tf.add(xi, ri));
  await sameWithAndWithout(f, [x, r, gain, bias]);
  tf.dispose([x, r, gain, bias]);
});

test('LayerNorm(x) alone (pre-LN) equals layers.ts layerNorm, gradients included', async () => {
  const x = filled([3, 4, 16], 22, 3);
  const [gain, bias] = [filled([16], 23), filled([16], 24)];
  const f = (k: boolean) => (xi: tf.Tensor, g: tf.Tensor, bi: tf.Tensor) =>
    k ? blockLayerNorm(xi, g, bi, LAYER_NORM_EPS) : layerNorm({ gain: g, bias: bi }, xi);
  await sameWithAndWithout(f, [x, gain, bias]);
  tf.dispose([x, gain, bias]);
});

test('dropout in the fused LayerNorm: values 0 or 1/(1 − p), zero fraction p within 3σ, seeded, and equal to the unfused ops under its own mask', async () => {
  const p = 0.3;
  const [n, d] = [512, 256];
  const [x, r] = [filled([n, d], 8), filled([n, d], 9)];
  const [gain, bias] = [filled([d], 10), filled([d], 11)];
  // The mask the kernel drew: dr = dx ⊙ m (norm.c), so m = dr / dx.
  const maskOf = (seed: number): Float32Array =>
    tf.tidy(() => {
      const [dx, dr] = tf.grads((xi: tf.Tensor, ri: tf.Tensor) =>
        weighted(dropoutAddNorm(xi, ri, gain, bias, LAYER_NORM_EPS, p, seed)),
      )([x, r]);
      return tf.div(dr!, dx!).dataSync() as Float32Array;
    });
  const m = maskOf(42);
  const kept = Math.fround(1 / Math.fround(1 - p));
  let zeros = 0;
  for (const v of m) {
    if (v === 0) zeros++;
    else assert.ok(Math.abs(v - kept) <= 1e-5 * kept, `a kept value is scaled by ${v}, not 1/(1 − p) = ${kept}`);
  }
  const sigma = Math.sqrt((p * (1 - p)) / m.length);
  assert.ok(Math.abs(zeros / m.length - p) <= 3 * sigma, `zero fraction ${zeros / m.length}, p = ${p} ± ${3 * sigma}`);
  assert.deepEqual(maskOf(42), m, 'the same seed draws the same mask');
  assert.ok(maxAbsDiff(Array.from(maskOf(43)), Array.from(m)) > 0, 'another seed draws another mask');
  // Under that mask (exact 0 or `kept`), the unfused LayerNorm(x + r ⊙ m) gives the same output and gradients.
  const mask = tf.tensor(
    Float32Array.from(m, (v) => (v === 0 ? 0 : kept)),
    [n, d],
  );
  const f = (k: boolean) => (xi: tf.Tensor, ri: tf.Tensor, g: tf.Tensor, bi: tf.Tensor) =>
    k
      ? dropoutAddNorm(xi, ri, g, bi, LAYER_NORM_EPS, p, 42)
      : layerNorm({ gain: g, bias: bi }, tf.add(xi, tf.mul(ri, mask)));
  await sameWithAndWithout(f, [x, r, gain, bias]);
  tf.dispose([x, r, gain, bias, mask]);
});

test('self- and cross-attention over whole sequences equal attention.ts attendTo, masks and gradients included', async () => {
  const [b, t, s, d, h] = [2, 5, 7, 16, 4];
  const attn = {
    wQKV: filled([3 * d, d], 12, 0.4),
    bQKV: filled([3 * d], 13),
    wO: filled([d, d], 14, 0.4),
    bO: filled([d], 15),
  };
  const params = [attn.wQKV, attn.bQKV, attn.wO, attn.bO];
  const xq = filled([b, t, d], 16);
  const xkv = filled([b, s, d], 17);
  // Padding: the second sentence's last two source positions and last target position.
  const srcIds = tf.tensor2d(
    [
      [5, 6, 7, 8, 9, 10, 11],
      [5, 6, 7, 8, 9, 0, 0],
    ],
    undefined,
    'int32',
  );
  const tgtIds = tf.tensor2d(
    [
      [1, 6, 7, 8, 9],
      [1, 6, 7, 8, 0],
    ],
    undefined,
    'int32',
  );
  const srcMask = paddingMask(srcIds, 0); // [B, 1, 1, S]
  const tgtMask = tf.add(causalMask(t), paddingMask(tgtIds, 0)); // [B, 1, T, T]
  // The kernels' path, or the unfused one: projections by slices of W, heads split and merged.
  const attend = (k: boolean, x: tf.Tensor, other: tf.Tensor | undefined, mask: tf.Tensor, p: tf.Tensor[]) => {
    const [wQKV, bQKV, wO, bO] = p as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
    const a = { wQKV, bQKV, wO, bO };
    const [q, kv] = [x as tf.Tensor3D, other as tf.Tensor3D | undefined];
    if (k) return attendBlock(a, h, q, kv, mask)!;
    return attendTo(a, h, q, projectKeysValues(a, h, kv ?? q), mask).output;
  };
  await sameWithAndWithout(
    (k) =>
      (x, ...p) =>
        attend(k, x, undefined, tgtMask, p),
    [xq, ...params],
  );
  await sameWithAndWithout(
    (k) =>
      (x, y, ...p) =>
        attend(k, x, y, srcMask, p),
    [xq, xkv, ...params],
  );
  tf.dispose([...params, xq, xkv, srcIds, tgtIds, srcMask, tgtMask]);
});

for (const order of [{ norm_first: false }, { norm_first: true, final_norm: true }])
  test(`a whole ${order.norm_first ? 'pre-LN' : 'post-LN'} model: logits and every parameter’s gradient equal the unfused path’s`, async () => {
    const { names, fused, plain } = await wholeModelBothWays(order);
    assert.ok(Math.abs(fused.loss - plain.loss) <= 1e-5 * Math.max(1, Math.abs(plain.loss)));
    names.forEach((name, i) => {
      const diff = maxAbsDiff(fused.grads[i], plain.grads[i]);
      assert.ok(diff <= 1e-5, `${name}: max |fused − unfused| = ${diff}`);
    });
  });

test('the training kernels refuse arrays shorter than their sizes and impossible layouts, naming the argument', () => {
  const file = join(REPO, 'dist', 'native', 'blas.node');
  type Fn = (...a: unknown[]) => void;
  const m = {
    exports: {} as Record<'linearBackward' | 'addLayerNormBackward' | 'attention' | 'attentionBackward', Fn>,
  };
  process.dlopen(m, file);
  const f = new Float32Array(6);
  const { linearBackward, addLayerNormBackward, attention, attentionBackward } = m.exports;
  assert.throws(
    () => linearBackward(f, f, f, f, f, f, f, 2, 2, 4, false),
    /native.linearBackward: dy has 6 values, needs 8/,
  );
  assert.throws(() => linearBackward(f, f, f, f, f, f, f, 1, 2, 2, 1), /relu must be true or false/);
  assert.throws(
    () => addLayerNormBackward(f, f, f, f, f, f, f, f, 2, 6, 1e-5, true, 0, 0),
    /native.addLayerNormBackward: x has 6 values, needs 12/,
  );
  // B T S h dk qWidth qOffset kvWidth kOffset vOffset maskB maskT masked
  const dims = [1, 1, 1, 2, 1, 6, 0, 6, 2, 4, 0, 0, 1];
  assert.throws(() => attention(f, f, f, f, dims.slice(1)), /dims must be an array of 13 counts/);
  assert.throws(() => attention(f, f, f, f, [1, 1, 1, 2, 1, 6, 5, 6, 2, 4, 0, 0, 1]), /a head's columns lie outside/);
  assert.throws(() => attention(f, f, f, f, [2, 1, 1, 2, 1, 6, 0, 6, 2, 4, 0, 0, 1]), /q has 6 values, needs 12/);
  assert.throws(() => attentionBackward(f, f, f, f, f, new Float32Array(2), dims), /dkv has 2 values, needs 6/);
});

test('dropout’s kernel: its gradient is the forward mask again (dy ⊙ m, m = y / x), and another seed draws another mask', () => {
  const x = tf.add(filled([300, 100], 20), 2); // no zeros: m = y / x is defined everywhere
  const u = filled([300, 100], 21);
  const [y, dx, other] = tf.tidy(() => [
    blockDropout(x, 0.25, 9),
    tf.grad((xi: tf.Tensor) => tf.sum(tf.mul(blockDropout(xi, 0.25, 9), u)))(x),
    blockDropout(x, 0.25, 10),
  ]);
  const [xv, yv, dxv, uv, ov] = [x, y!, dx!, u, other!].map((t) => t.dataSync());
  let differ = 0;
  for (let i = 0; i < xv.length; i++) {
    const m = yv[i]! / xv[i]!;
    assert.ok(Math.abs(dxv[i]! - uv[i]! * m) <= 1e-6 * Math.max(1, Math.abs(uv[i]! * m)), `element ${i}`);
    if (ov[i] !== yv[i]) differ++;
  }
  assert.ok(differ > 0.2 * xv.length, `seeds 9 and 10 differ in only ${differ} places`);
  tf.dispose([x, u, y!, dx!, other!]);
});
