/**
 * model/attention.ts by definitions and hand-worked numbers, where golden.test.ts (PyTorch's forward
 * pass, zero ablation) and attention.test.ts leave it open: the masks' exact values, head gating with a
 * mean (mean ablation), and the sliced W^Q, W^K, W^V that decoding uses. Each case was found by a
 * mutant that survived the other tests (test/README.md, "Mutation score").
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import {
  attendTo,
  causalMask,
  multiHeadAttention,
  paddingMask,
  projectKeysValues,
  slicedProjections,
} from '../../src/engine/model/attention';
import type { AttentionParams, LinearParams } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { maxAbsDiff } from '../helpers';

before(async () => {
  await initBackend('cpu');
});

test('the padding mask is 0 at tokens and −∞ at pads, shaped [B, 1, 1, S]', async () => {
  const ids = tf.tensor2d(
    [
      [5, 0, 7],
      [0, 0, 3],
    ],
    undefined,
    'int32',
  );
  const m = paddingMask(ids, 0);
  assert.deepEqual(m.shape, [2, 1, 1, 3]);
  assert.deepEqual(await m.array(), [[[[0, -Infinity, 0]]], [[[-Infinity, -Infinity, 0]]]]);
  tf.dispose([ids, m]);
});

test('the causal mask lets query i see keys j ≤ i: 0 on and below the diagonal, −∞ above', async () => {
  const m = causalMask(3);
  assert.deepEqual(m.shape, [1, 1, 3, 3]);
  assert.deepEqual(await m.array(), [
    [
      [
        [0, -Infinity, -Infinity],
        [0, 0, -Infinity],
        [0, 0, 0],
      ],
    ],
  ]);
  m.dispose();
});

/**
 * d = 2, h = 2 (d_k = 1), W^Q = W^K = W^V = W^O = I, no biases, x = [[1, 0], [0, 1]]: head 1 sees
 * feature 0, head 2 feature 1. Head 1: scores [[1, 0], [0, 0]] → weights [[e/(e+1), 1/(e+1)], [½, ½]]
 * = [[0.731059, 0.268941], [0.5, 0.5]], output [0.731059, 0.5]. Head 2 the mirror: [0.5, 0.731059].
 */
function identityAttention(): { attn: AttentionParams; x: tf.Tensor3D } {
  const eye = [
    [1, 0],
    [0, 1],
  ];
  return {
    attn: {
      wQKV: tf.tensor2d([...eye, ...eye, ...eye]),
      bQKV: tf.zeros([6]),
      wO: tf.tensor2d(eye),
      bO: tf.zeros([2]),
    },
    x: tf.tensor3d([eye]),
  };
}
const E = 0.731059; // e / (e + 1)

test('multi-head attention on the identity example: each head’s weights and output by hand', async () => {
  const { attn, x } = identityAttention();
  const r = multiHeadAttention(attn, 2, x, x);
  assert.ok(
    maxAbsDiff(await r.weights.array(), [
      [
        [
          [E, 1 - E],
          [0.5, 0.5],
        ],
        [
          [0.5, 0.5],
          [1 - E, E],
        ],
      ],
    ]) < 1e-6,
  );
  assert.ok(
    maxAbsDiff(await r.output.array(), [
      [
        [E, 0.5],
        [0.5, E],
      ],
    ]) < 1e-6,
  );
  tf.dispose([attn.wQKV, attn.bQKV, attn.wO, attn.bO, x, r.output, r.weights]);
});

test('a head gate passes ξ·head + (1 − ξ)·mean to W^O; without a mean, ξ·head; `heads` stays ungated', async () => {
  const { attn, x } = identityAttention();
  const kv = projectKeysValues(attn, 2, x);
  const xi = tf.tensor1d([1, 0.25]);
  const mean = tf.tensor2d([[7], [-2]]); // [h, d_v]
  // Head 1 kept (ξ 1: the mean 7 gets weight 0); head 2: 0.25·[0.5, E] + 0.75·(−2).
  const meanAblated = attendTo(attn, 2, x, kv, undefined, { xi, mean });
  assert.ok(
    maxAbsDiff(await meanAblated.output.array(), [
      [
        [E, 0.25 * 0.5 - 1.5],
        [0.5, 0.25 * E - 1.5],
      ],
    ]) < 1e-6,
  );
  assert.ok(
    maxAbsDiff(await meanAblated.heads.array(), [
      [
        [[E], [0.5]],
        [[0.5], [E]],
      ],
    ]) < 1e-6,
    'heads before the gate',
  );
  const zero = tf.tensor1d([0, 1]);
  const zeroAblated = attendTo(attn, 2, x, kv, undefined, { xi: zero });
  assert.ok(
    maxAbsDiff(await zeroAblated.output.array(), [
      [
        [0, 0.5],
        [0, E],
      ],
    ]) < 1e-6,
  );
  tf.dispose([attn.wQKV, attn.bQKV, attn.wO, attn.bO, x, kv.k, kv.v, xi, mean, zero]);
  tf.dispose([meanAblated.output, meanAblated.weights, meanAblated.heads]);
  tf.dispose([zeroAblated.output, zeroAblated.weights, zeroAblated.heads]);
});

