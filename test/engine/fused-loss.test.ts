/**
 * The training loss from logits (train/loss.ts smoothedLossFromLogits): the hand-worked numbers of
 * the label-smoothing test in train-step.test.ts, its written-down gradient worked by hand, and on
 * random logits the same value and gradient as autodiff through logSoftmax + labelSmoothedLoss.
 * On wasm it runs the native kernel (backend/wasm/nativeOps.ts); on the others, tfjs ops.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { hasFusedKernel, SMOOTHED_CROSS_ENTROPY } from '../../src/engine/backend/fusedKernels';
import { Transformer } from '../../src/engine/model/transformer';
import { validationLoss } from '../../src/engine/train/evaluate';
import { labelSmoothedLoss, smoothedLossFromLogits } from '../../src/engine/train/loss';
import { maxAbsDiff, smallConfig, testBackends, TOY_BATCH } from '../helpers';

test('uniform logits: KL 0.496977, NLL ln 5, gradient p − q on the kept row and 0 on the pad row', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      // V = 5, pad 0, ε 0.4: q = [0, 0.6, 0.4/3, 0.4/3, 0.4/3]; p = 0.2 everywhere (see train-step.test.ts).
      const logits = tf.zeros([2, 5]) as tf.Tensor2D;
      const targets = tf.tensor1d([1, 0], 'int32');
      let nll: tf.Scalar | undefined;
      const { value, grad } = tf.valueAndGrad((x: tf.Tensor) => {
        const r = smoothedLossFromLogits(x as tf.Tensor2D, targets, 0, 0.4, 1);
        nll = r.nll;
        return r.loss;
      })(logits);
      assert.ok(Math.abs((await value.data())[0] - 0.496977) < 1e-5, `loss ${(await value.data())[0]}`);
      assert.ok(Math.abs((await nll!.data())[0] - 1.609438) < 1e-5);
      const q = 0.4 / 3;
      assert.ok(
        maxAbsDiff(await grad.array(), [
          [0.2, 0.2 - 0.6, 0.2 - q, 0.2 - q, 0.2 - q],
          [0, 0, 0, 0, 0],
        ]) < 1e-6,
      );
      tf.dispose([logits, targets, value, grad, nll!]);
    });
  }
});

test('random logits: the value and gradient of autodiff through logSoftmax and labelSmoothedLoss', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      if (backend === 'wasm') assert.ok(hasFusedKernel(SMOOTHED_CROSS_ENTROPY), 'wasm runs the native kernel');
      const v = 37;
      const logits = tf.mul(tf.randomNormal([9, v], 0, 1, 'float32', 7), 3) as tf.Tensor2D;
      const targets = tf.tensor1d([4, 0, 36, 1, 2, 0, 17, 3, 9], 'int32'); // two pad rows
      const tokens = 7;
      const fused = tf.valueAndGrad((x: tf.Tensor) => {
        const r = smoothedLossFromLogits(x as tf.Tensor2D, targets, 0, 0.1, tokens);
        r.nll.dispose();
        return r.loss;
      })(logits);
      const reference = tf.valueAndGrad(
        (x: tf.Tensor) => labelSmoothedLoss(tf.logSoftmax(x) as tf.Tensor2D, targets, 0, 0.1, tokens).loss,
      )(logits);
      const [a, b] = [(await fused.value.data())[0], (await reference.value.data())[0]];
      assert.ok(Math.abs(a - b) < 1e-5 * Math.max(1, b), `loss ${a} vs ${b}`);
      assert.ok(maxAbsDiff(await fused.grad.array(), await reference.grad.array()) < 1e-6, 'gradient');
      tf.dispose([logits, targets, fused.value, fused.grad, reference.value, reference.grad]);
    });
  }
});

test('validation loss (from logits) equals labelSmoothedLoss over the model’s log-probabilities', async (t) => {
  const config = smallConfig({ heads: 4, src_vocab: 20, tgt_vocab: 20, dropout: 0.1 });
  const batch = TOY_BATCH;
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const model = new Transformer(config, undefined, 5);
      const got = await validationLoss(model, [batch], 0.1);
      const [lossT, nllT] = tf.tidy(() => {
        const logProbs = model.forward(
          tf.tensor2d(batch.src, undefined, 'int32'),
          tf.tensor2d(batch.tgtIn, undefined, 'int32'),
        ); // eval mode: no dropout
        const r = labelSmoothedLoss(
          tf.reshape(logProbs, [-1, 20]) as tf.Tensor2D,
          tf.tensor1d(batch.tgtOut.flat(), 'int32'),
          0,
          0.1,
          7,
        );
        return [r.loss, r.nll];
      });
      const [loss, nll] = [(await lossT.data())[0], (await nllT.data())[0]];
      tf.dispose([lossT, nllT]);
      model.dispose();
      assert.equal(got.tokens, 7);
      assert.ok(Math.abs(got.loss - loss) < 1e-5, `loss ${got.loss} vs ${loss}`);
      assert.ok(Math.abs(got.nll - nll) < 1e-5, `nll ${got.nll} vs ${nll}`);
    });
  }
});
