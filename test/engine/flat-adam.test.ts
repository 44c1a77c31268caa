/**
 * The flat Adam (train/flatAdam.ts, issue 30 item 3) against the per-parameter one (train/adam.ts),
 * bit for bit, on cpu, wasm and webgpu (Dawn on lavapipe): five updates of fixed gradients with a
 * different rate each, the third clipped by a scale, the last gated by ok = false with a NaN in its
 * gradients. On webgpu an update is one dispatch (ADAM_UPDATE_FLAT; the gathers and the scatter are
 * copies), counted at tfjs's recordAndSubmit. Its state reads as adam.ts's (a checkpoint of either
 * resumes in the other), keep() puts back what an update changed, and neither leaves a tensor behind.
 * A parameter assigned between updates (as a resume assigns them) is read anew, not from the state.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { ADAM_UPDATE_FLAT, FLAT_GATHER, FLAT_SCATTER } from '../../src/engine/backend/fusedKernels';
import { SUM_OF_SQUARES } from '../../src/engine/backend/trainingOps';
import { Transformer } from '../../src/engine/model/transformer';
import { namedVariables } from '../../src/engine/model/params';
import { Adam, type AdamState, PAPER_ADAM } from '../../src/engine/train/adam';
import { FlatAdam, groupsOf } from '../../src/engine/train/flatAdam';
import { ADAM_ENV, createOptimizer, type Optimizer } from '../../src/engine/train/optimizer';
import { trainStep } from '../../src/engine/train/step';
import { smallConfig, TOY_BATCH } from '../helpers';
import { lcgValues, leakFree, onBackend, recordingKernels, useWebgpu } from './kernelHelpers';

/** Shapes of odd sizes (none a multiple of a workgroup), a scalar-like one and an empty one among them. */
const SHAPES = [[3, 5], [7], [1], [0, 4], [2, 3, 11]];
const LRS = [1e-3, 3e-3, 2e-3, 5e-4, 1e-3];
const SCALE_AT = 2;
const STEPS = LRS.length;

let made = 0;
const variables = (): tf.Variable[] =>
  SHAPES.map((s, i) => {
    const size = s.reduce((a, b) => a * b, 1);
    return tf.tidy(() => tf.variable(tf.tensor(lcgValues(size, 7 + i), s), true, `flatAdamTest${i}_${made++}`));
  });
const named = (vars: tf.Variable[]) => vars.map((p, i) => [`p${i}`, p] as [string, tf.Variable]);

/** Update `step`'s gradients (a NaN in the last one's first gradient, which ok = false gates). */
function gradients(vars: tf.Variable[], step: number): tf.NamedTensorMap {
  const grads: tf.NamedTensorMap = {};
  vars.forEach((p, i) => {
    const g = lcgValues(p.size, 100 * step + i, 10 ** -(i % 3));
    if (step === STEPS - 1 && i === 0) g[1] = NaN;
    grads[p.name] = tf.tensor(g, p.shape);
  });
  return grads;
}

/** Parameters then moments (state()'s order) after `steps` updates by `adam`, as plain arrays. */
async function run(adam: Optimizer, vars = variables(), from = 0, steps = STEPS): Promise<Float32Array[]> {
  for (let step = from; step < steps; step++) {
    // Before update 4 a parameter is assigned elsewhere (as a resume would): the flat state's θ is stale.
    if (step === 3) {
      const half = tf.mul(vars[4]!, 0.5);
      vars[4]!.assign(half);
      half.dispose();
    }
    const grads = gradients(vars, step);
    const ok = step === STEPS - 1 ? tf.scalar(false, 'bool') : undefined;
    const scale = step === SCALE_AT ? tf.scalar(0.37) : undefined;
    adam.apply(vars, grads, LRS[step]!, ok, scale);
    tf.dispose([...Object.values(grads), ...(ok ? [ok] : []), ...(scale ? [scale] : [])]);
  }
  const state = await adam.state(named(vars));
  const out = [...(await Promise.all(vars.map((p) => p.data() as Promise<Float32Array>))), ...stateArrays(state)];
  adam.dispose();
  tf.dispose(vars);
  return out;
}
const stateArrays = (state: AdamState) => [...state.values()].map((s) => s.data);

/** Both layouts' results, which must be the same bits (NaN and −0 included: deepStrictEqual uses Object.is). */
async function bothLayouts(most?: number): Promise<void> {
  const perParameter = await run(new Adam());
  let flat: Float32Array[] = [];
  await leakFree('the flat Adam', async () => void (flat = await run(new FlatAdam(PAPER_ADAM, most))));
  assert.equal(flat.length, SHAPES.length * 3);
  flat.forEach((x, i) => assert.deepStrictEqual(x, perParameter[i], `array ${i} of parameters, then m and v`));
  // The gate held: the last update changed nothing, though its gradient had a NaN.
  assert.ok(perParameter.every((x) => x.every(Number.isFinite)));
}