const config = {
  d_model: 4,
  heads: 2,
  d_ff: 8,
  encoder_layers: 2,
  decoder_layers: 1,
  src_vocab: 10,
  tgt_vocab: 10,
  dropout: 0,
  norm_first: false,
  final_norm: false,
  positional: 'sinusoidal' as const,
  max_len: 8,
  share_embeddings: false,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
};

test('slicedProjections: W^Q, W^K, W^V are rows 0–d, d–2d, 2d–3d of in_proj, copies that dispose frees', async () => {
  const model = new Transformer(config, undefined, 11);
  const d = config.d_model;
  const before = tf.memory().numTensors;
  const sliced = slicedProjections(model.layers);
  const view = sliced.layers;
  // 4 attentions (2 encoder self, decoder self, cross) × (W, b) × (q, k, v): 24 new tensors, no others.
  assert.equal(tf.memory().numTensors - before, 4 * 6);
  const attentions = [
    [model.layers.encoder[0]!.selfAttn, view.encoder[0]!.selfAttn],
    [model.layers.encoder[1]!.selfAttn, view.encoder[1]!.selfAttn],
    [model.layers.decoder[0]!.selfAttn, view.decoder[0]!.selfAttn],
    [model.layers.decoder[0]!.crossAttn, view.decoder[0]!.crossAttn],
  ] as const;
  for (const [original, s] of attentions) {
    assert.ok(s.sliced, 'every attention of the view is sliced');
    assert.equal(s.wO, original.wO, 'W^O is the model’s own');
    const w = (await original.wQKV.array()) as number[][];
    const b = (await original.bQKV.array()) as number[];
    for (const [i, which] of (['q', 'k', 'v'] as const).entries()) {
      const p: LinearParams = s.sliced[which];
      assert.deepEqual(await p.w.array(), w.slice(i * d, (i + 1) * d), `W^${which}`);
      assert.deepEqual(await p.b.array(), b.slice(i * d, (i + 1) * d), `b^${which}`);
      assert.equal((p.w as tf.Variable).trainable, false, `W^${which} is not trained`);
    }
  }
  assert.equal(view.generator, model.layers.generator, 'the rest of the model is shared');
  assert.equal(view.encoder[0]!.ffn, model.layers.encoder[0]!.ffn);
  assert.equal(view.decoder[0]!.norm3, model.layers.decoder[0]!.norm3);
  sliced.dispose();
  assert.equal(tf.memory().numTensors, before, 'dispose frees exactly the sliced copies');
  model.dispose();
});

test('attention through the sliced view uses its slices: the same output, also after in_proj changes', async () => {
  const model = new Transformer(config, undefined, 12);
  const x = tf.randomNormal([2, 3, config.d_model], 0, 1, 'float32', 4) as tf.Tensor3D;
  const original = model.layers.decoder[0]!.crossAttn;
  const sliced = slicedProjections(model.layers);
  const view = sliced.layers.decoder[0]!.crossAttn;
  const a = multiHeadAttention(original, config.heads, x, x);
  const b = multiHeadAttention(view, config.heads, x, x);
  assert.ok(maxAbsDiff(await b.output.array(), await a.output.array()) < 1e-6);
  // The slices are copies taken once: zeroing in_proj changes the model, not the view.
  (original.wQKV as tf.Variable).assign(tf.zerosLike(original.wQKV));
  const c = multiHeadAttention(view, config.heads, x, x);
  const z = multiHeadAttention(original, config.heads, x, x);
  assert.ok(maxAbsDiff(await c.output.array(), await a.output.array()) < 1e-6, 'the view kept its slices');
  assert.ok(maxAbsDiff(await z.output.array(), await a.output.array()) > 1e-3, 'the model did change');
  tf.dispose([x, a.output, a.weights, b.output, b.weights, c.output, c.weights, z.output, z.weights]);
  sliced.dispose();
  model.dispose();
});
