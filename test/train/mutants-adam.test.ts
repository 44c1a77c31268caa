/**
 * train/adam.ts by its definition (Kingma & Ba, as the file's comment writes it), worked by hand with
 * β1 = ½, β2 = ¾, ε = ¼ so that every term shows: two updates in a row, a parameter without a
 * gradient, the moments saved under PyTorch's names and restored (and the errors restoring refuses
 * with), dispose, and on wasm the fused kernel doing the work. On cpu (tfjs ops) and wasm (native
 * kernel). Found by mutants that survived train-step.test.ts and gradients.test.ts (test/README.md,
 * "Mutation score").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { ADAM_UPDATE, hasFusedKernel } from '../../src/engine/backend/fusedKernels';
import { Adam } from '../../src/engine/train/adam';
import { maxAbsDiff } from '../helpers';

const BACKENDS = ['cpu', 'wasm'] as const;
const OPTS = { beta1: 0.5, beta2: 0.75, epsilon: 0.25 };
const LR = 0.1;

// p = [1, −1]; g1 = [2, −0.5], g2 = [3, 0.75]. m ← ½m + ½g, v ← ¾v + ¼g², c1 = 1 − ½^t, c2 = 1 − ¾^t,
// p ← p − lr·(m/c1)/(√(v/c2) + ε):
//   t = 1: m = [1, −0.25], v = [1, 0.0625]; m̂ = [2, −0.5], v̂ = [4, 0.25]; update [2/2.25, −0.5/0.75]
//          p = [1 − 0.0888889, −1 + 0.0666667] = [0.9111111, −0.9333333]
//   t = 2: m = [2, 0.25], v = [3, 0.1875]; c1 = ¾, c2 = 7/16; m̂ = [8/3, 1/3], v̂ = [48/7, 3/7];
//          update [2.6666667/(2.6186147 + ¼), 0.3333333/(0.6546537 + ¼)] = [0.9296009, 0.3684651]
//          p = [0.8181510, −0.9701798]
const P0 = [1, -1];
const G1 = [2, -0.5];
const G2 = [3, 0.75];
const M1 = [1, -0.25];
const V1 = [1, 0.0625];
const P1 = [0.9111111, -0.9333333];
const M2 = [2, 0.25];
const V2 = [3, 0.1875];
const P2 = [0.818151, -0.9701798];

test('two updates in a row give the hand-worked weights and moments, on cpu and wasm', async (t) => {
  for (const backend of BACKENDS) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const p = tf.variable(tf.tensor1d(P0), true, 'mutants.adam.p');
      const idle = tf.variable(tf.tensor1d([5, 6]), true, 'mutants.adam.idle'); // no gradient: untouched
      const adam = new Adam(OPTS);
      const g1 = tf.tensor1d(G1);
      const known = new Set(Object.keys(tf.engine().registeredVariables));
      adam.apply([p, idle], { [p.name]: g1 }, LR);
      assert.equal(adam.step, 1);
      const moments = Object.values(tf.engine().registeredVariables).filter((v) => !known.has(v.name));
      assert.equal(moments.length, 2, 'm and v of p');
      assert.ok(
        moments.every((v) => !v.trainable),
        'the moments are not trained',
      );
      assert.ok(maxAbsDiff(await p.array(), P1) < 1e-6, `after 1: ${await p.array()}`);
      const state1 = await adam.state([
        ['w', p],
        ['idle', idle],
      ]);
      assert.deepEqual([...state1.keys()], ['w.exp_avg', 'w.exp_avg_sq'], 'only a parameter with moments');
      assert.ok(maxAbsDiff([...state1.get('w.exp_avg')!.data], M1) < 1e-7);
      assert.ok(maxAbsDiff([...state1.get('w.exp_avg_sq')!.data], V1) < 1e-7);
      assert.deepEqual(state1.get('w.exp_avg')!.shape, [2]);
      const g2 = tf.tensor1d(G2);
      adam.apply([p, idle], { [p.name]: g2 }, LR);
      assert.equal(adam.step, 2);
      assert.ok(maxAbsDiff(await p.array(), P2) < 1e-6, `after 2: ${await p.array()}`);
      const state2 = await adam.state([['w', p]]);
      assert.ok(maxAbsDiff([...state2.get('w.exp_avg')!.data], M2) < 1e-6);
      assert.ok(maxAbsDiff([...state2.get('w.exp_avg_sq')!.data], V2) < 1e-6);
      assert.deepEqual(await idle.array(), [5, 6]);
      adam.dispose();
      tf.dispose([p, idle, g1, g2]);
    });
  }
});

test('restored moments and step continue where they were saved: the second update by hand', async (t) => {
  for (const backend of BACKENDS) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const p = tf.variable(tf.tensor1d(P1), true, 'mutants.adam.restored');
      const adam = new Adam(OPTS);
      const saved = new Map([
        ['w.exp_avg', { shape: [2], data: Float32Array.from(M1) }],
        ['w.exp_avg_sq', { shape: [2], data: Float32Array.from(V1) }],
      ]);
      adam.restore([['w', p]], 1, saved, 'saved.json');
      assert.equal(adam.step, 1);
      const g2 = tf.tensor1d(G2);
      adam.apply([p], { [p.name]: g2 }, LR);
      assert.equal(adam.step, 2);
      assert.ok(maxAbsDiff(await p.array(), P2) < 1e-6, `${await p.array()}`);
      adam.dispose();
      tf.dispose([p, g2]);
    });
  }
});

test('restore refuses missing moments and moments of another size, naming the source and the parameter', async () => {
  await initBackend('cpu');
  const p = tf.variable(tf.zeros([2, 3]), true, 'mutants.adam.refused');
  const adam = new Adam();
  const six = { shape: [2, 3], data: new Float32Array(6) };
  const five = { shape: [5], data: new Float32Array(5) };
  const restore = (entries: [string, typeof six][]) => () => adam.restore([['w', p]], 3, new Map(entries), 'opt.json');
  const missing = /^Error: opt\.json: no Adam moments for "w"$/;
  assert.throws(restore([]), missing);
  assert.throws(restore([['w.exp_avg', six]]), missing);
  assert.throws(restore([['w.exp_avg_sq', six]]), missing);
  const size = /^Error: opt\.json: Adam moments of "w" have 5 values, the parameter 6$/;
  assert.throws(
    restore([
      ['w.exp_avg', five],
      ['w.exp_avg_sq', six],
    ]),
    size,
  );
  assert.throws(
    restore([
      ['w.exp_avg', six],
      ['w.exp_avg_sq', five],
    ]),
    /^Error: opt\.json: Adam moments of "w" have 6 values, the parameter 6$/,
  );
  adam.dispose();
  p.dispose();
});

test('dispose frees both moments of every parameter and forgets them', async () => {
  await initBackend('cpu');
  const a = tf.variable(tf.zeros([2]), true, 'mutants.adam.a');
  const b = tf.variable(tf.zeros([3]), true, 'mutants.adam.b');
  const g = { [a.name]: tf.ones([2]), [b.name]: tf.ones([3]) };
  const before = tf.memory().numTensors;
  const adam = new Adam();
  adam.apply([a, b], g, 0.01);
  assert.equal(tf.memory().numTensors - before, 4, 'm and v of a and b');
  adam.dispose();
  assert.equal(tf.memory().numTensors, before);
  assert.equal(
    (
      await adam.state([
        ['a', a],
        ['b', b],
      ])
    ).size,
    0,
  );
  tf.dispose([a, b, ...Object.values(g)]);
});

test('on wasm an update is the one fused kernel per parameter, on cpu tfjs ops', async () => {
  for (const backend of BACKENDS) {
    await initBackend(backend);
    const p = tf.variable(tf.tensor1d(P0), true, `mutants.adam.fused.${backend}`);
    const g = tf.tensor1d(G1);
    const adam = new Adam(OPTS);
    const info = await tf.profile(() => adam.apply([p], { [p.name]: g }, LR));
    assert.equal(info.kernelNames.includes(ADAM_UPDATE), backend === 'wasm', `${backend}: ${info.kernelNames}`);
    assert.equal(hasFusedKernel(ADAM_UPDATE), backend === 'wasm');
    assert.ok(maxAbsDiff(await p.array(), P1) < 1e-6);
    adam.dispose();
    tf.dispose([p, g]);
  }
});
