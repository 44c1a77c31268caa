/**
 * train/loss.ts at the edges of §5.4's label smoothing, worked by hand: no smoothing (the loss is the
 * NLL), all of it (confidence 0), the fewest classes it allows (3) and one too few, a pad id other
 * than 0, means over several tokens and over none; the written-down gradient p − q; and on wasm the
 * fused kernel doing the work. Both labelSmoothedLoss (log-probs) and smoothedLossFromLogits, on cpu
 * (tfjs ops) and wasm (native kernel). Found by mutants that survived fused-loss.test.ts and
 * train-step.test.ts (test/README.md, "Mutation score").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { hasFusedKernel, SMOOTHED_CROSS_ENTROPY } from '../../src/engine/backend/fusedKernels';
import { labelSmoothedLoss, smoothedLossFromLogits } from '../../src/engine/train/loss';
import { maxAbsDiff } from '../helpers';

const BACKENDS = ['cpu', 'wasm'] as const;

interface Case {
  name: string;
  /** Probabilities per row (the logits are their logs). */
  p: number[][];
  targets: number[];
  pad: number;
  smoothing: number;
  tokens: number;
  loss: number;
  nll: number;
  /** ∂loss/∂logits = (p − q)·keep/max(tokens, 1). */
  grad: number[][];
}

const ln = Math.log;
const CASES: Case[] = [
  {
    // V = 2 is allowed without smoothing: q is one-hot, KL = −log p(target) = −ln ¾.
    name: 'no smoothing: the loss is the NLL (V = 2)',
    p: [[0.25, 0.75]],
    targets: [1],
    pad: 0,
    smoothing: 0,
    tokens: 1,
    loss: -ln(0.75),
    nll: -ln(0.75),
    grad: [[0.25, 0.75 - 1]],
  },
  {
    // V = 3, pad 0, target 1, ε 0.2: q = [0, 0.8, 0.2]; p = [¼, ¼, ½].
    name: 'the fewest classes smoothing allows (V = 3)',
    p: [[0.25, 0.25, 0.5]],
    targets: [1],
    pad: 0,
    smoothing: 0.2,
    tokens: 1,
    loss: 0.8 * ln(0.8 / 0.25) + 0.2 * ln(0.2 / 0.5),
    nll: ln(4),
    grad: [[0.25, 0.25 - 0.8, 0.5 - 0.2]],
  },
  {
    // ε = 1: confidence 0 (0·log 0 = 0), q = [0, 0, ½, ½] for target 1; p uniform: KL = ln 2.
    name: 'all smoothing: nothing on the target',
    p: [[0.25, 0.25, 0.25, 0.25]],
    targets: [1],
    pad: 0,
    smoothing: 1,
    tokens: 1,
    loss: ln(2),
    nll: ln(4),
    grad: [[0.25, 0.25, 0.25 - 0.5, 0.25 - 0.5]],
  },
  {
    // Pad 3, target 0, ε 0.3: q = [0.7, 0.15, 0.15, 0]; p = [0.4, 0.3, 0.2, 0.1] (p_pad ≠ p_0).
    name: 'a pad id other than 0',
    p: [[0.4, 0.3, 0.2, 0.1]],
    targets: [0],
    pad: 3,
    smoothing: 0.3,
    tokens: 1,
    loss: 0.7 * ln(0.7 / 0.4) + 0.15 * ln(0.15 / 0.3) + 0.15 * ln(0.15 / 0.2),
    nll: -ln(0.4),
    grad: [[0.4 - 0.7, 0.3 - 0.15, 0.2 - 0.15, 0.1]],
  },
  {
    // Two kept rows and a pad row, ε 0 on V = 3 (pad 0): mean over the 2 tokens.
    //   row 0 target 1, p [0.2, 0.3, 0.5]: −ln 0.3; row 1 target 2, p [0.1, 0.1, 0.8]: −ln 0.8.
    name: 'the mean over the kept tokens',
    p: [
      [0.2, 0.3, 0.5],
      [0.1, 0.1, 0.8],
      [0.5, 0.25, 0.25],
    ],
    targets: [1, 2, 0],
    pad: 0,
    smoothing: 0,
    tokens: 2,
    loss: (-ln(0.3) - ln(0.8)) / 2,
    nll: (-ln(0.3) - ln(0.8)) / 2,
    grad: [
      [0.1, (0.3 - 1) / 2, 0.25],
      [0.05, 0.05, (0.8 - 1) / 2],
      [0, 0, 0],
    ],
  },
  {
    name: 'no tokens at all: 0, not 0/0',
    p: [[0.5, 0.25, 0.25]],
    targets: [0],
    pad: 0,
    smoothing: 0.1,
    tokens: 0,
    loss: 0,
    nll: 0,
    grad: [[0, 0, 0]],
  },
];

