/**
 * heads/scores (engine/inspect/headScores.ts): a query row's pre-softmax scores split into parts.
 * Hand-worked on a tiny model whose layer-0 head 0 is set by hand; on random models every split
 * sums to the score (1e-5) and the scores' softmax is the model's own row of weights; each bound
 * is refused naming its field.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { attentionOfPairs } from '../../src/engine/inspect/attentionOfPairs';
import { headScores, type ScoreParts } from '../../src/engine/inspect/headScores';
import { Transformer } from '../../src/engine/model/transformer';
import { ATTENTION_KINDS, type HeadRef } from '../../src/protocol/attention';
import { checkHeadScores, checkHeadScoresParams } from '../../src/protocol/headScores';
import { maxAbsDiff, smallConfig } from '../helpers';

before(async () => {
  await initBackend('wasm');
});

/** Sets rows of a parameter by hand: `rows` maps a row index to its values. */
function setRows(model: Transformer, name: string, rows: Record<number, number[]>): void {
  const v = model.params.get(name)!;
  const data = v.dataSync().slice();
  const width = v.shape.length === 1 ? 1 : v.shape[1]!;
  for (const [r, values] of Object.entries(rows)) data.set(values, Number(r) * width);
  v.assign(tf.tensor(data, v.shape));
}