test('flat Adam on cpu: five updates (one clipped, the last gated) equal the per-parameter Adam’s bit for bit', async () => {
  await initBackend('cpu');
  assert.equal(tf.getKernel(ADAM_UPDATE_FLAT, 'cpu'), undefined, 'cpu takes concat, split and adam.ts’s ops');
  await bothLayouts();
});

test('flat Adam in groups of at most 20 values (as a GPU’s buffer limit cuts `big`) equals it too', async () => {
  await initBackend('cpu');
  const vars = variables();
  // sizes 15, 7, 1, 0, 66: 15 + 7 > 20 starts a group, 8 + 66 another; 66 alone exceeds the bound
  assert.deepEqual(
    groupsOf(vars, 20).map((g) => g.vars.map((p) => p.size)),
    [[15], [7, 1, 0], [66]],
  );
  assert.deepEqual(
    groupsOf(vars).map((g) => g.n),
    [89],
  );
  tf.dispose(vars);
  await bothLayouts(20);
});

test('flat Adam on wasm (its native update on the flat vectors) equals the per-parameter Adam’s bit for bit', async () => {
  await initBackend('wasm');
  await bothLayouts();
});

/** Compute dispatches recorded while f runs (tfjs-backend-webgpu's recordAndSubmit). */
async function dispatches(f: () => void): Promise<number> {
  const backend = tf.backend() as unknown as { recordAndSubmit: (...a: unknown[]) => unknown };
  const original = backend.recordAndSubmit;
  let n = 0;
  backend.recordAndSubmit = function (this: unknown, ...a: unknown[]) {
    n++;
    return original.apply(this, a);
  };
  try {
    f();
  } finally {
    backend.recordAndSubmit = original;
  }
  return n;
}

test('flat Adam on webgpu: one dispatch an update, and the per-parameter Adam’s bits', async (t) => {
  if (!(await useWebgpu(t, [ADAM_UPDATE_FLAT, FLAT_GATHER, FLAT_SCATTER]))) return;
  await bothLayouts();
  const vars = variables();
  const adam = new FlatAdam();
  const apply = (step: number) => {
    const grads = gradients(vars, step);
    const counted = dispatches(() => adam.apply(vars, grads, LRS[step]!));
    return counted.finally(() => tf.dispose(Object.values(grads)));
  };
  await apply(0); // the first update also fills the zero state
  assert.equal(await apply(1), 1, 'the second update: ADAM_UPDATE_FLAT alone');
  await bothLayouts(20);
  const grouped = new FlatAdam(PAPER_ADAM, 20);
  const step = async () => {
    const grads = gradients(vars, 2);
    const n = await dispatches(() => grouped.apply(vars, grads, 1e-3));
    tf.dispose(Object.values(grads));
    return n;
  };
  await step();
  assert.equal(await step(), 3, 'three groups: three dispatches');
  grouped.dispose();
  const perParameter = new Adam();
  const grads = gradients(vars, 1);
  perParameter.apply(vars, grads, 1e-3); // the first also fills each parameter's zero moments
  // adam.ts: three dispatches a parameter (θ', m', v'), the empty one none
  assert.equal(await dispatches(() => perParameter.apply(vars, grads, 1e-3)), 3 * (SHAPES.length - 1));
  tf.dispose(Object.values(grads));
  perParameter.dispose();
  adam.dispose();
  tf.dispose(vars);
  await initBackend('cpu');
});

test('a flat state reads as the per-parameter one, and either resumes the other, bit for bit', async () => {
  for (const backend of ['cpu', 'wasm'] as const)
    await onBackend(
      backend,
      async () => {
        const whole = await run(new FlatAdam());
        for (const [first, second] of [
          [new FlatAdam(), new Adam()],
          [new Adam(), new FlatAdam()],
        ] as const) {
          const vars = variables();
          await run(
            first,
            vars.map((p) => tf.variable(p, true, `${p.name}_copy`)),
            0,
            0,
          ); // nothing: empty state
          for (let step = 0; step < 2; step++) {
            const grads = gradients(vars, step);
            first.apply(vars, grads, LRS[step]!, undefined, step === SCALE_AT ? tf.scalar(0.37) : undefined);
            tf.dispose(Object.values(grads));
          }
          second.restore(named(vars), first.step, await first.state(named(vars)), 'the test');
          first.dispose();
          const resumed = await run(second, vars, 2);
          resumed.forEach((x, i) => assert.deepStrictEqual(x, whole[i], `${backend}: array ${i}`));
        }
      },
      'cpu',
    );
});

