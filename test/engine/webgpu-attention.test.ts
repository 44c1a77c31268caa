/**
 * The webgpu attention kernels (backend/webgpu/attention.ts, attentionGrad.ts) against the unfused
 * tfjs ops on the same backend (split heads, Q·Kᵀ/√dk + mask, softmax, ·V, merge), outputs and the
 * gradients of Q, K, V (and of the separate K, V of cross-attention) to 1e-5 of each one's size:
 * self-attention under padding, causal and padding+causal masks, cross-attention under padding,
 * odd sizes and one head, a row with one key left, −1e9 masks as well as −∞; a row with every key
 * masked comes out NaN as in tfjs; and the same inputs give what wasm's native kernel gives.
 * Shapes are small: on CPU-only machines Dawn runs on lavapipe.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import {
  blockAttention,
  CROSS_ATTENTION,
  hasTrainingKernels,
  SELF_ATTENTION,
} from '../../src/engine/backend/trainingOps';
import { causalMask, scaledDotProductAttention } from '../../src/engine/model/attention';
import { cannotRun, maxAbsDiff } from '../helpers';
import { filled } from './kernelHelpers';

let webgpu: string | null = null; // why webgpu cannot run here, or null

before(async () => {
  try {
    await initBackend('webgpu');
  } catch (err) {
    webgpu = (err as Error).message;
  }
});

/** A test that needs webgpu active: fails (or skips, when allowed) where Dawn does not load. */
function gpuTest(name: string, body: () => Promise<void>): void {
  test(name, async (t) => {
    if (webgpu !== null) return cannotRun(t, 'webgpu', webgpu);
    await initBackend('webgpu');
    assert.ok(tf.getKernel(SELF_ATTENTION, 'webgpu') && tf.getKernel(CROSS_ATTENTION, 'webgpu'));
    await body();
  });
}

/** [B, T, d] → [B, h, T, dk] */
const split = (x: tf.Tensor, h: number) => {
  const [b, t, d] = x.shape as [number, number, number];
  return tf.transpose(tf.reshape(x, [b, t, h, d / h]), [0, 2, 1, 3]);
};

/** The unfused reference: Q [B, T, d], K, V [B, S, d] → [B, T, d], through model/attention.ts's eq. 1. */
function unfused(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor, h: number): tf.Tensor {
  const { output } = scaledDotProductAttention(split(q, h), split(k, h), split(v, h), mask); // [B, h, T, dk]
  const [b, , t, dk] = output.shape as number[];
  return tf.reshape(tf.transpose(output, [0, 2, 1, 3]), [b!, t!, h * dk!]);
}

/** Self-attention of qkv [B, T, 3d] (Q, K, V side by side): the kernel, or the unfused ops. */
function selfAttention(fused: boolean, mask: tf.Tensor, h: number) {
  return (qkv: tf.Tensor) => {
    if (fused) return blockAttention(qkv as tf.Tensor3D, undefined, mask, h)!;
    const [q, k, v] = tf.split(qkv, 3, 2);
    return unfused(q!, k!, v!, mask, h);
  };
}

/** Cross-attention of q [B, T, d] and kv [B, S, 2d] (K, V side by side): the kernel, or the unfused ops. */
function crossAttention(fused: boolean, mask: tf.Tensor, h: number) {
  return (q: tf.Tensor, kv: tf.Tensor) => {
    if (fused) return blockAttention(q as tf.Tensor3D, kv as tf.Tensor3D, mask, h)!;
    const [k, v] = tf.split(kv, 2, 2);
    return unfused(q, k!, v!, mask, h);
  };
}

/** f's output and its gradients under a fixed, non-uniform upstream gradient, as nested arrays. */
async function outputAndGrads(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[]) {
  const y = tf.tidy(() => f(...xs));
  const dy = filled(y.shape, 99);
  const grads = tf.grads((...args: tf.Tensor[]) => tf.sum(tf.mul(f(...args), dy)))(xs);
  const out = { y: await y.array(), grads: await Promise.all(grads.map((g) => g.array())) };
  tf.dispose([y, dy, ...grads]);
  return out;
}

