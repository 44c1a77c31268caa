/**
 * translate / translateWithAttention on a small random Transformer: beam 1 is greedy, the returned
 * log-prob is the teacher-forced one, batching changes nothing, the output length respects the
 * model's positions, the attention has the documented shapes, and no tensors leak.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { beamSearch } from '../../src/engine/decode/beam';
import { greedyDecode } from '../../src/engine/decode/greedy';
import { FullRecomputeModel, IncrementalModel } from '../../src/engine/decode/incremental';
import { translate, translateWithAttention, type Translation } from '../../src/engine/decode/translate';
import type { TransformerConfig } from '../../src/engine/model/config';
import { Transformer } from '../../src/engine/model/transformer';
import { testBackends, unflatten } from '../helpers';

const config: TransformerConfig = {
  d_model: 16,
  heads: 4,
  d_ff: 32,
  encoder_layers: 2,
  decoder_layers: 2,
  src_vocab: 20,
  tgt_vocab: 20,
  dropout: 0.1,
  norm_first: false,
  final_norm: false,
  positional: 'sinusoidal',
  max_len: 32,
  share_embeddings: false,
  pad_id: 0,
  bos_id: 1,
  eos_id: 2,
};
const SRC = [
  [5, 6, 7, 2],
  [8, 9, 10, 11, 12, 13, 2],
  [14, 2],
  [3, 4, 5, 6, 2],
  [19, 18, 2],
];
const OPTS = { maxLenOffset: 5, alpha: 0.6 };

/** log P(Y | X) by one teacher-forced pass over [BOS, …tokens], summed over tokens and EOS. */
async function teacherForced(model: Transformer, src: number[], tokens: number[]): Promise<number> {
  const lp = tf.tidy(() =>
    model.forward(
      tf.tensor2d([src], undefined, 'int32'),
      tf.tensor2d([[config.bos_id, ...tokens]], undefined, 'int32'),
    ),
  ); // [1, T, V]
  const rows = ((await lp.array()) as number[][][])[0]!;
  lp.dispose();
  return [...tokens, config.eos_id].reduce((sum, y, t) => sum + rows[t]![y]!, 0);
}

function assertClose(got: Translation[], want: Translation[], what: string): void {
  assert.equal(got.length, want.length);
  got.forEach((g, i) => {
    assert.deepEqual(g.tokens, want[i]!.tokens, `${what}: sentence ${i} tokens`);
    assert.ok(
      Math.abs(g.logProb - want[i]!.logProb) < 1e-5,
      `${what}: sentence ${i} logProb ${g.logProb} vs ${want[i]!.logProb}`,
    );
    assert.ok(Math.abs(g.score - want[i]!.score) < 1e-5, `${what}: sentence ${i} score`);
  });
}

test('translate on every backend', async (t) => {
  for (const backend of await testBackends()) {
    await t.test(backend, async () => {
      await initBackend(backend);
      const model = new Transformer(config, undefined, 5);
      try {
        const before = tf.memory().numTensors;
        const beam4 = await translate(model, SRC, { ...OPTS, beamSize: 4 });
        const beam1 = await translate(model, SRC, { ...OPTS, beamSize: 1 });
        assert.equal(tf.memory().numTensors, before, 'translate leaves no tensors');

        // Beam 1 is greedy: against greedy search over the full-recomputation model.
        const ref = new FullRecomputeModel(model);
        const greedy = await greedyDecode(ref, ref.initial(SRC), {
          bos: 1,
          eos: 2,
          sourceLengths: SRC.map((s) => s.length),
          ...OPTS,
        });
        const asTranslations = (rs: typeof greedy): Translation[] =>
          rs.map((r) => ({ tokens: [...r.best.tokens].slice(0, -1), logProb: r.best.logProb, score: r.best.score }));
        assertClose(beam1, asTranslations(greedy), 'beam 1 vs greedy');
        // …and beam search with k = 1 over the incremental model finds the same.
        const inc = new IncrementalModel(model);
        const k1 = await beamSearch(inc, inc.initial(SRC), {
          bos: 1,
          eos: 2,
          sourceLengths: SRC.map((s) => s.length),
          ...OPTS,
          beamSize: 1,
        });
        inc.dispose();
        assertClose(beam1, asTranslations(k1), 'beam 1 vs beam search k = 1');

        // Returned log-probs are the teacher-forced ones; scores are GNMT-normalized with EOS counted.
        for (const out of [beam4, beam1]) {
          for (let s = 0; s < SRC.length; s++) {
            const { tokens, logProb, score } = out[s]!;
            assert.ok(
              !tokens.includes(config.eos_id) && !tokens.includes(config.bos_id) && !tokens.includes(config.pad_id),
              'no special tokens',
            );
            assert.ok(tokens.length <= SRC[s]!.length + OPTS.maxLenOffset);
            const want = await teacherForced(model, SRC[s]!, tokens);
            assert.ok(Math.abs(logProb - want) < 1e-4, `sentence ${s}: ${logProb} vs teacher-forced ${want}`);
            assert.ok(Math.abs(score - logProb / ((5 + tokens.length + 1) / 6) ** 0.6) < 1e-9, 'score');
          }
        }
        // Beam search maximizes the score over a wider search than greedy: on this model it
        // should not lose to greedy on most sentences (it may on some: the search is not exact).
        assert.ok(
          beam4.filter((b, s) => b.score >= beam1[s]!.score - 1e-6).length >= 3,
          'beam 4 mostly scores at least greedy',
        );
      } finally {
        model.dispose();
      }
    });
  }
});

