/**
 * One training step by hand-checkable pieces: label smoothing as the Annotated Transformer defines
 * it, Adam's first update, and the same two steps on every backend (backends against each other:
 * gradients.test.ts checks the step against PyTorch, clipping.test.ts clipping by its definition).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { labelSmoothedLoss } from '../../src/engine/train/loss';
import { trainStep } from '../../src/engine/train/step';
import { maxAbsDiff, smallConfig, testBackends, TOY_BATCH } from '../helpers';

test('label smoothing: ε/(V−2) off-target, 1−ε on target, pad column and pad rows excluded', async () => {
  await initBackend('cpu');
  // V = 5, pad = 0, ε = 0.4 → q = [0, 0.6, 0.1·…]: on target 0.6, each of the 3 others 0.4/3.
  // Row 0, target 1, p uniform (log p = −ln 5): KL = Σ q log q − Σ q log p
  //   = 0.6·ln 0.6 + 0.4·ln(0.4/3) + ln 5 = −0.306495 − 0.805966 + 1.609438 = 0.496977
  // Row 1 has target = pad: left out. Loss = 0.496977 / 1 token. NLL = ln 5 = 1.609438.
  const logp = tf.log(tf.fill([2, 5], 0.2)) as tf.Tensor2D;
  const r = labelSmoothedLoss(logp, tf.tensor1d([1, 0], 'int32'), 0, 0.4, 1);
  assert.ok(Math.abs((await r.loss.data())[0] - 0.496977) < 1e-5);
  assert.ok(Math.abs((await r.nll.data())[0] - 1.609438) < 1e-5);
  // A peaked p that puts all non-pad mass as q does gives KL = 0.
  const q = tf.log(tf.tensor2d([[1e-30, 0.6, 0.4 / 3, 0.4 / 3, 0.4 / 3]])) as tf.Tensor2D;
  assert.ok(Math.abs((await labelSmoothedLoss(q, tf.tensor1d([1], 'int32'), 0, 0.4, 1).loss.data())[0]) < 1e-5);
});

test("Adam's first update moves every weight by lr·sign(g) (bias-corrected m/√v = g/|g|)", async () => {
  await initBackend('cpu');
  const p = tf.variable(tf.tensor1d([1, 1, 1]), true, 'p');
  const adam = new Adam();
  adam.apply([p], { p: tf.tensor1d([0.5, -2, 1e-3]) }, 0.01);
  // m̂ = g, v̂ = g², update = g / (|g| + 1e-9) ≈ sign(g)
  assert.ok(maxAbsDiff(await p.array(), [0.99, 1.01, 0.99]) < 1e-6);
  adam.dispose();
});

test('a training step gives the same loss, gradient norm and weights on every backend', async (t) => {
  const config = smallConfig({ heads: 4, encoder_layers: 2, decoder_layers: 2, src_vocab: 20, tgt_vocab: 20 });
  const batch = TOY_BATCH;
  const run = async (backend: string) => {
    await initBackend(backend);
    const model = new Transformer(config, undefined, 3);
    const adam = new Adam();
    const r = await trainStep(model, adam, batch, { lr: 1e-2, labelSmoothing: 0.1, clipNorm: 0.5 });
    const second = await trainStep(model, adam, batch, { lr: 1e-2, labelSmoothing: 0.1, clipNorm: 0.5 });
    const w = await model.params.get('decoder.layers.1.linear2.weight')!.array();
    model.dispose();
    adam.dispose();
    return { r, second, w };
  };
  const ref = await run('cpu');
  assert.ok(ref.second.loss < ref.r.loss, 'the loss falls on a repeated batch');
  assert.ok(ref.r.gradNorm > 0.5, 'the clip threshold is active in this test (its effect: clipping.test.ts)');
  for (const backend of (await testBackends()).filter((b) => b !== 'cpu')) {
    await t.test(backend, async () => {
      const got = await run(backend);
      assert.ok(Math.abs(got.r.loss - ref.r.loss) < 1e-4, `loss ${got.r.loss} vs ${ref.r.loss}`);
      assert.ok(
        Math.abs(got.r.gradNorm - ref.r.gradNorm) < 1e-3 * ref.r.gradNorm,
        `grad norm ${got.r.gradNorm} vs ${ref.r.gradNorm}`,
      );
      assert.ok(
        Math.abs(got.second.loss - ref.second.loss) < 1e-4,
        `second loss ${got.second.loss} vs ${ref.second.loss}`,
      );
      assert.ok(maxAbsDiff(got.w, ref.w) < 1e-4, 'weights after two steps');
    });
  }
});
