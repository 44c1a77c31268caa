/**
 * Value-weighted attention (Kobayashi et al., 2020): ‖α_ij · (x_j W^V_h + b^V_h) W^O_h‖₂ by
 * hand-worked numbers on one 3-token attention of 2 heads, and against PyTorch on the golden
 * checkpoints (test/fixtures/make_value_weighted.py), every kind, layer and head, pad rows included.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { loadCheckpoint } from '../../src/engine/checkpoint';
import { attentionOfPairs } from '../../src/engine/inspect/attentionOfPairs';
import { valueWeighted } from '../../src/engine/inspect/valueWeighted';
import { causalMask, multiHeadAttention, projectKeysValues } from '../../src/engine/model/attention';
import type { AttentionParams } from '../../src/engine/model/params';
import { ATTENTION_KINDS } from '../../src/protocol/attention';
import { attentionObject } from '../../src/protocol/export';
import { GOLDEN, maxAbsDiff, readJson, unflatten } from '../helpers';

before(async () => {
  await initBackend('wasm');
});

const I4 = [
  [1, 0, 0, 0],
  [0, 1, 0, 0],
  [0, 0, 1, 0],
  [0, 0, 0, 1],
];
const zeros = (r: number, c: number) => Array.from({ length: r }, () => Array<number>(c).fill(0));

test('the worked example: 3 tokens, 2 heads of d_v 2, causal weights 1, 1/2, 1/3', async () => {
  // d = 4, h = 2: head 0 owns dimensions 0–1, head 1 dimensions 2–3.
  // W^Q = 0, b^Q = 0: every score is 0, so with the causal mask query i weighs keys 0…i by 1/(i+1).
  // W^V = I, b^V = [0, 0, 1, 0]: x = [3,0,0,0], [0,4,0,0], [0,0,0,0] give
  //   v_0 = [3,0 | 1,0], v_1 = [0,4 | 1,0], v_2 = [0,0 | 1,0]   (head 0 | head 1).
  // W^O (out_proj.weight, [out, in]): head 0's columns 0–1 send [a, b] to [0.6a, 0.8a, 0, b]
  //   (‖·‖ = √(a² + b²)): ‖v_0 W^O_0‖ = 3, ‖v_1 W^O_0‖ = 4, ‖v_2 W^O_0‖ = 0;
  //   head 1's columns 2–3 send [a, b] to [0, 0, 2b, 2a]: ‖v_j W^O_1‖ = 2 for every key.
  // b^O = [5, 5, 5, 5] is in the output but in no head's piece.
  // Value-weighted = α_ij · ‖v_j W^O_h‖:
  //   head 0: [3, 0, 0], [1.5, 2, 0], [1, 4/3, 0];   head 1: [2, 0, 0], [1, 1, 0], [2/3, 2/3, 2/3].
  const wO = [
    [0.6, 0, 0, 0],
    [0.8, 0, 0, 0],
    [0, 0, 0, 2],
    [0, 1, 2, 0],
  ];
  const attn: AttentionParams = {
    wQKV: tf.tensor2d([...zeros(4, 4), ...I4, ...I4]), // [W^Q; W^K; W^V]
    bQKV: tf.tensor1d([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]),
    wO: tf.tensor2d(wO),
    bO: tf.tensor1d([5, 5, 5, 5]),
  };
  const x = tf.tensor3d([
    [
      [3, 0, 0, 0],
      [0, 4, 0, 0],
      [0, 0, 0, 0],
    ],
  ]); // [1, 3, 4]
  const mask = causalMask(3);
  const { output, weights } = multiHeadAttention(attn, 2, x, x, mask);
  const { k, v } = projectKeysValues(attn, 2, x);
  const got = valueWeighted(attn, weights, v);
  const want = [
    [
      [
        [3, 0, 0],
        [1.5, 2, 0],
        [1, 4 / 3, 0],
      ],
      [
        [2, 0, 0],
        [1, 1, 0],
        [2 / 3, 2 / 3, 2 / 3],
      ],
    ],
  ];
  assert.deepEqual(got.shape, [1, 2, 3, 3]);
  const diff = maxAbsDiff(await got.array(), want);
  assert.ok(diff < 1e-6, `max |engine − hand| = ${diff}`);
  tf.dispose([attn.wQKV, attn.bQKV, attn.wO, attn.bO, x, mask, output, weights, k, v, got]);
});

interface Golden {
  src: number[][];
  tgt: number[][];
  encoder_self: number[][][][][];
  decoder_self: number[][][][][];
  cross: number[][][][][];
  tolerance: number;
}

test('value-weighted attention equals PyTorch on every golden checkpoint, and is absent unless asked', async (t) => {
  for (const name of readdirSync(GOLDEN).sort()) {
    await t.test(name, async () => {
      const e = readJson<Golden>(join(GOLDEN, name, 'value_weighted.json'));
      const model = loadCheckpoint(join(GOLDEN, name));
      try {
        const pairs = await attentionOfPairs(model, e.src, e.tgt, undefined, { valueWeighted: true });
        for (const kind of ATTENTION_KINDS) {
          const got = pairs.map((p) => {
            const m = p.maps.find((x) => x.kind === kind)!;
            return unflatten(m.valueWeighted!, m.shape);
          });
          // The fixture's rows keep their pads, so each pair is as long as PyTorch's batch (pad rows compared too).
          const want = e[kind];
          const diff = maxAbsDiff(got, want);
          assert.ok(diff <= e.tolerance, `${kind}: max |engine − PyTorch| = ${diff.toExponential(2)} > ${e.tolerance}`);
        }
        const [plain] = await attentionOfPairs(model, [e.src[0]], [e.tgt[0]]);
        assert.ok(
          plain.maps.every((m) => !('valueWeighted' in m)),
          'not asked: no valueWeighted field',
        );
      } finally {
        model.dispose();
      }
    });
  }
});

test('exports nest value-weighted norms beside the weights only when the maps hold them', async () => {
  const model = loadCheckpoint(join(GOLDEN, 'post_ln_sinusoidal'));
  try {
    const [p] = await attentionOfPairs(model, [[5, 6, 2]], [[1, 7]], undefined, { valueWeighted: true });
    const a = {
      source: { runDir: '/r', step: 0, input: 'input' as const },
      srcTokens: ['a', 'b', 'c'],
      tgtTokens: ['<s>', 'x'],
    };
    const withNorms = attentionObject({ ...a, maps: p.maps }) as { value_weighted: Record<string, number[][][][]> };
    assert.deepEqual(Object.keys(withNorms.value_weighted), [...ATTENTION_KINDS]);
    assert.equal(withNorms.value_weighted.cross[0]![0]!.length, 2);
    const without = attentionObject({ ...a, maps: p.maps.map(({ valueWeighted: _, ...m }) => m) });
    assert.equal('value_weighted' in without, false);
  } finally {
    model.dispose();
  }
});
