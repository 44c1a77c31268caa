/** No tensor leaks: the engine's forward pass, inspection and training step leave tf.memory() as they found it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';

import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { trainStep } from '../../src/engine/train/step';
import { nestedAttention, smallConfig, testBackends, TOY_BATCH } from '../helpers';

const config = smallConfig({
  encoder_layers: 2,
  decoder_layers: 2,
  src_vocab: 20,
  tgt_vocab: 20,
  dropout: 0.1,
  norm_first: true,
  final_norm: true,
  positional: 'learned',
  share_embeddings: false,
});
const batch = TOY_BATCH;

test('forward, inspection and training steps allocate no lasting tensors', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const model = new Transformer(config, undefined, 5);
      const adam = new Adam();
      await trainStep(model, adam, batch, { lr: 1e-3, labelSmoothing: 0.1, clipNorm: 1, seed: 1 }); // creates Adam's moments once
      const before = tf.memory().numTensors;
      const logProbs = tf.tidy(() =>
        model.forward(tf.tensor2d(batch.src, undefined, 'int32'), tf.tensor2d(batch.tgtIn, undefined, 'int32')),
      );
      logProbs.dispose();
      assert.equal(tf.memory().numTensors, before, 'forward pass');
      await nestedAttention(model, batch.src, batch.tgtIn);
      assert.equal(tf.memory().numTensors, before, 'attention report');
      await trainStep(model, adam, batch, { lr: 1e-3, labelSmoothing: 0.1, clipNorm: 1, seed: 2 });
      assert.equal(tf.memory().numTensors, before, 'training step');
      const beforeDispose = tf.memory().numTensors;
      model.dispose();
      adam.dispose();
      assert.ok(tf.memory().numTensors < beforeDispose);
    });
  }
});
