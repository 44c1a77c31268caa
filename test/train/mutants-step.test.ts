/**
 * train/step.ts where gradients.test.ts (PyTorch's step) and clipping.test.ts leave it open: the
 * token count, per-head gradient norms against PyTorch's gradients by their definition, the steps it
 * must not apply (a NaN loss; a finite loss whose gradient overflows), dropout seeds drawn upward from
 * `seed`, and no tensors left behind. Found by mutants that survived those tests (test/README.md,
 * "Mutation score"). On cpu.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { namedVariables } from '../../src/engine/model/params';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { smoothedLossFromLogits } from '../../src/engine/train/loss';
import { countTokens, trainStep } from '../../src/engine/train/step';
import { headWeightNorms } from '../../src/engine/telemetry/heads';
import { loadWithoutDropout, readStepFixture, RecordingAdam } from '../engine/stepFixture';
import { smallConfig, TOY_BATCH } from '../helpers';

const CASE = 'post_ln_learned';

before(async () => {
  await initBackend('cpu');
});

test('countTokens counts the ids that are not the pad id', () => {
  assert.equal(
    countTokens(
      [
        [5, 0, 7],
        [0, 0],
        [2, 2, 0, 9],
      ],
      0,
    ),
    5,
  );
  assert.equal(countTokens([[7, 7, 1]], 7), 1);
  assert.equal(countTokens([], 0), 0);
});

/**
 * [W^Q, W^K, W^V, W^O][head]: each head's slice norm of PyTorch's tensors by name (its weights or its
 * gradients), rows h·dk… of each third of in_proj_weight and columns h·dk… of out_proj.weight.
 */
function pytorchMatrixNorms(tensors: Record<string, ArrayLike<number>>, layers: number, h: number, d: number) {
  const dk = d / h;
  const attentions = ['encoder.layers.%.self_attn', 'decoder.layers.%.self_attn', 'decoder.layers.%.multihead_attn'];
  const out: number[][] = [[], [], [], []];
  for (const pattern of attentions) {
    for (let l = 0; l < layers; l++) {
      const name = pattern.replace('%', String(l));
      const inProj = tensors[`${name}.in_proj_weight`]!; // [3d, d] row-major
      const outProj = tensors[`${name}.out_proj.weight`]!; // [d, d]: head h owns columns h·dk…
      for (let head = 0; head < h; head++) {
        for (let block = 0; block < 3; block++) {
          let sq = 0;
          for (let r = block * d + head * dk; r < block * d + (head + 1) * dk; r++)
            for (let c = 0; c < d; c++) sq += inProj[r * d + c]! ** 2;
          out[block]!.push(Math.sqrt(sq));
        }
        let sq = 0;
        for (let r = 0; r < d; r++) for (let c = head * dk; c < (head + 1) * dk; c++) sq += outProj[r * d + c]! ** 2;
        out[3]!.push(Math.sqrt(sq));
      }
    }
  }
  return out;
}

/** Per head, ‖[∇W^Q_h; ∇W^K_h; ∇W^V_h; ∇W^O_{:,h}]‖ from PyTorch's gradients (telemetry/heads.ts's definition). */
function pytorchHeadNorms(grads: Record<string, number[]>, layers: number, h: number, d: number): number[] {
  const [q, k, v, o] = pytorchMatrixNorms(grads, layers, h, d);
  return q!.map((_, i) => Math.hypot(q![i]!, k![i]!, v![i]!, o![i]!));
}

/** Each of `got` within 1e-4 relative of `want`'s. */
function near(got: ArrayLike<number> | undefined, want: number[], what: string): void {
  assert.equal(got?.length, want.length, `${what}: ${want.length} values`);
  want.forEach((w, i) => assert.ok(Math.abs(got![i]! - w) <= 1e-4 * w, `${what} ${i}: ${got![i]}, PyTorch ${w}`));
}

test('per-head gradient norms when asked: PyTorch’s by definition; none on an applied step not asking', async () => {
  const f = readStepFixture(CASE);
  const batch = { src: f.src, tgtIn: f.tgt_in, tgtOut: f.tgt_out };
  const { model } = loadWithoutDropout(CASE);
  const c = model.config;
  const asked = await trainStep(model, new RecordingAdam(false), batch, {
    lr: 1e-3,
    labelSmoothing: 0.1,
    headGradNorms: true,
  });
  assert.equal(asked.applied, true);
  assert.equal(asked.tokens, countTokens(f.tgt_out, c.pad_id));
  const want = pytorchHeadNorms(f.grads, c.encoder_layers, c.heads, c.d_model);
  assert.equal(asked.headGradNorms?.length, 3 * 2 * c.heads);
  near(asked.headGradNorms, want, 'head');
  // W^Q's norms of every head, then W^K's, W^V's and W^O's.
  near(asked.headMatrixGradNorms, pytorchMatrixNorms(f.grads, c.encoder_layers, c.heads, c.d_model).flat(), 'matrix');
  const plain = await trainStep(model, new RecordingAdam(false), batch, { lr: 1e-3, labelSmoothing: 0.1 });
  assert.equal(plain.applied, true);
  assert.ok(!('headGradNorms' in plain), 'not asked, applied: no per-head norms');
  model.dispose();
});

test('per-head weight norms of W^Q, W^K, W^V and W^O: PyTorch’s tensors sliced by hand', async () => {
  const { model, before } = loadWithoutDropout(CASE);
  const c = model.config;
  const want = pytorchMatrixNorms(Object.fromEntries(before), c.encoder_layers, c.heads, c.d_model);
  assert.ok(new Set(want.flat()).size > 10, 'the heads differ');
  near(await headWeightNorms(model), want.flat(), 'weight');
  model.dispose();
});

