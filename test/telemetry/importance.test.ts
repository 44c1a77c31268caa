/**
 * Head importance (Michel et al.): I_h = |∂L/∂ξ_h| at ξ = 1, checked against finite differences of
 * the loss itself, and the gate's meaning checked by hand (ξ_h = 0 removes exactly that head).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS } from '../../src/protocol/attention';
import { initBackend } from '../../src/engine/backend';
import { Transformer } from '../../src/engine/model/transformer';
import { gatedLoss, type Gates, headImportance, layersOf, type PairBatch } from '../../src/engine/telemetry/importance';
import { smallConfig } from '../helpers';

before(async () => {
  await initBackend('cpu');
});

const config = smallConfig();

const batch: PairBatch = {
  src: [
    [5, 6, 7, 8, 2],
    [9, 4, 3, 2, 0],
  ],
  tgtIn: [
    [1, 8, 7, 6, 5],
    [1, 3, 4, 9, 0],
  ],
  tgtOut: [
    [8, 7, 6, 5, 2],
    [3, 4, 9, 2, 0],
  ],
};

/** The loss with every gate 1 but (kind, index) set to `value`. */
function lossAt(model: Transformer, kind: string, index: number, value: number): number {
  const L = layersOf(model);
  return tf.tidy(() => {
    const gates = Object.fromEntries(
      ATTENTION_KINDS.map((k) => {
        const v = new Float32Array(L[k] * config.heads).fill(1);
        if (k === kind) v[index] = value;
        return [k, tf.tensor2d(v, [L[k], config.heads])];
      }),
    ) as Gates;
    const t = (rows: number[][]) => tf.tensor2d(rows, undefined, 'int32');
    return gatedLoss(model, t(batch.src), t(batch.tgtIn), t(batch.tgtOut), gates).dataSync()[0]!;
  });
}

test('I_h equals |dL/dξ_h| by central finite differences, to 1e-3 relative, for every head', async () => {
  const model = new Transformer(config, undefined, 11);
  try {
    const importance = await headImportance(model, [batch]);
    const eps = 1e-2;
    let checked = 0;
    for (const kind of ATTENTION_KINDS) {
      importance[kind].forEach((got, i) => {
        const fd = (lossAt(model, kind, i, 1 + eps) - lossAt(model, kind, i, 1 - eps)) / (2 * eps);
        assert.ok(
          Math.abs(got - Math.abs(fd)) <= 1e-3 * Math.abs(fd) + 1e-6,
          `${kind} head ${i}: I = ${got}, |ΔL/Δξ| = ${Math.abs(fd)}`,
        );
        checked++;
      });
    }
    assert.equal(checked, 6);
  } finally {
    model.dispose();
  }
});

test('ξ_h = 0 removes exactly head h: the same as zeroing its rows of W^V (its value, hence its output)', () => {
  const model = new Transformer(config, undefined, 11);
  const cut = new Transformer(config, undefined, 11);
  try {
    // Head 1 of the cross-attention: value rows d + d + 8 … d + d + 15 of in_proj (W^V is the third block).
    const name = 'decoder.layers.0.multihead_attn.in_proj_weight';
    const w = cut.params.get(name)!;
    const rows = w.arraySync() as number[][];
    for (let r = 2 * 16 + 8; r < 3 * 16; r++) rows[r] = rows[r]!.map(() => 0);
    w.assign(tf.tensor2d(rows));
    const b = cut.params.get('decoder.layers.0.multihead_attn.in_proj_bias')!;
    const bias = b.arraySync() as number[];
    for (let r = 2 * 16 + 8; r < 3 * 16; r++) bias[r] = 0;
    b.assign(tf.tensor1d(bias));
    const gated = lossAt(model, 'cross', 1, 0);
    const zeroed = lossAt(cut, 'cross', 1, 1);
    assert.ok(Math.abs(gated - zeroed) < 1e-5, `gated ${gated}, weights zeroed ${zeroed}`);
    assert.ok(Math.abs(gated - lossAt(model, 'cross', 1, 1)) > 1e-4, 'and the head mattered');
  } finally {
    model.dispose();
    cut.dispose();
  }
});
