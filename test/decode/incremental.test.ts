/**
 * The incremental decoder (encoder once, cross K/V once, self K/V cached, one position a step)
 * against the reference that runs `model.forward` over the whole prefix every step: same tokens
 * and scores for greedy and beam search, on every backend, for every architecture variant.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { beamSearch } from '../../src/engine/decode/beam';
import { greedyDecode } from '../../src/engine/decode/greedy';
import { FullRecomputeModel, IncrementalModel } from '../../src/engine/decode/incremental';
import type { SearchOptions, SentenceResult } from '../../src/engine/decode/search';
import type { TransformerConfig } from '../../src/engine/model/config';
import { Transformer } from '../../src/engine/model/transformer';
import { testBackends } from '../helpers';

const base = {
  d_model: 16,
  heads: 4,
  d_ff: 32,
  encoder_layers: 2,
  decoder_layers: 2,
  src_vocab: 20,
  tgt_vocab: 20,
  dropout: 0.1,
  max_len: 32,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
};
const VARIANTS: Record<string, TransformerConfig> = {
  'post-LN, sinusoidal': {
    ...base,
    norm_first: false,
    final_norm: false,
    positional: 'sinusoidal',
    share_embeddings: false,
  },
  'post-LN, learned': { ...base, norm_first: false, final_norm: false, positional: 'learned', share_embeddings: false },
  'pre-LN, sinusoidal, final norm, shared': {
    ...base,
    norm_first: true,
    final_norm: true,
    positional: 'sinusoidal',
    share_embeddings: true,
  },
  'pre-LN, learned, final norm': {
    ...base,
    norm_first: true,
    final_norm: true,
    positional: 'learned',
    share_embeddings: false,
  },
};
// Different lengths, so the batch is padded; each ends with EOS (2) as the trainer feeds them.
const SRC = [
  [5, 6, 7, 2],
  [8, 9, 10, 11, 12, 13, 2],
  [14, 2],
];

function options(c: TransformerConfig, beamSize: number): SearchOptions {
  return {
    bos: c.bos_id,
    eos: c.eos_id,
    sourceLengths: SRC.map((s) => s.length),
    maxLenOffset: 5,
    beamSize,
    alpha: 0.6,
  };
}

async function run(model: Transformer, incremental: boolean, beamSize: number): Promise<SentenceResult[]> {
  const opts = options(model.config, beamSize);
  const search = beamSize === 1 ? greedyDecode : beamSearch;
  if (incremental) {
    const m = new IncrementalModel(model);
    try {
      return await search(m, m.initial(SRC), opts);
    } finally {
      m.dispose();
    }
  }
  const m = new FullRecomputeModel(model);
  return search(m, m.initial(SRC), opts);
}

function assertSame(got: SentenceResult[], want: SentenceResult[], what: string): void {
  assert.equal(got.length, want.length);
  got.forEach((r, s) => {
    assert.equal(r.nBest.length, want[s]!.nBest.length, `${what}: sentence ${s} n-best size`);
    r.nBest.forEach((h, i) => {
      const w = want[s]!.nBest[i]!;
      assert.deepEqual([...h.tokens], [...w.tokens], `${what}: sentence ${s} hypothesis ${i} tokens`);
      assert.ok(
        Math.abs(h.logProb - w.logProb) < 1e-5,
        `${what}: sentence ${s} hypothesis ${i} logProb ${h.logProb} vs ${w.logProb}`,
      );
      assert.ok(
        Math.abs(h.score - w.score) < 1e-5,
        `${what}: sentence ${s} hypothesis ${i} score ${h.score} vs ${w.score}`,
      );
    });
  });
}

test('incremental decoding equals full recomputation (greedy and beam 4), leaking no tensors', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    for (const [name, config] of Object.entries(VARIANTS)) {
      await t.test(`${backend}: ${name}`, async () => {
        const model = new Transformer(config, undefined, 7);
        try {
          for (const k of [1, 4]) {
            const before = tf.memory().numTensors;
            const inc = await run(model, true, k);
            assert.equal(tf.memory().numTensors, before, `incremental decode, beam ${k}, leaves no tensors`);
            const full = await run(model, false, k);
            assert.equal(tf.memory().numTensors, before, `full recomputation, beam ${k}, leaves no tensors`);
            assertSame(inc, full, `beam ${k}`);
            for (const r of inc) {
              for (const h of r.nBest) {
                assert.equal(h.tokens[h.tokens.length - 1], config.eos_id, 'ends with EOS');
                assert.ok(
                  h.tokens.length <= SRC[inc.indexOf(r)]!.length + 5 + 1,
                  'at most source length + 5 tokens, then EOS',
                );
                for (const id of h.tokens.slice(0, -1))
                  assert.ok(id !== config.bos_id && id !== config.pad_id && id !== config.eos_id, `token ${id}`);
              }
            }
            if (k === 4)
              assert.ok(
                inc.some((r) => r.nBest.length > 1),
                'beam search finishes several hypotheses',
              );
          }
        } finally {
          model.dispose();
        }
      });
    }
  }
});

test("a step never proposes BOS or PAD, and its log-probs are the model's own elsewhere", async () => {
  await initBackend('cpu');
  const model = new Transformer(VARIANTS['post-LN, sinusoidal']!, undefined, 3);
  try {
    const m = new IncrementalModel(model);
    const out = await m.step(
      m.initial(SRC),
      Int32Array.from(SRC, () => model.config.bos_id),
    );
    const V = out.vocab;
    assert.equal(V, 20);
    // Independent: the teacher-forced forward pass over [BOS] for each sentence alone.
    for (let s = 0; s < SRC.length; s++) {
      const lp = tf.tidy(() =>
        model.forward(tf.tensor2d([SRC[s]!], undefined, 'int32'), tf.tensor2d([[1]], undefined, 'int32')),
      );
      const want = ((await lp.array()) as number[][][])[0]![0]!;
      lp.dispose();
      const row = out.logProbs.subarray(s * V, (s + 1) * V);
      assert.equal(row[model.config.bos_id], -Infinity);
      assert.equal(row[model.config.pad_id], -Infinity);
      for (let v = 0; v < V; v++)
        if (v !== model.config.bos_id && v !== model.config.pad_id)
          assert.ok(Math.abs(row[v]! - want[v]!) < 1e-5, `sentence ${s} token ${v}`);
    }
    m.release(out.state);
    m.dispose();
  } finally {
    model.dispose();
  }
});

test('select reorders, duplicates and drops rows of every cache', async () => {
  await initBackend('cpu');
  const model = new Transformer(VARIANTS['pre-LN, learned, final norm']!, undefined, 11);
  try {
    const before = tf.memory().numTensors;
    const m = new IncrementalModel(model);
    const bos = Int32Array.from(SRC, () => 1);
    // Feed BOS, then a distinct token per row; then keep rows [2, 0, 0] and feed one more token each.
    let st = (await m.step(m.initial(SRC), bos)).state;
    st = (await m.step(st, Int32Array.from([3, 4, 5]))).state;
    st = m.select(st, Int32Array.from([2, 0, 0]));
    const out = await m.step(st, Int32Array.from([6, 7, 8]));
    m.release(out.state);
    m.dispose();
    assert.equal(tf.memory().numTensors, before, 'no tensors left');
    // Reference: each row as its own sentence, through the teacher-forced forward pass.
    const rows = [
      { src: SRC[2]!, tgt: [1, 5, 6] },
      { src: SRC[0]!, tgt: [1, 3, 7] },
      { src: SRC[0]!, tgt: [1, 3, 8] },
    ];
    for (let r = 0; r < rows.length; r++) {
      const lp = tf.tidy(() =>
        model.forward(tf.tensor2d([rows[r]!.src], undefined, 'int32'), tf.tensor2d([rows[r]!.tgt], undefined, 'int32')),
      );
      const want = ((await lp.array()) as number[][][])[0]![2]!;
      lp.dispose();
      for (let v = 3; v < 20; v++)
        assert.ok(Math.abs(out.logProbs[r * 20 + v]! - want[v]!) < 1e-5, `row ${r} token ${v}`);
    }
  } finally {
    model.dispose();
  }
});