test('the worked example: token·position split, bias terms and dimensions of encoder_self:0.0, query 0', async () => {
  // d_model 4, 2 heads (d_k 2), learned positions: x_j = √4·E[token_j] + P[j].
  //   source 3 4 2: √4·E = [1,0,0,0], [0,1,0,0], [0,0,0,0]; P = [0,0,1,0], [0,0,0,1], [0,0,1,1].
  // Head 0: W^Q rows [1,0,2,0], [1,1,0,−1], b^Q [1,1]; W^K rows [1,2,0,1], [0,1,1,0], b^K [0,2].
  // Query 0: token part t_q = [1,1], position part p_q = [2,0]; q0 = [3,1], q = [4,2].
  // Keys:  token parts t_k = [1,0], [2,1], [0,0]; position parts p_k = [0,1], [1,0], [1,1];
  //        k0 = [1,1], [3,1], [1,1]; k = k0 + b^K = [1,3], [3,3], [1,3].
  // Each ×√2 (every part is divided by √d_k = √2):
  //   token·token t_q·t_k = 1, 3, 0;  token·position t_q·p_k = 1, 1, 2;
  //   position·token p_q·t_k = 2, 4, 0;  position·position p_q·p_k = 0, 2, 2;  their sum q0·k0 = 4, 10, 4.
  //   b^Q·k0 = 2, 4, 2;  q0·b^K = 2 (each key);  b^Q·b^K = 2.   Scores q·k = 10, 18, 10.
  //   Dimensions q[m]·k[m]: [4, 6], [12, 6], [4, 6]; key 1's largest is dimension 0.
  const model = new Transformer(smallConfig({ d_model: 4, heads: 2, positional: 'learned', share_embeddings: false }));
  try {
    setRows(model, 'src_embed.weight', { 2: [0, 0, 0, 0], 3: [0.5, 0, 0, 0], 4: [0, 0.5, 0, 0] });
    setRows(model, 'encoder.pos_embed.weight', { 0: [0, 0, 1, 0], 1: [0, 0, 0, 1], 2: [0, 0, 1, 1] });
    const w = 'encoder.layers.0.self_attn.in_proj_weight'; // rows 0–3 W^Q, 4–7 W^K
    setRows(model, w, { 0: [1, 0, 2, 0], 1: [1, 1, 0, -1], 4: [1, 2, 0, 1], 5: [0, 1, 1, 0] });
    const b = model.params.get('encoder.layers.0.self_attn.in_proj_bias')!;
    const bias = b.dataSync().slice();
    bias.set([1, 1], 0);
    bias.set([0, 2], 4);
    b.assign(tf.tensor1d(bias));

    const r = await headScores(model, [3, 4, 2], [1, 5], { kind: 'encoder_self', layer: 0, head: 0 }, 0);
    const s = (xs: number[]) => xs.map((x) => x / Math.SQRT2);
    const near = (got: unknown, want: unknown, what: string) =>
      assert.ok(maxAbsDiff(got, want) < 1e-5, `${what}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
    near(r.embedding!.tokenToken, s([1, 3, 0]), 'token·token');
    near(r.embedding!.tokenPosition, s([1, 1, 2]), 'token·position');
    near(r.embedding!.positionToken, s([2, 4, 0]), 'position·token');
    near(r.embedding!.positionPosition, s([0, 2, 2]), 'position·position');
    near(r.bias.input, s([4, 10, 4]), 'input');
    near(r.bias.queryBiasKey, s([2, 4, 2]), 'b^Q·k');
    near(r.bias.queryKeyBias, s([2, 2, 2]), 'q·b^K');
    near(r.bias.biasBias, 2 / Math.SQRT2, 'b^Q·b^K');
    near(r.scores, s([10, 18, 10]), 'scores');
    near(r.dimensions, [s([4, 6]), s([12, 6]), s([4, 6])], 'dimensions');
    assert.deepEqual(
      r.topDimensions[1]!.map((t) => t.dim),
      [0, 1],
    );
    assert.deepEqual(r.masked, [false, false, false]);
    const e = [10, 18, 10].map((x) => Math.exp(x / Math.SQRT2));
    near(
      r.weights,
      e.map((x) => x / (e[0]! + e[1]! + e[2]!)),
      'weights',
    );
  } finally {
    model.dispose();
  }
});

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Every split of a row sums to its scores, and the scores' softmax over unmasked keys is the row of weights. */
function checkParts(r: ScoreParts, row: Float32Array, what: string): void {
  r.scores.forEach((score, j) => {
    const parts = [
      ['dimensions', sum(r.dimensions[j]!)],
      ['bias terms', r.bias.input[j]! + r.bias.queryBiasKey[j]! + r.bias.queryKeyBias[j]! + r.bias.biasBias],
    ] as [string, number][];
    if (r.embedding) {
      const e = r.embedding;
      const input = e.tokenToken[j]! + e.tokenPosition[j]! + e.positionToken[j]! + e.positionPosition[j]!;
      parts.push(['embedding terms', input + r.bias.queryBiasKey[j]! + r.bias.queryKeyBias[j]! + r.bias.biasBias]);
    }
    for (const [name, total] of parts)
      assert.ok(Math.abs(total - score) < 1e-5, `${what} key ${j}: ${name} sum ${total} ≠ score ${score}`);
  });
  const open = r.scores.map((s, j) => (r.masked[j] ? -Infinity : s));
  const top = Math.max(...open);
  const e = open.map((s) => Math.exp(s - top));
  const softmax = e.map((x) => x / sum(e));
  assert.ok(maxAbsDiff(softmax, Array.from(row)) < 1e-5, `${what}: softmax(scores) is not the model's row`);
  assert.ok(maxAbsDiff(r.weights, Array.from(row)) < 1e-6, `${what}: weights are not attention/get's`);
}

for (const norm_first of [false, true])
  test(`on a random ${norm_first ? 'pre' : 'post'}-LN model every split sums to the score and softmax gives the weights`, async () => {
    const model = new Transformer(
      smallConfig({ encoder_layers: 2, decoder_layers: 2, heads: 4, norm_first }),
      undefined,
      7,
    );
    try {
      const src = [5, 9, 3, 7, 2];
      const tgt = [1, 4, 8, 6];
      const [pair] = await attentionOfPairs(model, [src], [tgt]);
      for (const kind of ATTENTION_KINDS)
        for (const layer of [0, 1])
          for (const head of [0, 3])
            for (const query of [0, kind === 'encoder_self' ? 4 : 3]) {
              const ref: HeadRef = { kind, layer, head };
              const r = await headScores(model, src, tgt, ref, query);
              const m = pair!.maps.find((x) => x.kind === kind)!;
              const [, H, Q, K] = m.shape;
              const at = ((layer * H + head) * Q + query) * K;
              checkParts(r, m.weights.subarray(at, at + K), `${kind}:${layer}.${head} query ${query}`);
              const exact = kind !== 'cross' && layer === 0 && !norm_first;
              assert.equal(!!r.embedding, exact, `${kind}:${layer} embedding split`);
              if (norm_first && kind !== 'cross' && layer === 0) assert.match(r.embeddingNote!, /pre-LN/);
              if (kind === 'decoder_self')
                assert.deepEqual(
                  r.masked,
                  [0, 1, 2, 3].map((j) => j > query),
                );
              const reply = {
                ...ref,
                step: 0,
                queryToken: 'q',
                keyTokens: r.scores.map(() => 'k'),
                tgtTokens: [],
                ...r,
              };
              assert.equal(checkHeadScores(reply, 'result'), undefined);
            }
    } finally {
      model.dispose();
    }
  });

test('a layer, head or query past the model is refused naming the field and its bound', async () => {
  const model = new Transformer(smallConfig({ heads: 2 }));
  try {
    const ask = (ref: HeadRef, query: number) => headScores(model, [5, 6, 2], [1, 7], ref, query);
    await assert.rejects(ask({ kind: 'cross', layer: 1, head: 0 }, 0), /layer must be below 1 \(cross has 1 layers/);
    await assert.rejects(
      ask({ kind: 'encoder_self', layer: 0, head: 2 }, 0),
      /head must be below 2 \(the run has 2 heads/,
    );
    await assert.rejects(
      ask({ kind: 'encoder_self', layer: 0, head: 0 }, 3),
      /query must be below 3 \(the source has 3 tokens/,
    );
    await assert.rejects(
      ask({ kind: 'decoder_self', layer: 0, head: 0 }, 2),
      /query must be below 2 \(the target has 2 tokens/,
    );
  } finally {
    model.dispose();
  }
  const params = { runDir: '/r', input: { kind: 'probe' }, kind: 'cross', layer: 0, head: 0, query: 0 };
  assert.equal(checkHeadScoresParams(params, 'params'), undefined);
  assert.match(
    checkHeadScoresParams({ ...params, query: 9000 }, 'params')!,
    /params.query must be a whole number from 0 to 8192/,
  );
  assert.match(checkHeadScoresParams({ ...params, layer: -1 }, 'params')!, /params.layer must be a whole number ≥ 0/);
  assert.match(checkHeadScoresParams({ ...params, kind: 'self' }, 'params')!, /params.kind must be one of/);
  assert.match(checkHeadScoresParams({ ...params, beam: 0 }, 'params')!, /params.beam must be a whole number from 1/);
});
