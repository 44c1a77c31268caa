/**
 * `--accumulate N` (train/accumulate.ts): a step over a batch split into N micro-batches, each loss
 * normalised by the whole batch's target tokens, is the step of the whole batch: the same loss, the
 * same gradient Adam receives (to 1e-5: the micro-batches are trimmed to their own widths, so sums
 * round differently) and the same weights after two steps (the second step's Adam sees the scale of
 * the first gradient, which the first step's m/√v does not). On every test backend; the tokens a
 * step reports are all its micro-batches' (hand-counted).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { microBatches } from '../../src/engine/train/accumulate';
import { trainStep } from '../../src/engine/train/step';
import { RecordingAdam, relativeError } from '../engine/stepFixture';
import { smallConfig, testBackends } from '../helpers';

/** Five pairs of different lengths, padded (0) to the longest; BOS 1, EOS 2. */
const BATCH = {
  src: [
    [5, 6, 7, 8, 2],
    [9, 2, 0, 0, 0],
    [4, 3, 2, 0, 0],
    [7, 7, 9, 2, 0],
    [10, 2, 0, 0, 0],
  ],
  tgtIn: [
    [1, 8, 7, 6, 5],
    [1, 9, 0, 0, 0],
    [1, 3, 4, 0, 0],
    [1, 9, 7, 7, 0],
    [1, 10, 0, 0, 0],
  ],
  tgtOut: [
    [8, 7, 6, 5, 2],
    [9, 2, 0, 0, 0],
    [3, 4, 2, 0, 0],
    [9, 7, 7, 2, 0],
    [10, 2, 0, 0, 0],
  ],
};
const D = smallConfig().d_model;
const TARGET_TOKENS = 5 + 2 + 3 + 4 + 2; // non-pad tgtOut ids, counted by hand

test('micro-batches: consecutive rows, nearly equal counts, each trimmed to its own width', () => {
  const parts = microBatches(BATCH, 2, 0);
  assert.deepEqual(
    parts.map((p) => p.src),
    [
      [
        [5, 6, 7, 8, 2],
        [9, 2, 0, 0, 0],
      ],
      [
        [4, 3, 2, 0],
        [7, 7, 9, 2],
        [10, 2, 0, 0],
      ],
    ],
  );
  assert.deepEqual(parts[1]!.tgtOut, [
    [3, 4, 2, 0],
    [9, 7, 7, 2],
    [10, 2, 0, 0],
  ]);
  assert.equal(microBatches(BATCH, 9, 0).length, 5, 'no more parts than rows');
  assert.deepEqual(microBatches(BATCH, 1, 0), [BATCH]);
});

test('accumulating N micro-batches gives the step of the whole batch', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const run = async (accumulate: number) => {
        const model = new Transformer(smallConfig(), undefined, 7);
        const adam = new RecordingAdam(true);
        const named = namedVariables(model.params);
        let passes = 0; // forward passes: one a micro-batch
        const logits = model.logits.bind(model);
        model.logits = (...args) => (passes++, logits(...args));
        const opts = { lr: 3e-3, labelSmoothing: 0.1, clipNorm: 0, accumulate };
        try {
          const first = await trainStep(model, adam, BATCH, opts);
          const grads = await adam.take(named);
          const second = await trainStep(model, adam, BATCH, opts);
          await adam.take(named);
          const weights = new Map<string, Float32Array>();
          for (const [name, v] of named) weights.set(name, (await v.data()) as Float32Array);
          return { first, second, grads, weights, t: adam.step, passes };
        } finally {
          model.dispose();
          adam.dispose();
        }
      };
      const whole = await run(1);
      assert.equal(whole.first.tokens, TARGET_TOKENS);
      for (const n of [2, 5]) {
        const acc = await run(n);
        assert.equal(acc.first.tokens, TARGET_TOKENS, `accumulate ${n}: tokens of every micro-batch`);
        assert.equal(acc.t, 2, 'one Adam step a batch');
        assert.equal(acc.passes, 2 * n, `${n} forward passes a step`);
        assert.ok(Math.abs(acc.first.loss - whole.first.loss) <= 1e-5 * whole.first.loss, `loss, accumulate ${n}`);
        assert.ok(Math.abs(acc.first.gradNorm - whole.first.gradNorm) <= 1e-5 * whole.first.gradNorm, '‖g‖');
        for (const [name, g] of whole.grads) {
          const e = relativeError(acc.grads.get(name)!, g);
          assert.ok(e <= 1e-5, `accumulate ${n}: ∂L/∂${name} relative error ${e}`);
        }
        for (const [name, w] of whole.weights) {
          // The key bias (in_proj_bias[d, 2d)) left out: softmax does not see it, so its gradient is rounding
          // noise, which Adam's g/√v turns into ±lr either way (kernelHelpers.ts worstByName).
          const keyBias = (i: number) => name.includes('in_proj_bias') && i >= D && i < 2 * D;
          const off = Array.from(w, (x, i) => (keyBias(i) ? 0 : Math.abs(x - acc.weights.get(name)![i]!)));
          const worst = Math.max(...off);
          assert.ok(worst <= 1e-5, `accumulate ${n}: ${name} after two steps, off by ${worst}`);
        }
      }
    });
  }
});
