/**
 * Ablation at inference (issue 13) checked by building the ablated model by hand: removing head h
 * before W^O is the model with W^O's columns h·d_k … (h+1)·d_k zeroed; replacing it by its mean
 * output m_h is that model with m_h·W^O_{:,h}ᵀ added to W^O's bias. The mean is worked out here
 * from the recorded head outputs over the real (not padded) query rows.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_KINDS, type AttentionKind } from '../../src/protocol/attention';
import { ablatedHeads, ablationGates } from '../../src/engine/ablate/gates';
import { initBackend } from '../../src/engine/backend';
import { attentionOfPairs } from '../../src/engine/inspect/attentionOfPairs';
import { beamSearch } from '../../src/engine/decode/beam';
import { FullRecomputeModel, IncrementalModel } from '../../src/engine/decode/incremental';
import { translate } from '../../src/engine/decode/translate';
import { Transformer } from '../../src/engine/model/transformer';
import { smallConfig } from '../helpers';

before(async () => {
  await initBackend('cpu');
});

const config = smallConfig({ heads: 4, encoder_layers: 2, decoder_layers: 2 });
const dk = config.d_model / config.heads;
const PREFIX: Record<AttentionKind, (l: number) => string> = {
  encoder_self: (l) => `encoder.layers.${l}.self_attn`,
  decoder_self: (l) => `decoder.layers.${l}.self_attn`,
  cross: (l) => `decoder.layers.${l}.multihead_attn`,
};
// Two pairs of different lengths: the shorter one's padding must not enter a mean.
const SRC = [
  [5, 6, 7, 8, 2],
  [9, 4, 2],
];
const TGT = [
  [1, 8, 7, 6, 5],
  [1, 4, 9],
];
const PROBE = { src: SRC, tgt: TGT };

async function logProbs(model: Transformer, heads?: Parameters<typeof attentionOfPairs>[3]): Promise<Float32Array[]> {
  return (await attentionOfPairs(model, SRC, TGT, heads)).map((p) => p.logProbs);
}

function assertClose(a: Float32Array[], b: Float32Array[], what: string): void {
  let worst = 0;
  a.forEach((x, i) => x.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - b[i]![j]!)))));
  assert.ok(worst < 1e-4, `${what}: largest difference ${worst}`);
}

/** W^O with head h's columns zeroed, and (for mean ablation) m·W^O_{:,h}ᵀ added to its bias. */
function editOutProj(model: Transformer, kind: AttentionKind, layer: number, head: number, mean?: Float32Array): void {
  const w = model.params.get(`${PREFIX[kind](layer)}.out_proj.weight`)!; // [d, d]: y = x·Wᵀ + b
  const b = model.params.get(`${PREFIX[kind](layer)}.out_proj.bias`)!; // [d]
  const W = w.arraySync() as number[][];
  const bias = b.arraySync() as number[];
  for (let i = 0; i < config.d_model; i++) {
    for (let j = head * dk; j < (head + 1) * dk; j++) {
      if (mean) bias[i]! += W[i]![j]! * mean[j - head * dk]!;
      W[i]![j] = 0;
    }
  }
  w.assign(tf.tensor2d(W));
  b.assign(tf.tensor1d(bias));
}

/** Head `head`'s mean output over the real query rows of the probe pairs, worked out from the recorded outputs. */
async function meanByHand(model: Transformer, kind: AttentionKind, layer: number, head: number): Promise<Float32Array> {
  const sum = new Float32Array(dk);
  let rows = 0;
  for (let b = 0; b < SRC.length; b++) {
    const recordHeads = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, [] as tf.Tensor4D[]])) as Record<
      AttentionKind,
      tf.Tensor4D[]
    >;
    const record = Object.fromEntries(ATTENTION_KINDS.map((k) => [k, [] as tf.Tensor4D[]])) as typeof recordHeads;
    // One pair at a time, unpadded: its own rows only.
    tf.tidy(() => {
      model.forward(tf.tensor2d([SRC[b]!], undefined, 'int32'), tf.tensor2d([TGT[b]!], undefined, 'int32'), {
        training: false,
        record,
        recordHeads,
      });
    });
    const out = (await recordHeads[kind][layer]!.array()) as number[][][][]; // [1, h, Q, dv]
    for (const row of out[0]![head]!) {
      row.forEach((v, j) => (sum[j]! += v));
      rows++;
    }
    for (const k of ATTENTION_KINDS) tf.dispose([...record[k], ...recordHeads[k]]);
  }
  return sum.map((v) => v / rows);
}

