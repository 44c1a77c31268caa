/**
 * Dropout (§5.4, model/layers.ts, applied in model/stacks.ts and model/transformer.ts) by its
 * definition, on every backend: in training each value is zeroed with probability p (the zero
 * fraction of 10^6 values within 3σ, σ = √(p(1 − p)/n)) and survivors are scaled by 1/(1 − p) (to
 * float32 rounding); a seed fixes the mask; outside training nothing is dropped, in the model too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { dropout } from '../../src/engine/ops/dropout';
import { EVAL, Transformer } from '../../src/engine/model/transformer';
import { smallConfig, testBackends } from '../helpers';

const N = 1000 * 1000;
/** 1 … 7, repeating: no zeros before dropout, survivors of several sizes. */
const input = (): tf.Tensor2D =>
  tf.tensor2d(
    Float32Array.from({ length: N }, (_, i) => 1 + (i % 7)),
    [1000, 1000],
  );

async function dropped(p: number, training: boolean, seed?: number): Promise<Float32Array> {
  const x = input();
  const y = dropout(x, p, training, seed);
  const out = (await y.data()) as Float32Array;
  tf.dispose([x, y]);
  return out;
}

test('dropout zeroes a fraction p, scales survivors by 1/(1 − p), repeats for a seed, is off in eval', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    await t.test(backend, async () => {
      for (const p of [0.1, 0.3]) {
        const y = await dropped(p, true, 7);
        let zeros = 0;
        let worst = 0;
        for (let i = 0; i < N; i++) {
          if (y[i] === 0) zeros++;
          else worst = Math.max(worst, Math.abs(y[i] / (1 + (i % 7)) - 1 / (1 - p)) * (1 - p));
        }
        const sigma = Math.sqrt((p * (1 - p)) / N);
        assert.ok(Math.abs(zeros / N - p) <= 3 * sigma, `p ${p}: zero fraction ${zeros / N}, 3σ = ${3 * sigma}`);
        assert.ok(worst <= 2 ** -22, `p ${p}: a survivor is off 1/(1 − p) by ${worst} (relative)`); // 2 ulp
        const again = await dropped(p, true, 7);
        assert.ok(
          again.every((v, i) => v === y[i]),
          `p ${p}: the same seed gave another mask`,
        );
        const other = await dropped(p, true, 8);
        assert.ok(
          other.some((v, i) => (v === 0) !== (y[i] === 0)),
          `p ${p}: another seed gave the same mask`,
        );
        const evaluated = await dropped(p, false, 7);
        assert.ok(
          evaluated.every((v, i) => v === 1 + (i % 7)),
          `p ${p}: dropout outside training`,
        );
      }
    });
  }
});

test('the model drops after the embeddings and every sublayer in training only', async () => {
  await initBackend('cpu');
  const config = smallConfig({ dropout: 0.5, encoder_layers: 2, decoder_layers: 3 });
  const model = new Transformer(config, undefined, 5);
  const plain = new Transformer({ ...config, dropout: 0 }, model.params); // the same weights
  const src = tf.tensor2d([[5, 6, 7, 2]], undefined, 'int32');
  const tgt = tf.tensor2d([[1, 7, 6]], undefined, 'int32');
  try {
    const run = async (m: Transformer, ctx = EVAL) => {
      const y = m.forward(src, tgt, ctx);
      const out = (await y.data()) as Float32Array;
      y.dispose();
      return out;
    };
    const evaluated = await run(model);
    assert.deepEqual(evaluated, await run(plain), 'eval mode drops nothing');
    let calls = 0;
    const seeded = (start: number) => ({ training: true, nextSeed: () => (calls++, start++) });
    const trained = await run(model, seeded(1));
    // §5.4: the embedding sums of both stacks, and each sublayer: 2 per encoder layer, 3 per decoder layer.
    assert.equal(calls, 2 + 2 * 2 + 3 * 3);
    assert.ok(
      trained.some((v, i) => Math.abs(v - evaluated[i]) > 1e-3),
      'training mode drops',
    );
    assert.deepEqual(await run(model, seeded(1)), trained, 'the same seeds give the same pass');
  } finally {
    tf.dispose([src, tgt]);
    model.dispose();
  }
});