const zerosLike = (a: unknown): unknown => (Array.isArray(a) ? a.map(zerosLike) : 0);
/** max |a − b| / max(1, max |b|) */
const relDiff = (a: unknown, b: unknown) => maxAbsDiff(a, b) / Math.max(1, maxAbsDiff(b, zerosLike(b)));

/** The kernel and the unfused ops give the same output and gradients, to `tol` of each one's size. */
async function sameAsUnfused(
  f: (fused: boolean, mask: tf.Tensor, h: number) => (...xs: tf.Tensor[]) => tf.Tensor,
  xs: tf.Tensor[],
  mask: tf.Tensor,
  h: number,
  tol = 1e-5,
) {
  const fused = await outputAndGrads(f(true, mask, h), xs);
  const plain = await outputAndGrads(f(false, mask, h), xs);
  const out = relDiff(fused.y, plain.y);
  assert.ok(out <= tol, `output: max |fused − unfused| / max(1, max |unfused|) = ${out}`);
  fused.grads.forEach((g, i) => {
    const diff = relDiff(g, plain.grads[i]);
    assert.ok(diff <= tol, `gradient ${i}: max |fused − unfused| / max(1, max |unfused|) = ${diff}`);
  });
}

/** Additive mask [B, 1, Tm, S] from its 0/1 pattern (1 = masked) at `value` (−∞ or −1e9). */
function maskOf(pattern: number[][][], value = -Infinity): tf.Tensor {
  const [b, tm, s] = [pattern.length, pattern[0]!.length, pattern[0]![0]!.length];
  return tf.tensor(
    pattern.flat(2).map((m) => (m ? value : 0)),
    [b, 1, tm, s],
  );
}

/** Padding [B, 1, 1, S]: the last pads[b] keys of batch row b masked. */
const padding = (pads: number[], s: number, value = -Infinity) =>
  maskOf(
    pads.map((p) => [Array.from({ length: s }, (_, i) => (i >= s - p ? 1 : 0))]),
    value,
  );

gpuTest(
  'self-attention with padding, causal and padding+causal masks equals the unfused ops, gradients included',
  async () => {
    const [b, t, d, h] = [2, 5, 12, 3];
    const qkv = filled([b, t, 3 * d], 1, 1.5);
    const pad = padding([0, 2], t);
    const causal = causalMask(t);
    const both = tf.add(pad, causal); // [B, 1, T, T]
    for (const mask of [pad, causal, both]) await sameAsUnfused(selfAttention, [qkv], mask, h);
    await sameAsUnfused(selfAttention, [qkv], padding([1, 3], t, -1e9), h);
    tf.dispose([qkv, pad, causal, both]);
  },
);

gpuTest(
  'self-attention with one head and with a row of one key equals the unfused ops, gradients included',
  async () => {
    const [b, t, d] = [2, 7, 8];
    const qkv = filled([b, t, 3 * d], 2);
    const pad = padding([3, 0], t);
    await sameAsUnfused(selfAttention, [qkv], pad, 1);
    // Batch row 0's query 2 sees key 4 alone; row 1's query 6 sees key 0 alone (−∞ and −1e9).
    const pattern = Array.from({ length: b }, () => Array.from({ length: t }, () => new Array<number>(t).fill(0)));
    pattern[0]![2] = Array.from({ length: t }, (_, s) => (s === 4 ? 0 : 1));
    pattern[1]![6] = Array.from({ length: t }, (_, s) => (s === 0 ? 0 : 1));
    for (const value of [-Infinity, -1e9]) {
      const one = maskOf(pattern, value);
      await sameAsUnfused(selfAttention, [qkv], one, 2);
      one.dispose();
    }
    tf.dispose([qkv, pad]);
  },
);

