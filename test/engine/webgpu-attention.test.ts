/**
 * The webgpu attention kernels, each test run with the tiled ones (webgpu/flashForward.ts,
 * flashBackward.ts) and with the row ones (webgpu/attention.ts, attentionGrad.ts), against the unfused
 * tfjs ops on the same backend (split heads, Q·Kᵀ/√dk + mask, softmax, ·V, merge), outputs and the
 * gradients of Q, K, V (and of the separate K, V of cross-attention) to 1e-5 of each one's size:
 * self-attention under padding, causal and padding+causal masks, cross-attention under padding,
 * odd sizes and one head, a row with one key left, −1e9 masks as well as −∞; a row with every key
 * masked comes out NaN as in tfjs; and the same inputs give what wasm's native kernel gives.
 * Shapes are small: on CPU-only machines Dawn runs on lavapipe.
 */
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { hasTrainingKernels } from '../../src/engine/backend/trainingOps';
import { causalMask } from '../../src/engine/model/attention';
import {
  bothKernels,
  crossAttention,
  maskOf,
  outputAndGrads,
  padding,
  relDiff,
  sameAsUnfused,
  selfAttention,
} from './attentionHelpers';
import { filled } from './kernelHelpers';

bothKernels(
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

bothKernels(
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

bothKernels('cross-attention with padding masks equals the unfused ops, gradients of q and kv included', async () => {
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

bothKernels('more keys than a workgroup has threads: chunks of 64 keys and the reductions over them', async () => {
  const [b, t, s, d, h] = [1, 3, 150, 8, 2];
  const q = filled([b, t, d], 5, 2);
  const kv = filled([b, s, 2 * d], 6, 2);
  const pad = padding([37], s);
  await sameAsUnfused(crossAttention, [q, kv], pad, h);
  tf.dispose([q, kv, pad]);
});

bothKernels('a row with every key masked comes out NaN, as in tfjs, and the other rows as before', async () => {
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

bothKernels('the webgpu kernels give what the native wasm kernels give on the same inputs', async () => {
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