test('batching is invisible: sentences together equal each alone', async () => {
  await initBackend('wasm');
  const model = new Transformer({ ...config, norm_first: true, final_norm: true, positional: 'learned' }, undefined, 9);
  try {
    for (const beamSize of [1, 4]) {
      const together = await translate(model, SRC, { ...OPTS, beamSize, batchSize: 32 });
      const inTwos = await translate(model, SRC, { ...OPTS, beamSize, batchSize: 2 });
      const alone: Translation[] = [];
      for (const s of SRC) alone.push(...(await translate(model, [s], { ...OPTS, beamSize })));
      assertClose(together, alone, `beam ${beamSize}, one batch`);
      assertClose(inTwos, alone, `beam ${beamSize}, batches of two`);
    }
    assert.deepEqual(await translate(model, []), []);
  } finally {
    model.dispose();
  }
});

test('output length is capped by max_len (BOS + tokens fill the decoder positions)', async () => {
  await initBackend('cpu');
  const model = new Transformer({ ...config, max_len: 6 }, undefined, 5);
  try {
    const out = await translate(
      model,
      [
        [5, 6, 2],
        [7, 2],
      ],
      { beamSize: 2 },
    ); // default +50 would overrun
    for (const o of out) assert.ok(o.tokens.length <= 5, `${o.tokens.length} tokens`);
    await assert.rejects(translate(model, [[]]), /empty/);
    await assert.rejects(translate(model, [[5, 25, 2]]), /outside the vocabulary/);
    await assert.rejects(translate(model, [[5, 2]], { beamSize: 0 }), /beamSize/);
  } finally {
    model.dispose();
  }
});

test('translateWithAttention: the chosen hypothesis and its attention, shaped per layer and head', async () => {
  await initBackend('wasm');
  const model = new Transformer(config, undefined, 5);
  try {
    const src = SRC[1]!;
    const before = tf.memory().numTensors;
    const got = await translateWithAttention(model, src, { ...OPTS, beamSize: 4 });
    assert.equal(tf.memory().numTensors, before, 'no tensors left');
    const [plain] = await translate(model, [src], { ...OPTS, beamSize: 4 });
    assertClose([got], [plain!], 'same translation');
    const S = src.length;
    const T = got.tokens.length + 1;
    const nest = (k: string) => {
      const m = got.maps.find((x) => x.kind === k)!;
      return unflatten(m.weights, m.shape) as number[][][][];
    };
    const [encoder_self, decoder_self, cross] = [nest('encoder_self'), nest('decoder_self'), nest('cross')];
    for (const [name, w, rows, cols] of [
      ['encoder_self', encoder_self, S, S],
      ['decoder_self', decoder_self, T, T],
      ['cross', cross, T, S],
    ] as const) {
      assert.equal(w.length, 2, `${name}: layers`);
      for (const layer of w) {
        assert.equal(layer.length, 4, `${name}: heads`);
        for (const head of layer) {
          assert.equal(head.length, rows, `${name}: rows`);
          head.forEach((row, i) => {
            assert.equal(row.length, cols, `${name}: columns`);
            assert.ok(
              Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5,
              `${name}: a row of softmax weights sums to 1`,
            );
            if (name === 'decoder_self')
              for (let j = i + 1; j < cols; j++) assert.equal(row[j], 0, 'causal: no weight on later positions');
          });
        }
      }
    }
    // Position 0 of the decoder attends only to BOS.
    for (const layer of decoder_self) for (const head of layer) assert.equal(head[0]![0], 1);
  } finally {
    model.dispose();
  }
});

test('the beam tree: every node’s log-prob is the teacher-forced log-prob of its prefix; the chosen leaf is the best', async () => {
  await initBackend('cpu');
  const model = new Transformer(config, undefined, 11);
  try {
    const out = await translate(model, SRC.slice(0, 3), { ...OPTS, beamSize: 3, tree: true });
    for (const [i, t] of out.entries()) {
      const tree = t.tree!;
      const prefix = (id: number): number[] => {
        const n = tree.nodes[id]!;
        return n.parent < 0 ? [] : [...prefix(n.parent), n.token];
      };
      let worst = 0;
      for (const n of tree.nodes.slice(1)) {
        const p = prefix(n.id);
        assert.equal(p.length, n.depth);
        worst = Math.max(worst, Math.abs(n.logProb - (await prefixLogProb(model, SRC[i]!, p))));
      }
      assert.ok(worst < 1e-4, `sentence ${i}: largest |node − teacher-forced| ${worst}`);
      const leaf = tree.nodes[tree.nBest[0]!]!;
      assert.ok(leaf.chosen && leaf.status === 'finished');
      assert.deepEqual(prefix(leaf.id), [...t.tokens, config.eos_id]);
      assert.ok(Math.abs(leaf.score - t.score) < 1e-9);
      assert.equal(tree.nodes.filter((n) => n.chosen).length, t.tokens.length + 2, 'root, tokens, EOS');
    }
  } finally {
    model.dispose();
  }
});

/** Σ_t log p(prefix_t | BOS, prefix_<t, X) by one teacher-forced pass over [BOS, …prefix without its last]. */
async function prefixLogProb(model: Transformer, src: number[], prefix: number[]): Promise<number> {
  const lp = tf.tidy(() =>
    model.forward(
      tf.tensor2d([src], undefined, 'int32'),
      tf.tensor2d([[config.bos_id, ...prefix.slice(0, -1)]], undefined, 'int32'),
    ),
  ); // [1, T, V]
  const rows = ((await lp.array()) as number[][][])[0]!;
  lp.dispose();
  return prefix.reduce((sum, y, t) => sum + rows[t]![y]!, 0);
}