test('both losses give the hand-worked values and gradient at the edges, on cpu and wasm', async (t) => {
  for (const backend of BACKENDS) {
    await initBackend(backend);
    for (const c of CASES) {
      await t.test(`${backend}: ${c.name}`, async () => {
        const logits = tf.log(tf.tensor2d(c.p)) as tf.Tensor2D;
        const targets = tf.tensor1d(c.targets, 'int32');
        const fromLogProbs = labelSmoothedLoss(logits, targets, c.pad, c.smoothing, c.tokens); // log p = logits here
        let nll: tf.Scalar | undefined;
        const fused = tf.valueAndGrad((x: tf.Tensor) => {
          const r = smoothedLossFromLogits(x as tf.Tensor2D, targets, c.pad, c.smoothing, c.tokens);
          nll = r.nll;
          return r.loss;
        })(logits);
        const num = async (s: tf.Tensor) => (await s.data())[0]!;
        for (const [what, got, want] of [
          ['labelSmoothedLoss loss', await num(fromLogProbs.loss), c.loss],
          ['labelSmoothedLoss nll', await num(fromLogProbs.nll), c.nll],
          ['fused loss', await num(fused.value), c.loss],
          ['fused nll', await num(nll!), c.nll],
        ] as const)
          assert.ok(Math.abs(got - want) < 1e-5, `${what}: ${got}, by hand ${want}`);
        assert.equal(fromLogProbs.tokens, c.tokens);
        assert.ok(maxAbsDiff(await fused.grad.array(), c.grad) < 1e-6, `gradient ${await fused.grad.array()}`);
        tf.dispose([logits, targets, fromLogProbs.loss, fromLogProbs.nll, fused.value, fused.grad, nll!]);
      });
    }
  }
});

test('smoothing needs 3 classes: with 2 both losses refuse, naming the count', async () => {
  await initBackend('cpu');
  const logits = tf.zeros([1, 2]) as tf.Tensor2D;
  const targets = tf.tensor1d([1], 'int32');
  const message = /^Error: label smoothing needs at least 3 classes, got 2$/;
  assert.throws(() => labelSmoothedLoss(logits, targets, 0, 0.1, 1), message);
  assert.throws(() => smoothedLossFromLogits(logits, targets, 0, 0.1, 1), message);
  tf.dispose([logits, targets]);
});

test('on wasm the loss is the one fused kernel, on cpu tfjs ops', async () => {
  for (const backend of BACKENDS) {
    await initBackend(backend);
    const logits = tf.zeros([2, 5]) as tf.Tensor2D;
    const targets = tf.tensor1d([1, 3], 'int32');
    const info = await tf.profile(() => {
      const r = smoothedLossFromLogits(logits, targets, 0, 0.1, 2);
      return [r.loss, r.nll];
    });
    const fused = info.kernelNames.includes(SMOOTHED_CROSS_ENTROPY);
    assert.equal(fused, backend === 'wasm', `${backend}: ${info.kernelNames.join(', ')}`);
    assert.equal(hasFusedKernel(SMOOTHED_CROSS_ENTROPY), backend === 'wasm');
    tf.dispose([logits, targets, ...(info.result as tf.Tensor[])]);
  }
});