for (const [kind, layer, head] of [
  ['encoder_self', 1, 2],
  ['decoder_self', 0, 3],
  ['cross', 1, 0],
] as [AttentionKind, number, number][]) {
  test(`zero and mean ablation of ${kind}:${layer}.${head} equal the model edited by hand`, async () => {
    const model = new Transformer(config, undefined, 7);
    const id = `${kind}:${layer}.${head}`;
    try {
      const intact = await logProbs(model);
      const zero = ablationGates(model, { heads: [id], mode: 'zero' });
      const zeroed = await logProbs(model, zero.heads);
      zero.dispose();
      const mean = ablationGates(model, { heads: [id], mode: 'mean' }, PROBE);
      const meaned = await logProbs(model, mean.heads);
      mean.dispose();
      const m = await meanByHand(model, kind, layer, head);
      assert.ok(
        intact.some((x, i) => x.some((v, j) => Math.abs(v - zeroed[i]![j]!) > 1e-3)),
        'the head matters',
      );

      const byHandZero = new Transformer(config, undefined, 7);
      editOutProj(byHandZero, kind, layer, head);
      assertClose(zeroed, await logProbs(byHandZero), 'zero ablation');
      byHandZero.dispose();

      const byHandMean = new Transformer(config, undefined, 7);
      editOutProj(byHandMean, kind, layer, head, m);
      assertClose(meaned, await logProbs(byHandMean), 'mean ablation');
      byHandMean.dispose();
    } finally {
      model.dispose();
    }
  });
}

test('heads that do not exist are refused, naming the head and the ranges', () => {
  const model = new Transformer(config, undefined, 7);
  try {
    assert.throws(
      () => ablatedHeads(model, { heads: ['cross:2.0'], mode: 'zero' }),
      /cross:2\.0 does not exist: cross has layers 0–1 and heads 0–3/,
    );
    assert.throws(() => ablatedHeads(model, { heads: ['encoder:0.0'], mode: 'zero' }), /not a head id like cross:0\.1/);
    assert.throws(() => ablationGates(model, { heads: ['cross:0.0'], mode: 'mean' }), /mean ablation needs pairs/);
  } finally {
    model.dispose();
  }
});

test('decoding with heads ablated: the incremental decoder equals full recomputation under the same gates', async () => {
  const model = new Transformer(config, undefined, 7);
  const gates = ablationGates(
    model,
    { heads: ['cross:1.0', 'decoder_self:0.3', 'encoder_self:1.2'], mode: 'mean' },
    PROBE,
  );
  try {
    const sources = SRC.map((s) => [...s]);
    const opts = {
      bos: config.bos_id,
      eos: config.eos_id,
      sourceLengths: sources.map((s) => s.length),
      maxLenOffset: 6,
    };
    const run = async (m: IncrementalModel | FullRecomputeModel, initial: unknown) =>
      (await beamSearch(m as never, initial as never, { ...opts, beamSize: 3 })).map((r) => ({
        tokens: [...r.best.tokens],
        logProb: r.best.logProb,
      }));
    const inc = new IncrementalModel(model, gates.heads);
    const full = new FullRecomputeModel(model, gates.heads);
    const a = await run(inc, inc.initial(sources));
    inc.dispose();
    const b = await run(full, full.initial(sources));
    assert.deepEqual(
      a.map((x) => x.tokens),
      b.map((x) => x.tokens),
    );
    a.forEach((x, i) => assert.ok(Math.abs(x.logProb - b[i]!.logProb) < 1e-4));
    // And the gates change what is decoded or how it scores: the ablation reaches the decoder.
    const intact = await translate(model, sources, { beamSize: 3, maxLenOffset: 6 });
    const ablated = await translate(model, sources, { beamSize: 3, maxLenOffset: 6, heads: gates.heads });
    assert.ok(intact.some((t, i) => Math.abs(t.logProb - ablated[i]!.logProb) > 1e-3));
    ablated.forEach((t, i) => assert.ok(Math.abs(t.logProb - a[i]!.logProb) < 1e-4, 'translate uses the gates'));
  } finally {
    gates.dispose();
    model.dispose();
  }
});
