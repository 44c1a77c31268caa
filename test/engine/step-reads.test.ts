/**
 * train/step.ts on a backend whose reads wait for the device (webgpu): the step dispatches its update
 * before it reads anything back, the update is the one cpu computes, and a non-finite step gated on
 * the device leaves every weight and Adam moment as it was and is not counted by Adam's t. wasm (which
 * computes as it is called) keeps reading first. webgpu runs on Mesa lavapipe here: the models are tiny.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { computesAsynchronously, trainStep, type StepOptions } from '../../src/engine/train/step';
import { smallConfig, TOY_BATCH } from '../helpers';
import { snapshot, useWebgpu, worstByName } from './kernelHelpers';

const config = smallConfig({ d_model: 8, d_ff: 16 });
const opts: StepOptions = { lr: 1e-3, labelSmoothing: 0.1, clipNorm: 0.5 };

/** Logs the active backend's reads and `adam`'s updates, in order, while `body` runs. */
async function logged<T>(adam: Adam, body: () => Promise<T>): Promise<{ events: string[]; out: T }> {
  const backend = tf.backend() as unknown as Record<string, (...a: unknown[]) => unknown>;
  const events: string[] = [];
  const wrap = (name: string) => {
    const own = Object.prototype.hasOwnProperty.call(backend, name);
    const original = backend[name]!;
    backend[name] = (...a: unknown[]) => (events.push(name), original.apply(backend, a));
    return () => (own ? (backend[name] = original) : delete backend[name]);
  };
  const undo = [wrap('read'), wrap('readSync')];
  const apply = adam.apply;
  adam.apply = (...a) => (events.push('apply'), apply.apply(adam, a));
  try {
    return { events, out: await body() };
  } finally {
    undo.forEach((u) => u());
    adam.apply = apply;
  }
}

test('webgpu: the update is dispatched before anything is read back; wasm reads first, as before', async (t) => {
  if (!(await useWebgpu(t))) return;
  assert.equal(computesAsynchronously(), true);
  for (const headGradNorms of [false, true]) {
    const model = new Transformer(config, undefined, 3);
    const adam = new Adam();
    const { events, out } = await logged(adam, () => trainStep(model, adam, TOY_BATCH, { ...opts, headGradNorms }));
    const firstRead = events.findIndex((e) => e !== 'apply');
    assert.ok(firstRead > events.indexOf('apply') && events.includes('apply'), `events: ${events.join(', ')}`);
    assert.equal(out.applied, true);
    assert.equal(out.headGradNorms?.length, headGradNorms ? 3 * config.heads : undefined);
    assert.equal(adam.step, 1);
    model.dispose();
    adam.dispose();
  }
  await initBackend('wasm');
  assert.equal(computesAsynchronously(), false);
  const model = new Transformer(config, undefined, 3);
  const adam = new Adam();
  const { events, out } = await logged(adam, () => trainStep(model, adam, TOY_BATCH, opts));
  assert.ok(out.applied && Number.isFinite(out.loss), `loss ${out.loss}`);
  assert.equal(adam.step, 1);
  assert.ok(events.indexOf('apply') > 0, `wasm reads the loss before its update: ${events.join(', ')}`);
  model.dispose();
  adam.dispose();
});

test('webgpu: a finite step gives cpu’s loss, weights and Adam moments (two steps, clipping active)', async (t) => {
  const run = async () => {
    const model = new Transformer(config, undefined, 5);
    const adam = new Adam();
    const first = await trainStep(model, adam, TOY_BATCH, opts);
    const second = await trainStep(model, adam, TOY_BATCH, opts);
    const after = await snapshot(model, adam);
    model.dispose();
    adam.dispose();
    return { first, second, after, t: adam.step };
  };
  await initBackend('cpu');
  const want = await run();
  assert.ok(want.first.gradNorm > opts.clipNorm!, 'clipping is active');
  if (!(await useWebgpu(t))) return;
  const got = await run();
  assert.ok(got.first.applied && got.second.applied);
  assert.equal(got.t, 2);
  for (const k of ['first', 'second'] as const) {
    assert.ok(Math.abs(got[k].loss - want[k].loss) <= 1e-4 * want[k].loss, `${k} loss ${got[k].loss}, ${want[k].loss}`);
    assert.ok(Math.abs(got[k].nll - want[k].nll) <= 1e-4 * want[k].nll, `${k} nll ${got[k].nll}, ${want[k].nll}`);
  }
  const w = worstByName(got.after, want.after, config.d_model);
  assert.ok(w.error <= 1e-4, `${w.at}: relative error ${w.error}`);
});

test('webgpu: a non-finite step changes no weight or moment, is not counted, and the next step is as without it', async (t) => {
  if (!(await useWebgpu(t))) return;
  // A NaN in one bias of the output layer: the loss is NaN (and every gradient).
  const nanBias = (v: tf.Variable) => tf.where(tf.equal(tf.range(0, v.size), 4), NaN, v);
  // Logits of order 1e30 (weights unshared): the loss stays finite, the gradient's squares overflow.
  const hugeWeight = (v: tf.Variable) => tf.mul(v, 1e30);
  const cases = [
    { what: 'NaN loss', param: 'generator.bias', poison: nanBias, share_embeddings: true, finiteLoss: false },
    {
      what: 'gradient overflow',
      param: 'generator.weight',
      poison: hugeWeight,
      share_embeddings: false,
      finiteLoss: true,
    },
  ];
  for (const { what, param, poison, share_embeddings, finiteLoss } of cases) {
    const c = { ...config, share_embeddings };
    // Reference: two finite steps.
    const ref = new Transformer(c, undefined, 7);
    const refAdam = new Adam();
    for (let i = 0; i < 2; i++) await trainStep(ref, refAdam, TOY_BATCH, opts);
    const want = await snapshot(ref, refAdam);
    // The same with a poisoned step between them.
    const model = new Transformer(c, undefined, 7);
    const adam = new Adam();
    await trainStep(model, adam, TOY_BATCH, opts);
    const v = model.params.get(param)!;
    const kept = tf.keep(tf.clone(v));
    v.assign(tf.tidy(() => poison(v)));
    const before = await snapshot(model, adam);
    const bad = await trainStep(model, adam, TOY_BATCH, opts);
    assert.equal(bad.applied, false, `${what}: applied`);
    assert.equal(Number.isFinite(bad.loss), finiteLoss, `${what}: loss ${bad.loss}`);
    assert.ok(!Number.isFinite(bad.gradNorm), `${what}: gradient norm ${bad.gradNorm}`);
    assert.equal(bad.headGradNorms?.length, 3 * c.heads, `${what}: per-head norms of a step not applied`);
    assert.equal(adam.step, 1, `${what}: Adam's t counted the step not applied`);
    const after = await snapshot(model, adam);
    for (const [name, x] of before)
      assert.ok(
        x.every((b, i) => Object.is(b, after.get(name)![i])),
        `${what}: ${name} changed on a step not applied`,
      );
    v.assign(kept);
    kept.dispose();
    const next = await trainStep(model, adam, TOY_BATCH, opts);
    assert.ok(next.applied);
    const w = worstByName(await snapshot(model, adam), want, config.d_model);
    assert.ok(w.error <= 1e-6, `${what}: the next step is not the reference's second: ${w.at} off by ${w.error}`);
    for (const m of [ref, model]) m.dispose();
    for (const a of [refAdam, adam]) a.dispose();
  }
});