gpuTest('cross-attention with padding masks equals the unfused ops, gradients of q and kv included', async () => {
  const [b, t, s, d, h] = [2, 5, 7, 12, 3];
  const q = filled([b, t, d], 3, 1.5);
  const kv = filled([b, s, 2 * d], 4, 1.5);
  const pad = padding([1, 4], s);
  await sameAsUnfused(crossAttention, [q, kv], pad, h);
  await sameAsUnfused(crossAttention, [q, kv], pad, 1);
  const shared = padding([2], s); // [1, 1, 1, S]: broadcast over the batch
  await sameAsUnfused(crossAttention, [q, kv], shared, h);
  // Nothing is left behind: not the temporary [2, B·h·T, S] of the backward pass, nor a tensor.
  const backend = tf.engine().backend as tf.KernelBackend & { numDataIds(): number };
  const [tensors, buffers] = [tf.memory().numTensors, backend.numDataIds()];
  await outputAndGrads(crossAttention(true, pad, h), [q, kv]);
  assert.deepEqual(
    [tf.memory().numTensors, backend.numDataIds()],
    [tensors, buffers],
    'tensors and buffers after a pass',
  );
  tf.dispose([q, kv, pad, shared]);
});

gpuTest('more keys than a workgroup has threads: chunks of 64 keys and the reductions over them', async () => {
  const [b, t, s, d, h] = [1, 3, 150, 8, 2];
  const q = filled([b, t, d], 5, 2);
  const kv = filled([b, s, 2 * d], 6, 2);
  const pad = padding([37], s);
  await sameAsUnfused(crossAttention, [q, kv], pad, h);
  tf.dispose([q, kv, pad]);
});

gpuTest('a row with every key masked comes out NaN, as in tfjs, and the other rows as before', async () => {
  const [b, t, d, h] = [1, 4, 8, 2];
  const qkv = filled([b, t, 3 * d], 7);
  const pattern = [Array.from({ length: t }, (_, r) => new Array<number>(t).fill(r === 1 ? 1 : 0))];
  const mask = maskOf(pattern);
  const [fused, plain] = await Promise.all(
    [true, false].map((f) => tf.tidy(() => selfAttention(f, mask, h)(qkv)).data()),
  );
  for (let i = 0; i < fused!.length; i++) {
    const row = Math.floor(i / d) % t;
    if (row === 1) assert.ok(Number.isNaN(fused![i]) && Number.isNaN(plain![i]), `element ${i} of the masked row`);
    else assert.ok(Math.abs(fused![i]! - plain![i]!) <= 1e-5, `element ${i}: ${fused![i]} vs ${plain![i]}`);
  }
  tf.dispose([qkv, mask]);
});

gpuTest('the webgpu kernels give what the native wasm kernels give on the same inputs', async () => {
  const [b, tq, s, d, h] = [2, 5, 7, 12, 3];
  const cases = async () => {
    // Tensors live on the active backend: made afresh from the same seeds on each.
    const qkv = filled([b, tq, 3 * d], 8);
    const q = filled([b, tq, d], 9);
    const kv = filled([b, s, 2 * d], 10);
    const [self, cross] = [tf.add(padding([0, 2], tq), causalMask(tq)), padding([1, 3], s)];
    const selfOut = await outputAndGrads(selfAttention(true, self, h), [qkv]);
    const crossOut = await outputAndGrads(crossAttention(true, cross, h), [q, kv]);
    tf.dispose([qkv, q, kv, self, cross]);
    return [selfOut.y, ...selfOut.grads, crossOut.y, ...crossOut.grads];
  };
  await initBackend('wasm');
  let native: unknown[];
  try {
    assert.ok(hasTrainingKernels(), 'the native addon must load here (npm test builds it)');
    native = await cases();
  } finally {
    await initBackend('webgpu');
  }
  const gpu = await cases();
  gpu.forEach((x, i) => assert.ok(relDiff(x, native[i]) <= 1e-5, `result ${i}: ${relDiff(x, native[i])}`));
});