/** Runs one step with Adam on a model whose `param` was set by `poison`; the weights before and after. */
async function poisonedStep(param: string, poison: (v: tf.Variable) => tf.Tensor) {
  const f = readStepFixture(CASE);
  const { model } = loadWithoutDropout(CASE);
  const v = model.params.get(param)!;
  v.assign(poison(v));
  const named = namedVariables(model.params);
  const before = await Promise.all(named.map(([, p]) => p.data()));
  const adam = new Adam();
  const r = await trainStep(
    model,
    adam,
    { src: f.src, tgtIn: f.tgt_in, tgtOut: f.tgt_out },
    {
      lr: 1e-3,
      labelSmoothing: 0.1,
      clipNorm: 1,
    },
  );
  const after = await Promise.all(named.map(([, p]) => p.data()));
  const step = adam.step;
  adam.dispose();
  model.dispose();
  return { r, step, unchanged: after.every((a, i) => a.every((x, j) => Object.is(x, before[i]![j]))) };
}

test('a NaN loss is not applied: the weights stay, Adam does not count it, per-head norms say where', async () => {
  const { r, step, unchanged } = await poisonedStep('src_embed.weight', (v) => tf.fill(v.shape, NaN));
  assert.ok(Number.isNaN(r.loss), `loss ${r.loss}`);
  assert.equal(r.applied, false);
  assert.equal(step, 0);
  assert.ok(unchanged, 'a weight moved');
  assert.equal(r.headGradNorms?.length, 24, 'a step not applied reports its per-head norms unasked');
});

test('a finite loss whose gradient overflows is not applied either', async () => {
  // Logits of order 1e30 keep log-softmax (and the loss) finite, but ∂L/∂y = (p − q)·W is of order 1e30
  // before the decoder, and its squares overflow float32: ‖g‖ = ∞.
  const { r, step, unchanged } = await poisonedStep('generator.weight', (v) => tf.mul(v, 1e30));
  assert.ok(Number.isFinite(r.loss), `loss ${r.loss}`);
  assert.equal(r.gradNorm, Infinity);
  assert.equal(r.applied, false);
  assert.equal(step, 0);
  assert.ok(unchanged, 'a weight moved');
});

const config = smallConfig({ heads: 4, src_vocab: 20, tgt_vocab: 20, dropout: 0.3 });
const batch = TOY_BATCH;

test('dropout seeds: `seed`, seed + 1, … one per dropout site (the trainer spaces steps 1000 apart)', async () => {
  const model = new Transformer(config, undefined, 21);
  const opts = { lr: 1e-3, labelSmoothing: 0.1 };
  const seeded = (await trainStep(model, new RecordingAdam(false), batch, { ...opts, seed: 4000 })).loss;
  // The same pass by hand: the model's logits with the seeds 4000, 4001, … and the loss over them.
  let next = 4000;
  const byHand = tf.tidy(() => {
    const logits = model.logits(
      tf.tensor2d(batch.src, undefined, 'int32'),
      tf.tensor2d(batch.tgtIn, undefined, 'int32'),
      { training: true, nextSeed: () => next++ },
    );
    const r = smoothedLossFromLogits(
      tf.reshape(logits, [-1, config.tgt_vocab]) as tf.Tensor2D,
      tf.tensor1d(batch.tgtOut.flat(), 'int32'),
      0,
      0.1,
      7,
    );
    r.nll.dispose();
    return r.loss;
  });
  assert.equal(next - 4000, 2 + 2 + 3, 'the model has 7 dropout sites (dropout.test.ts)');
  assert.ok(Math.abs((await byHand.data())[0]! - seeded) < 1e-6, `${seeded} vs ${(await byHand.data())[0]}`);
  byHand.dispose();
  const a = await trainStep(model, new RecordingAdam(false), batch, opts);
  const b = await trainStep(model, new RecordingAdam(false), batch, opts);
  assert.notEqual(a.loss, b.loss, 'without a seed each step draws its own masks');
  model.dispose();
});

test('a step leaves no tensors behind: the first adds Adam’s two moments per parameter, the next nothing', async () => {
  const model = new Transformer({ ...config, dropout: 0 }, undefined, 22);
  const adam = new Adam();
  const opts = { lr: 1e-3, labelSmoothing: 0.1, clipNorm: 0.5, headGradNorms: true };
  const start = tf.memory().numTensors;
  await trainStep(model, adam, batch, opts);
  assert.equal(tf.memory().numTensors - start, 2 * namedVariables(model.params).length);
  const second = tf.memory().numTensors;
  await trainStep(model, adam, batch, opts);
  assert.equal(tf.memory().numTensors, second);
  adam.dispose();
  model.dispose();
});

test('a clip norm ≤ 0 clips nothing: a negative one does not turn the gradient around', async () => {
  const f = readStepFixture(CASE);
  const { model } = loadWithoutDropout(CASE);
  const named = namedVariables(model.params);
  const recorded = async (clipNorm: number) => {
    const spy = new RecordingAdam(false);
    await trainStep(
      model,
      spy,
      { src: f.src, tgtIn: f.tgt_in, tgtOut: f.tgt_out },
      { lr: 1e-3, labelSmoothing: 0.1, clipNorm },
    );
    return [...(await spy.take(named)).values()];
  };
  const none = await recorded(0);
  const negative = await recorded(-1);
  assert.ok(
    negative.every((g, i) => g.every((x, j) => x === none[i]![j])),
    'clipNorm −1 changed the gradient',
  );
  model.dispose();
});
