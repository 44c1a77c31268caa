/**
 * Greedy decoding's fast path (StepModel.greedyStep: IncrementalModel picks each row's token on the
 * backend, backend/inferenceOps.ts fusedGreedyPick, and reads back [rows, 3] instead of [rows, V])
 * against the full log-probs reduced in JS (search.ts pickGreedy): the same tokens and log-probs to the
 * bit, step by step and through whole searches, on every backend (where the kernel is missing,
 * greedyStep is pickGreedy of step).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { greedyDecode } from '../../src/engine/decode/greedy';
import { IncrementalModel, type IncrementalState } from '../../src/engine/decode/incremental';
import { pickGreedy, type StepModel } from '../../src/engine/decode/search';
import { configFromPreset } from '../../src/engine/model/config';
import { Transformer } from '../../src/engine/model/transformer';
import { testBackends } from '../helpers';

const SRC = [
  [5, 6, 7, 2],
  [8, 9, 10, 11, 12, 13, 2],
  [14, 2],
];

function makeModel(): Transformer {
  const c = configFromPreset('tiny', { src_vocab: 41, tgt_vocab: 41 }); // V not a multiple of 4
  return new Transformer({ ...c, max_len: 40 }, undefined, 11);
}

test('greedyStep equals pickGreedy of step, step by step', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    await t.test(backend, async () => {
      const model = makeModel();
      const fast = new IncrementalModel(model);
      const full = new IncrementalModel(model);
      const before = tf.memory().numTensors;
      let a = fast.initial(SRC);
      let b = full.initial(SRC);
      let last: Int32Array = Int32Array.from(SRC, () => model.config.bos_id);
      for (let i = 0; i < 6; i++) {
        const got = await fast.greedyStep(a, last);
        const step = await full.step(b, last);
        const want = pickGreedy(step, last.length, model.config.eos_id);
        assert.deepEqual([...got.tokens], [...want.tokens], `step ${i}: tokens`);
        assert.deepEqual([...got.logProbs], [...want.logProbs], `step ${i}: log-probs`);
        assert.deepEqual([...got.eosLogProbs], [...want.eosLogProbs], `step ${i}: EOS log-probs`);
        for (const tok of got.tokens) assert.ok(tok !== model.config.bos_id && tok !== model.config.pad_id);
        last = got.tokens;
        [a, b] = [got.state, step.state];
      }
      fast.release(a);
      full.release(b);
      fast.dispose();
      full.dispose();
      assert.equal(tf.memory().numTensors, before, 'no tensors left');
      model.dispose();
    });
  }
});

test('greedy search with greedyStep equals greedy search over the full log-probs, to the bit', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    await t.test(backend, async () => {
      const model = makeModel();
      const c = model.config;
      const opts = { bos: c.bos_id, eos: c.eos_id, sourceLengths: SRC.map((s) => s.length), maxLenOffset: 8 };
      const m = new IncrementalModel(model);
      const fast = await greedyDecode(m, m.initial(SRC), opts);
      const bare: StepModel<IncrementalState> = {
        step: (s, l) => m.step(s, l),
        select: (s, r) => m.select(s, r),
        release: (s) => m.release(s),
      };
      const slow = await greedyDecode(bare, m.initial(SRC), opts);
      m.dispose();
      model.dispose();
      fast.forEach((r, s) => {
        assert.deepEqual([...r.best.tokens], [...slow[s]!.best.tokens], `sentence ${s}: tokens`);
        assert.equal(r.best.logProb, slow[s]!.best.logProb, `sentence ${s}: logProb`);
        assert.deepEqual([...r.best.stepRows], [...slow[s]!.best.stepRows], `sentence ${s}: step rows`);
      });
    });
  }
});
