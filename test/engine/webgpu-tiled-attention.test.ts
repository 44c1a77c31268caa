/**
 * The tiled attention kernels (backend/webgpu/flashForward.ts, flashBackward.ts) at sizes that do not
 * divide their tiles (16 queries by 16 keys forward; 16 keys by 8 queries and 16 queries by 8 keys
 * backward): T 1, 5, 33, 70; S 3, 37; dk 8 and 64; 1 and 3 heads; outputs and every gradient against
 * the unfused tfjs ops on webgpu (lavapipe here) to 1e-5 of their size, self-attention under causal
 * and padding masks and cross-attention under padding; the same against the row kernels, NaN in the
 * same places for a fully masked row; heads over 64 wide fall back to the row kernels; nothing left
 * behind by a pass with or without gradients.
 */
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { blockAttention } from '../../src/engine/backend/trainingOps';
import { setTiledAttention, TILED_ATTENTION, usesTiledAttention } from '../../src/engine/backend/tiledAttention';
import { causalMask } from '../../src/engine/model/attention';
import {
  crossAttention,
  gpuTest,
  kernelsRun,
  maskOf,
  outputAndGrads,
  padding,
  relDiff,
  sameAsUnfused,
  selfAttention,
} from './attentionHelpers';
import { filled } from './kernelHelpers';

/** Padding of the last pads[b] keys of each batch row, plus the causal mask: [B, 1, T, T]. */
const causalPadding = (pads: number[], t: number) => tf.add(padding(pads, t), causalMask(t));

gpuTest('self-attention at sizes off the tiles, causal and padding masks, equals the unfused ops', async () => {
  // [T, dk, heads]: every T against 16-row tiles, both dk, both head counts.
  const cases = [
    [1, 8, 1],
    [5, 8, 3],
    [33, 64, 1],
    [33, 8, 3],
    [70, 8, 1],
    [70, 64, 3],
  ] as const;
  for (const [t, dk, h] of cases) {
    assert.ok(usesTiledAttention(dk));
    const qkv = filled([2, t, 3 * dk * h], t + dk, 1.5);
    const pads = [0, Math.floor(t / 3)];
    const masks = [causalPadding(pads, t), padding(pads, t)];
    for (const mask of masks) await sameAsUnfused(selfAttention, [qkv], mask, h);
    tf.dispose([qkv, ...masks]);
  }
});

gpuTest('cross-attention at sizes off the tiles, padding masks, equals the unfused ops', async () => {
  // [T, S, dk, heads]
  const cases = [
    [1, 37, 8, 3],
    [5, 3, 8, 1],
    [33, 37, 64, 1],
    [70, 3, 64, 3],
    [70, 37, 8, 3],
  ] as const;
  for (const [t, s, dk, h] of cases) {
    const q = filled([2, t, dk * h], t + s, 1.5);
    const kv = filled([2, s, 2 * dk * h], s + dk, 1.5);
    const pad = padding([Math.floor(s / 2), 0], s);
    const shared = padding([s - 1], s); // [1, 1, 1, S]: one key left, broadcast over the batch
    for (const mask of [pad, shared]) await sameAsUnfused(crossAttention, [q, kv], mask, h);
    tf.dispose([q, kv, pad, shared]);
  }
});

/** Output and gradients of self- and cross-attention with the tiled kernels or the row kernels. */
async function withKernels(tiled: boolean, self: tf.Tensor, cross: tf.Tensor, h: number) {
  setTiledAttention(tiled);
  try {
    const [b, t, s, d] = [3, 37, 19, 8 * h];
    const qkv = filled([b, t, 3 * d], 11, 2);
    const q = filled([b, t, d], 12, 2);
    const kv = filled([b, s, 2 * d], 13, 2);
    const selfOut = await outputAndGrads(selfAttention(true, self, h), [qkv]);
    const crossOut = await outputAndGrads(crossAttention(true, cross, h), [q, kv]);
    const ran = await kernelsRun(() => selfAttention(true, self, h)(qkv));
    tf.dispose([qkv, q, kv]);
    return { ran, results: [selfOut.y, ...selfOut.grads, crossOut.y, ...crossOut.grads] };
  } finally {
    setTiledAttention(true);
  }
}

gpuTest('the tiled kernels give what the row kernels give, outputs and gradients', async () => {
  const self = causalPadding([0, 5, 30], 37);
  const cross = padding([18, 0, 7], 19);
  const tiled = await withKernels(true, self, cross, 3);
  const rows = await withKernels(false, self, cross, 3);
  assert.ok(tiled.ran.includes(TILED_ATTENTION) && !rows.ran.includes(TILED_ATTENTION));
  tiled.results.forEach((x, i) =>
    assert.ok(relDiff(x, rows.results[i]) <= 1e-5, `result ${i}: ${relDiff(x, rows.results[i])}`),
  );
  tf.dispose([self, cross]);
});

gpuTest('a fully masked row: NaN in the same places as the row kernels, output and gradients', async () => {
  // Batch row 1's query 20 sees no key (self); batch row 2 has every key padded (cross).
  const pattern = Array.from({ length: 3 }, () => Array.from({ length: 37 }, () => new Array<number>(37).fill(0)));
  pattern[1]![20] = new Array<number>(37).fill(1);
  const self = tf.add(maskOf(pattern), causalMask(37));
  const cross = padding([0, 3, 19], 19);
  const nans = (r: { results: unknown[] }) =>
    r.results.map((x) => (Array.isArray(x) ? (x.flat(3) as number[]).map(Number.isNaN) : []));
  const tiled = nans(await withKernels(true, self, cross, 2));
  const rows = nans(await withKernels(false, self, cross, 2));
  assert.deepEqual(tiled, rows);
  assert.ok(tiled[0]!.some((x) => x) && tiled[0]!.some((x) => !x), 'some NaN, not all, in the output');
  tf.dispose([self, cross]);
});

gpuTest('heads wider than 64 use the row kernels, with the same results', async () => {
  const [b, t, dk] = [1, 6, 72];
  assert.ok(!usesTiledAttention(dk) && usesTiledAttention(64));
  const qkv = filled([b, t, 3 * dk], 14);
  const mask = causalMask(t);
  const ran = await kernelsRun(() => blockAttention(qkv as tf.Tensor3D, undefined, mask, 1)!);
  assert.ok(!ran.includes(TILED_ATTENTION), ran.join(', '));
  await sameAsUnfused(selfAttention, [qkv], mask, 1);
  tf.dispose([qkv, mask]);
});

gpuTest('nothing is left behind by a pass, with gradients or without', async () => {
  const [b, t, s, d, h] = [2, 21, 9, 16, 2];
  const q = filled([b, t, d], 15);
  const kv = filled([b, s, 2 * d], 16);
  const qkv = filled([b, t, 3 * d], 17);
  const pad = padding([3, 0], s);
  const causal = causalMask(t);
  const backend = tf.engine().backend as tf.KernelBackend & { numDataIds(): number };
  const count = () => [tf.memory().numTensors, backend.numDataIds()];
  const before = count();
  await outputAndGrads(crossAttention(true, pad, h), [q, kv]);
  await outputAndGrads(selfAttention(true, causal, h), [qkv]);
  tf.tidy(() => selfAttention(true, causal, h)(qkv)).dispose();
  assert.deepEqual(count(), before, 'tensors and buffers after the passes');
  tf.dispose([q, kv, qkv, pad, causal]);
});
