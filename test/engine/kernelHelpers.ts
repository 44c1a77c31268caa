/**
 * What the kernel and step tests share: repeatable inputs, running on another backend and coming
 * back, and comparing a model's parameters and Adam moments across backends.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { type BackendName, initBackend } from '../../src/engine/backend';
import type { TransformerConfig } from '../../src/engine/model/config';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { type ModelOps, plainOps } from '../../src/engine/ops';
import type { Adam } from '../../src/engine/train/adam';
import { cannotRun, smallConfig, TOY_BATCH } from '../helpers';

/** n values in [−scale, scale) from a small LCG: repeatable, no symmetry. */
export function lcgValues(n: number, seed: number, scale = 1): Float32Array {
  let x = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return ((x / 2 ** 32) * 2 - 1) * scale;
  });
}

/** A tensor of lcgValues. */
export const filled = (shape: number[], seed: number, scale = 1): tf.Tensor =>
  tf.tensor(
    lcgValues(
      shape.reduce((a, b) => a * b, 1),
      seed,
      scale,
    ),
    shape,
  );

/** Runs f with `backend` active (its tensors made there), then makes `back` active again. */
export async function onBackend<T>(
  backend: BackendName,
  f: () => Promise<T>,
  back: BackendName = 'webgpu',
): Promise<T> {
  await initBackend(backend);
  try {
    return await f();
  } finally {
    await initBackend(back);
  }
}

/**
 * Worst |a − b| / max(|b|, rms(b)) over the arrays, per element (a tiny b against the rest of its
 * array); not finite is the worst.
 */
export function worstRelative(a: ArrayLike<number>[], b: ArrayLike<number>[]): number {
  let worst = 0;
  b.forEach((want, i) => {
    const got = a[i]!;
    assert.equal(got.length, want.length);
    const rms = Math.sqrt(Array.from(want).reduce((s, x) => s + x * x, 0) / want.length) || 1;
    for (let k = 0; k < want.length; k++)
      worst = Math.max(worst, Math.abs(got[k]! - want[k]!) / Math.max(Math.abs(want[k]!), rms));
    if (Array.from(got).some((x) => !Number.isFinite(x))) worst = Infinity;
  });
  return worst;
}

/** Every parameter and Adam moment by name, as plain arrays. */
export async function snapshot(model: Transformer, adam: Pick<Adam, 'state'>): Promise<Map<string, Float32Array>> {
  const named = namedVariables(model.params);
  const out = new Map<string, Float32Array>();
  for (const [name, p] of named) out.set(name, (await p.data()) as Float32Array);
  for (const [name, s] of await adam.state(named)) out.set(name, s.data);
  return out;
}

/**
 * worstRelative over the tensors of b by name, the key bias (in_proj_bias[d, 2d)) left out: softmax
 * does not see it, so its gradient is rounding noise, which Adam's g/√v turns into a step of ±lr
 * with any sign on either backend.
 */
export function worstByName(
  a: Map<string, Float32Array>,
  b: Map<string, Float32Array>,
  d: number,
): { error: number; at: string } {
  let r = { error: 0, at: '' };
  for (const [name, want] of b) {
    const got = Float32Array.from(a.get(name) ?? []);
    assert.equal(got.length, want.length, `${name}: missing or resized`);
    if (name.includes('in_proj_bias')) got.set(want.subarray(d, 2 * d), d);
    const e = worstRelative([got], [want]);
    if (!(e <= r.error)) r = { error: e, at: name };
  }
  return r;
}

/**
 * Makes webgpu active and checks that it has `kernels`; false (after cannotRun, which fails the test
 * unless the run allows the skip "webgpu") when Dawn does not load here.
 */
export async function useWebgpu(t: TestContext, kernels: readonly string[] = []): Promise<boolean> {
  try {
    await initBackend('webgpu');
  } catch (err) {
    cannotRun(t, 'webgpu', (err as Error).message);
    return false;
  }
  for (const name of kernels) assert.ok(tf.getKernel(name, 'webgpu'), `${name} is not registered on webgpu`);
  return true;
}

/** Tensors and backend buffers before and after `f`: none may be left behind. */
export async function leakFree(what: string, f: () => Promise<void>): Promise<void> {
  const backend = tf.backend() as tf.KernelBackend & { numDataIds(): number };
  const [tensors, ids] = [tf.memory().numTensors, backend.numDataIds()];
  await f();
  assert.equal(tf.memory().numTensors, tensors, `${what} leaves tensors behind`);
  assert.equal(backend.numDataIds(), ids, `${what} leaves ${tf.getBackend()} data behind`);
}

/** Σ y ⊙ u, u = filled(y's shape, 99): a scalar whose gradient sends a fixed, non-uniform u into y. */
export const weighted = (y: tf.Tensor): tf.Scalar => tf.tidy(() => tf.sum(tf.mul(y, filled(y.shape, 99))));

type Pass = { loss: number; grads: unknown[] };

/**
 * A whole model's Σ logits ⊙ u (training mode, dropout 0) and every parameter's gradient, on the
 * active backend with its training kernels and without them (the unfused tfjs ops).
 */
export async function wholeModelBothWays(order: Partial<TransformerConfig>) {
  const model = new Transformer(smallConfig({ dropout: 0, ...order }), undefined, 3);
  const src = tf.tensor2d(TOY_BATCH.src, undefined, 'int32');
  const tgt = tf.tensor2d(TOY_BATCH.tgtIn, undefined, 'int32');
  const vars = namedVariables(model.params).map(([, v]) => v);
  const pass = async (ops?: ModelOps): Promise<Pass> => {
    const ctx = { training: true, ...(ops ? { ops } : {}) };
    const { value, grads } = tf.variableGrads(() => weighted(model.logits(src, tgt, ctx)), vars);
    const out = { loss: (await value.data())[0]!, grads: await Promise.all(vars.map((v) => grads[v.name]!.array())) };
    tf.dispose([value, ...Object.values(grads)]);
    return out;
  };
  try {
    const fused = await pass();
    const plain = await pass(plainOps);
    return { names: vars.map((v) => v.name), fused, plain };
  } finally {
    tf.dispose([src, tgt]);
    model.dispose();
  }
}

/**
 * Runs `f` with the webgpu kernels `names` wrapped: each call of one records how many inputs it
 * was given (so its length is the number of calls). The kernels are put back after.
 */
export async function recordingKernels<T>(
  names: string[],
  f: () => Promise<T>,
): Promise<{ inputs: Map<string, number[]>; out: T }> {
  const inputs = new Map(names.map((n) => [n, [] as number[]]));
  const kernels = names.map((n) => tf.getKernel(n, 'webgpu')!);
  const record =
    (k: tf.KernelConfig): tf.KernelFunc =>
    (args) => {
      inputs.get(k.kernelName)!.push(Object.keys(args.inputs).length);
      return k.kernelFunc(args);
    };
  for (const k of kernels) {
    tf.unregisterKernel(k.kernelName, 'webgpu');
    tf.registerKernel({ ...k, kernelFunc: record(k) });
  }
  try {
    return { inputs, out: await f() };
  } finally {
    for (const k of kernels) {
      tf.unregisterKernel(k.kernelName, 'webgpu');
      tf.registerKernel(k);
    }
  }
}
