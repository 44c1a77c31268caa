/**
 * The backward pass freeing what it consumed (backend/releaseConsumed.ts, issue 28): inside
 * releasingConsumed the engine's gradient functions dispose each node's dy and saved tensors once
 * they have its input gradients. That must change no value, leave nothing behind, free nothing a
 * later node reads (tfjs would throw on a disposed tensor), and lower the GPU memory of a step:
 * counted by the allocation wrapper (backend/webgpu/allocations.ts, tfjs's pool included) with and
 * without the release in one process, so the "without" is what the engine did before.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { releasingConsumed } from '../../src/engine/backend/releaseConsumed';
import { gpuAllocations, resetGpuAllocationPeak } from '../../src/engine/backend/webgpu/allocations';
import { trimGpuPool } from '../../src/engine/backend/webgpu/bufferPool';
import { configFromPreset, type TransformerConfig } from '../../src/engine/model/config';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { smoothedLossFromLogits } from '../../src/engine/train/loss';
import { smallConfig, testBackends } from '../helpers';
import { useWebgpu } from './kernelHelpers';

/** `rows` rows of `len` tokens a side, the second half of the rows padded from the middle (pad 0). */
function paddedBatch(c: TransformerConfig, rows: number, len: number) {
  let x = 11;
  const next = () => 3 + ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % (c.tgt_vocab - 3));
  const row = (b: number, head: number[]) => {
    const ids = [...head, ...Array.from({ length: len - head.length }, next)];
    return b >= rows / 2 ? ids.map((id, i) => (i >= len / 2 ? c.pad_id : id)) : ids;
  };
  const src = Array.from({ length: rows }, (_, b) => row(b, []));
  const tgt = Array.from({ length: rows }, (_, b) => row(b, [c.bos_id]));
  const tgtOut = tgt.map((r) => [...r.slice(1), c.pad_id]);
  return { src, tgtIn: tgt, tgtOut };
}

/** What train/step.ts's gradients() does for one micro-batch: the loss, nll and every variable's gradient. */
function lossAndGradients(model: Transformer, batch: ReturnType<typeof paddedBatch>, release: boolean) {
  const c = model.config;
  const vars = namedVariables(model.params).map(([, v]) => v);
  return tf.tidy(() => {
    const src = tf.tensor2d(batch.src, undefined, 'int32'); // [B, S]
    const tgtIn = tf.tensor2d(batch.tgtIn, undefined, 'int32'); // [B, T]
    const tgtOut = tf.tensor1d(batch.tgtOut.flat(), 'int32'); // [B·T]
    const tokens = batch.tgtOut.flat().filter((id) => id !== c.pad_id).length;
    let seed = 5;
    const ctx = { training: true, nextSeed: () => seed++ };
    let nll: tf.Scalar | undefined;
    const pass = () =>
      tf.variableGrads(() => {
        const r = smoothedLossFromLogits(model.logits(src, tgtIn, ctx), tgtOut, c.pad_id, 0.1, tokens);
        nll = r.nll;
        return r.loss;
      }, vars);
    const { value, grads } = release ? releasingConsumed(pass) : pass();
    return [value, nll!, ...vars.map((v) => grads[v.name]!)];
  });
}

/** The tensors' values as raw bits, so that −0 against 0 or one ulp apart counts as different. */
async function bits(ts: tf.Tensor[]): Promise<Uint32Array[]> {
  const out = await Promise.all(
    ts.map(async (t) => new Uint32Array(((await t.data()) as Float32Array).slice().buffer)),
  );
  tf.dispose(ts);
  return out;
}

test('freeing what the backward pass consumed changes no loss and no gradient, bit for bit, on every backend', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      for (const normFirst of [false, true]) {
        const config = smallConfig({ heads: 2, encoder_layers: 2, decoder_layers: 2, src_vocab: 20, tgt_vocab: 20 });
        const model = new Transformer(
          { ...config, dropout: 0.1, norm_first: normFirst, final_norm: normFirst },
          undefined,
          3,
        );
        const batch = paddedBatch(model.config, 4, 6);
        const tensors = tf.memory().numTensors;
        const kept = await bits(lossAndGradients(model, batch, false));
        const freed = await bits(lossAndGradients(model, batch, true));
        assert.equal(tf.memory().numTensors, tensors, `${backend}: tensors left behind`);
        model.dispose();
        const names = ['loss', 'nll', ...namedVariables(model.params).map(([n]) => n)];
        freed.forEach((got, i) =>
          assert.deepEqual(got, kept[i], `${backend}, norm_first ${normFirst}: ${names[i]} differs`),
        );
      }
    });
  }
});

/** The allocated peak of one forward and backward pass above what was allocated before it. */
async function passPeak(model: Transformer, batch: ReturnType<typeof paddedBatch>, release: boolean) {
  trimGpuPool(); // twice: a free buffer goes once it stayed free through a trim (bufferPool.ts)
  trimGpuPool();
  const before = gpuAllocations()!.current;
  resetGpuAllocationPeak();
  const out = lossAndGradients(model, batch, release);
  await out[0]!.data(); // the GPU has run the pass
  const peak = gpuAllocations()!.peak - before;
  tf.dispose(out);
  return peak;
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

test('webgpu: freeing what the backward pass consumed lowers its allocated peak by a quarter or more', async (t: TestContext) => {
  if (!(await useWebgpu(t))) return;
  // Activations and logits dominate (vocabulary 1,000; 32 × 32 tokens a side): what tfjs keeps.
  const model = new Transformer(configFromPreset('tiny', { src_vocab: 1000, tgt_vocab: 1000 }), undefined, 1);
  const batch = paddedBatch(model.config, 32, 32);
  try {
    await passPeak(model, batch, true); // compiles the programs (their uniforms are buffers too)
    const kept = await passPeak(model, batch, false);
    const freed = await passPeak(model, batch, true);
    t.diagnostic(`allocated peak of a pass: ${mib(kept)} keeping every gradient → ${mib(freed)} freeing them`);
    assert.ok(freed <= 0.75 * kept, `freeing: ${mib(freed)}, keeping: ${mib(kept)}`);
  } finally {
    model.dispose();
  }
});
