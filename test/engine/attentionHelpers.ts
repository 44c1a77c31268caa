/**
 * What the webgpu attention tests share (webgpu-attention.test.ts, webgpu-tiled-attention.test.ts):
 * webgpu made active or the test skipped where allowed, the unfused reference through
 * model/attention.ts's eq. 1, the kernels through blockAttention, outputs and gradients under a fixed
 * upstream gradient, their comparison, and masks from 0/1 patterns.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { blockAttention, CROSS_ATTENTION, SELF_ATTENTION } from '../../src/engine/backend/trainingOps';
import { setTiledAttention, TILED_ATTENTION } from '../../src/engine/backend/tiledAttention';
import { scaledDotProductAttention } from '../../src/engine/model/attention';
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
export function gpuTest(name: string, body: () => Promise<void>): void {
  test(name, async (t) => {
    if (webgpu !== null) return cannotRun(t, 'webgpu', webgpu);
    await initBackend('webgpu');
    assert.ok(tf.getKernel(SELF_ATTENTION, 'webgpu') && tf.getKernel(CROSS_ATTENTION, 'webgpu'));
    await body();
  });
}

/** Where blockAttention's kernels ran last (tf.profile's kernel names): tiled or row kernels. */
export async function kernelsRun(f: () => tf.Tensor): Promise<string[]> {
  const profile = await tf.profile(() => f());
  tf.dispose(profile.result as tf.Tensor);
  return profile.kernels.map((k) => k.name);
}

/**
 * gpuTest twice: with the tiled kernels (tiledAttention.ts, the default) and with the row kernels
 * (webgpu/attention.ts, attentionGrad.ts), each seen to be the one that runs.
 */
export function bothKernels(name: string, body: () => Promise<void>): void {
  for (const tiled of [true, false])
    gpuTest(`${name} (${tiled ? 'tiled' : 'row'} kernels)`, async () => {
      setTiledAttention(tiled);
      try {
        const q = filled([1, 2, 24], 1);
        const mask = tf.zeros([1, 1, 1, 2]);
        const names = await kernelsRun(() => blockAttention(q as tf.Tensor3D, undefined, mask, 1)!);
        assert.equal(names.includes(TILED_ATTENTION), tiled, names.join(', '));
        assert.equal(names.includes(SELF_ATTENTION), !tiled, names.join(', '));
        tf.dispose([q, mask]);
        await body();
      } finally {
        setTiledAttention(true);
      }
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
export function selfAttention(fused: boolean, mask: tf.Tensor, h: number) {
  return (qkv: tf.Tensor) => {
    if (fused) return blockAttention(qkv as tf.Tensor3D, undefined, mask, h)!;
    const [q, k, v] = tf.split(qkv, 3, 2);
    return unfused(q!, k!, v!, mask, h);
  };
}

/** Cross-attention of q [B, T, d] and kv [B, S, 2d] (K, V side by side): the kernel, or the unfused ops. */
export function crossAttention(fused: boolean, mask: tf.Tensor, h: number) {
  return (q: tf.Tensor, kv: tf.Tensor) => {
    if (fused) return blockAttention(q as tf.Tensor3D, kv as tf.Tensor3D, mask, h)!;
    const [k, v] = tf.split(kv, 2, 2);
    return unfused(q, k!, v!, mask, h);
  };
}

/** f's output and its gradients under a fixed, non-uniform upstream gradient, as nested arrays. */
export async function outputAndGrads(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[]) {
  const y = tf.tidy(() => f(...xs));
  const dy = filled(y.shape, 99);
  const grads = tf.grads((...args: tf.Tensor[]) => tf.sum(tf.mul(f(...args), dy)))(xs);
  const out = { y: await y.array(), grads: await Promise.all(grads.map((g) => g.array())) };
  tf.dispose([y, dy, ...grads]);
  return out;
}

const zerosLike = (a: unknown): unknown => (Array.isArray(a) ? a.map(zerosLike) : 0);
/** max |a − b| / max(1, max |b|) */
export const relDiff = (a: unknown, b: unknown) => maxAbsDiff(a, b) / Math.max(1, maxAbsDiff(b, zerosLike(b)));

/** The kernel and the unfused ops give the same output and gradients, to `tol` of each one's size. */
export async function sameAsUnfused(
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
export function maskOf(pattern: number[][][], value = -Infinity): tf.Tensor {
  const [b, tm, s] = [pattern.length, pattern[0]!.length, pattern[0]![0]!.length];
  return tf.tensor(
    pattern.flat(2).map((m) => (m ? value : 0)),
    [b, 1, tm, s],
  );
}

/** Padding [B, 1, 1, S]: the last pads[b] keys of batch row b masked. */
export const padding = (pads: number[], s: number, value = -Infinity) =>
  maskOf(
    pads.map((p) => [Array.from({ length: s }, (_, i) => (i >= s - p ? 1 : 0))]),
    value,
  );