test('flat Adam: its state outlives the caller’s tidy, and keep() puts back what an update changed', async () => {
  await initBackend('cpu');
  const vars = variables();
  const adam = new FlatAdam();
  const update = (step: number) => {
    const grads = gradients(vars, step);
    tf.tidy(() => adam.apply(vars, grads, LRS[step]!)); // in a tidy, as train/step.ts applies it
    tf.dispose(Object.values(grads));
  };
  update(0);
  const before = [...(await Promise.all(vars.map((p) => p.data()))), ...stateArrays(await adam.state(named(vars)))];
  const kept = adam.keep(vars);
  update(1);
  kept.restore();
  kept.dispose();
  assert.equal(adam.step, 1);
  const after = [...(await Promise.all(vars.map((p) => p.data()))), ...stateArrays(await adam.state(named(vars)))];
  after.forEach((x, i) => assert.deepStrictEqual(x, before[i], `array ${i}`));
  adam.dispose();
  tf.dispose(vars);
});

test('flat Adam refuses a missing gradient and other parameters, naming them', async () => {
  await initBackend('cpu');
  const vars = variables();
  const adam = new FlatAdam();
  const grads = gradients(vars, 0);
  const some = { ...grads };
  delete some[vars[3]!.name];
  assert.throws(() => adam.apply(vars, some, 1e-3), new RegExp(`no gradient for "${vars[3]!.name}"`));
  assert.equal(adam.step, 0, 'a refused update does not count');
  adam.apply(vars, grads, 1e-3);
  assert.throws(
    () => adam.apply(vars.slice(1), grads, 1e-3),
    /parameters differ from those its state was laid out for/,
  );
  tf.dispose(Object.values(grads));
  adam.dispose();
  tf.dispose(vars);
});

test(`${ADAM_ENV} chooses the layout; the backend’s default is flat on webgpu only`, async (t) => {
  await initBackend('cpu');
  assert.ok(createOptimizer({}) instanceof Adam);
  assert.ok(createOptimizer({ [ADAM_ENV]: 'flat' }) instanceof FlatAdam);
  assert.throws(() => createOptimizer({ [ADAM_ENV]: 'flatter' }), /ATTENTION_DEBUGGER_ADAM: unknown value "flatter"/);
  if (!(await useWebgpu(t))) return;
  assert.ok(createOptimizer({}) instanceof FlatAdam);
  assert.ok(createOptimizer({ [ADAM_ENV]: 'per-parameter' }) instanceof Adam);
  await initBackend('cpu');
});

test('a webgpu step lays its gradients end to end once, for the norm and for the flat update', async (t) => {
  if (!(await useWebgpu(t, [ADAM_UPDATE_FLAT, FLAT_GATHER, SUM_OF_SQUARES]))) return;
  const model = new Transformer(smallConfig(), undefined, 5);
  const params = namedVariables(model.params).map(([, p]) => p);
  // Groups of at most a third of the values: three or more vectors, so that each is seen.
  const most = Math.ceil(params.reduce((a, p) => a + p.size, 0) / 3);
  const adam = new FlatAdam(PAPER_ADAM, most);
  const step = () => trainStep(model, adam, TOY_BATCH, { lr: 1e-3, clipNorm: 1, labelSmoothing: 0.1 });
  const first = (await recordingKernels([FLAT_GATHER, SUM_OF_SQUARES], step)).inputs;
  const groups = groupsOf(params, most).length;
  assert.ok(groups >= 3, `${groups} groups`);
  // The first step gathers θ and the gradients, a vector each a group; the norm sums the latter.
  assert.equal(first.get(FLAT_GATHER)!.length, 2 * groups);
  assert.deepEqual(first.get(SUM_OF_SQUARES), [groups]);
  // Later steps read θ from the state: the gradients' gathers alone, which the update reuses.
  const second = (await recordingKernels([FLAT_GATHER, SUM_OF_SQUARES], step)).inputs;
  assert.equal(second.get(FLAT_GATHER)!.length, groups, 'gradients gathered again for the update');
  assert.deepEqual(second.get(SUM_OF_SQUARES), [groups]);
  adam.dispose();
  model.dispose();
  await initBackend('cpu');
});

test('per-head gradient norms read from the laid gradients equal the per-parameter step’s', async (t) => {
  if (!(await useWebgpu(t, [ADAM_UPDATE_FLAT, FLAT_GATHER]))) return;
  // Three steps unclipped (both layouts' updates are then the same bits), the third a telemetry step.
  const norms = async (adam: Optimizer) => {
    const model = new Transformer(smallConfig(), undefined, 5);
    let r;
    for (let i = 0; i < 3; i++)
      r = await trainStep(model, adam, TOY_BATCH, { lr: 1e-3, labelSmoothing: 0.1, headGradNorms: i === 2 });
    adam.dispose();
    model.dispose();
    return [...r!.headGradNorms!, ...r!.headMatrixGradNorms!];
  };
  const flat = await norms(new FlatAdam(PAPER_ADAM, 5000)); // several groups
  const perParameter = await norms(new Adam());
  assert.equal(flat.length, perParameter.length);
  assert.ok(flat.every((x) => x > 0));
  flat.forEach((x, i) => assert.ok(Math.abs(x - perParameter[i]!) <= 1e-6 * perParameter[i]!, `norm ${i}: ${x}`));
  await initBackend('cpu');
});
