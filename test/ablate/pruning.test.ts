/** Pruning curves: the order heads go in, the gates each point is scored under, and the count that can go. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { allHeads, byImportance, prunable, pruningCurve, randomOrder } from '../../src/engine/ablate/pruning';
import { initBackend } from '../../src/engine/backend';
import { Transformer } from '../../src/engine/model/transformer';
import { smallConfig } from '../helpers';

before(async () => {
  await initBackend('cpu');
});

const config = smallConfig({ d_model: 8, d_ff: 16, decoder_layers: 2, src_vocab: 10, tgt_vocab: 10 });

test('heads in forward order, by increasing importance (ties in forward order), and a seeded random order', () => {
  const model = new Transformer(config, undefined, 1);
  try {
    const all = allHeads(model);
    assert.deepEqual(all, [
      'encoder_self:0.0',
      'encoder_self:0.1',
      'decoder_self:0.0',
      'decoder_self:0.1',
      'decoder_self:1.0',
      'decoder_self:1.1',
      'cross:0.0',
      'cross:0.1',
      'cross:1.0',
      'cross:1.1',
    ]);
    const importance = {
      encoder_self: Float32Array.of(0.5, 0.1),
      decoder_self: Float32Array.of(0.3, 0.3, 0.9, 0.05),
      cross: Float32Array.of(0.7, 0.2, 0.3, 0.8),
    };
    assert.deepEqual(byImportance(importance, model), [
      'decoder_self:1.1',
      'encoder_self:0.1',
      'cross:0.1',
      'decoder_self:0.0',
      'decoder_self:0.1',
      'cross:1.0',
      'encoder_self:0.0',
      'cross:0.0',
      'cross:1.1',
      'decoder_self:1.0',
    ]);
    const r = randomOrder(model, 7);
    assert.deepEqual([...r].sort(), [...all].sort(), 'a permutation');
    assert.deepEqual(randomOrder(model, 7), r, 'the same seed, the same order');
    assert.notDeepEqual(randomOrder(model, 8), r);
  } finally {
    model.dispose();
  }
});

test('each point is scored with exactly the first n heads of the order gated off', async () => {
  const model = new Transformer(config, undefined, 1);
  try {
    const order = ['cross:1.0', 'encoder_self:0.1', 'decoder_self:0.0'];
    const seen: string[][] = [];
    const tensors = tf.memory().numTensors;
    const points = await pruningCurve(model, order, async (heads) => {
      const off: string[] = [];
      for (const [kind, layers] of Object.entries(heads ?? {}))
        for (const [l, g] of (layers ?? []).entries()) {
          const xi = g.xi.dataSync();
          xi.forEach((v, h) => v === 0 && off.push(`${kind}:${l}.${h}`));
        }
      seen.push(off.sort());
      return 10 - off.length;
    });
    assert.deepEqual(seen, [[], ['cross:1.0'], ['cross:1.0', 'encoder_self:0.1'], [...order].sort()]);
    assert.deepEqual(
      points.map((p) => [p.removed, p.head, p.metric]),
      [
        [0, null, 10],
        [1, 'cross:1.0', 9],
        [2, 'encoder_self:0.1', 8],
        [3, 'decoder_self:0.0', 7],
      ],
    );
    assert.equal(tf.memory().numTensors, tensors, 'every point’s gates are freed');
  } finally {
    model.dispose();
  }
});

test('how many can go: the longest prefix within the tolerance of the intact metric', () => {
  const curve = (metrics: number[]) => metrics.map((metric, removed) => ({ removed, head: null, metric }));
  assert.equal(prunable(curve([99.5, 99.5, 100, 99, 98.5, 98.5, 98, 94.5]), 1), 5);
  assert.equal(prunable(curve([99.5, 98, 99.5]), 1), 0, 'a later recovery does not count');
  assert.equal(prunable(curve([30, 29.6, 29.5, 29.4]), 0.5), 2);
  assert.equal(prunable(curve([30]), 0.5), 0);
});
