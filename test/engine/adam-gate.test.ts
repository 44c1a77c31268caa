/**
 * Adam's device-side gate (train/adam.ts `apply(…, ok)`), on every backend and through each path (the
 * fused kernel on wasm and webgpu, tfjs ops on cpu): with ok false every parameter and moment keeps
 * its bits even when the gradient is NaN; with ok true the step is the ungated one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { Adam } from '../../src/engine/train/adam';
import { testBackends } from '../helpers';

/** The parameter and its two moments, as plain numbers. */
async function snapshot(p: tf.Variable, adam: Adam): Promise<number[][]> {
  const moments = [...(await adam.state([['w', p]])).values()].map((s) => Array.from(s.data));
  return [Array.from(await p.data()), ...moments];
}

test('a gated Adam step keeps every parameter and moment where ok is false, and is the plain step where true', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const run = async (gate: boolean | undefined, poison: boolean) => {
        const p = tf.variable(tf.tensor2d([0.5, -1, 2, 0.25, 3, -0.75], [2, 3]), true, `w_${backend}`);
        const adam = new Adam();
        adam.apply([p], { [p.name]: tf.tensor2d([0.1, -0.2, 0.3, 0.4, -0.5, 0.6], [2, 3]) }, 0.01);
        const before = await snapshot(p, adam);
        const g = poison
          ? tf.tensor2d([NaN, 1, Infinity, 0, 1, 2], [2, 3])
          : tf.tensor2d([0.2, 0.1, -0.3, 0, 1, 2], [2, 3]);
        const ok = gate === undefined ? undefined : tf.scalar(gate, 'bool');
        adam.apply([p], { [p.name]: g }, 0.01, ok);
        const after = await snapshot(p, adam);
        tf.dispose([p, g, ...(ok ? [ok] : [])]);
        adam.dispose();
        return { before, after, step: adam.step };
      };
      const held = await run(false, true);
      assert.deepEqual(held.after, held.before, 'a step gated off changes no parameter or moment, NaN gradient or not');
      const gated = await run(true, false);
      const plain = await run(undefined, false);
      assert.deepEqual(gated.after, plain.after, 'gated on, the step is the ungated one, bit for bit');
      assert.notDeepEqual(plain.after, plain.before);
    });
  }
});
