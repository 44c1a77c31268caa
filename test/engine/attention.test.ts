/** Attention by hand-worked numbers, and the mask properties the debugger promises its users. */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { scaledDotProductAttention } from '../../src/engine/model/attention';

import { Transformer } from '../../src/engine/model/transformer';
import { maxAbsDiff, nestedAttention } from '../helpers';

before(async () => {
  await initBackend('wasm');
});

test('the worked example: q=[2,0] over keys [1,0],[0,1],[1,1] with d_k = 2', async () => {
  // scores = q·k/√2 = [2/√2, 0, 2/√2] = [1.41421, 0, 1.41421]
  // softmax: e^1.41421 = 4.11325; weights = [4.11325, 1, 4.11325] / 9.22650 = [0.44581, 0.10838, 0.44581]
  // output = 0.44581·[10,0] + 0.10838·[0,20] + 0.44581·[5,5] = [6.6871, 4.3967]
  const q = tf.tensor2d([[2, 0]]);
  const k = tf.tensor2d([
    [1, 0],
    [0, 1],
    [1, 1],
  ]);
  const v = tf.tensor2d([
    [10, 0],
    [0, 20],
    [5, 5],
  ]);
  const { output, weights } = scaledDotProductAttention(q, k, v);
  const w = (await weights.array()) as number[][];
  const o = (await output.array()) as number[][];
  assert.ok(maxAbsDiff(w, [[0.44581, 0.10838, 0.44581]]) < 1e-4, `weights ${w}`);
  assert.ok(maxAbsDiff(o, [[6.6871, 4.3967]]) < 1e-3, `output ${o}`);
  tf.dispose([q, k, v, output, weights]);
});

const config = {
  d_model: 16,
  heads: 4,
  d_ff: 32,
  encoder_layers: 2,
  decoder_layers: 2,
  src_vocab: 30,
  tgt_vocab: 30,
  dropout: 0.1,
  norm_first: false,
  final_norm: false,
  positional: 'sinusoidal' as const,
  max_len: 64,
  share_embeddings: false,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
};

test('changing target tokens after position t leaves everything at positions ≤ t unchanged', async () => {
  const model = new Transformer(config, undefined, 7);
  const src = [[5, 6, 7, 8, 9, 2]];
  const a = await nestedAttention(model, src, [[1, 10, 11, 12, 13, 14]]);
  const b = await nestedAttention(model, src, [[1, 10, 11, 20, 21, 22]]); // differs from position 3 on
  const upTo = 2; // positions 0..2 see only tokens 0..2, which agree
  for (let l = 0; l < config.decoder_layers; l++) {
    for (let h = 0; h < config.heads; h++) {
      for (let t = 0; t <= upTo; t++) {
        assert.ok(
          maxAbsDiff(a.decoder_self[0][l][h][t], b.decoder_self[0][l][h][t]) < 1e-6,
          `decoder self layer ${l} head ${h} row ${t}`,
        );
        assert.ok(maxAbsDiff(a.cross[0][l][h][t], b.cross[0][l][h][t]) < 1e-6, `cross layer ${l} head ${h} row ${t}`);
        // causal: no weight on any later position
        assert.ok(
          a.decoder_self[0][l][h][t].slice(t + 1).every((w) => w === 0),
          `future weight at row ${t}`,
        );
      }
    }
  }
  for (let t = 0; t <= upTo; t++)
    assert.ok(maxAbsDiff(a.log_probs[0][t], b.log_probs[0][t]) < 1e-5, `log-probs at ${t}`);
  // and the changed positions do change (the test can fail the other way too)
  assert.ok(maxAbsDiff(a.log_probs[0][upTo + 1], b.log_probs[0][upTo + 1]) > 1e-4);
  model.dispose();
});

test('padded source positions get exactly zero attention everywhere', async () => {
  const model = new Transformer(config, undefined, 8);
  const r = await nestedAttention(
    model,
    [
      [5, 6, 7, 2, 0, 0],
      [5, 6, 7, 8, 9, 2],
    ],
    [
      [1, 10, 11],
      [1, 12, 13],
    ],
  );
  for (let l = 0; l < 2; l++) {
    for (let h = 0; h < 4; h++) {
      for (const row of r.encoder_self[0][l][h]) assert.deepEqual(row.slice(4), [0, 0], 'encoder self on pads');
      for (const row of r.cross[0][l][h]) assert.deepEqual(row.slice(4), [0, 0], 'cross on pads');
      for (const row of r.cross[1][l][h]) assert.ok(row[4] > 0 && row[5] > 0, 'unpadded row keeps its weight');
      for (const row of r.cross[0][l][h])
        assert.ok(Math.abs(row.reduce((s, w) => s + w, 0) - 1) < 1e-5, 'rows sum to 1');
    }
  }
  model.dispose();
});
