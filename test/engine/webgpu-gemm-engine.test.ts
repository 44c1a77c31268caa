/**
 * Our own GEMM (backend/webgpu/gemm.ts) inside the engine on webgpu (lavapipe here), switched on with
 * gemmSwitch.ts setOwnGemm, each seen to dispatch our kernel: LINEAR and LINEAR_GRAD (fusedLinear,
 * ReLU on and off, blocks of rows of a stacked W) give tfjs's GEMM's output and every gradient to 1e-5
 * relative; a whole model's logits and parameter gradients equal the unfused tfjs ops'; and two
 * training steps give cpu's losses, weights and Adam moments. (The golden fixtures' inspection path
 * runs tfjs's unfused ops, not LINEAR, so it would not reach our GEMM.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { fusedLinear, LINEAR } from '../../src/engine/backend/inferenceOps';
import { LINEAR_GRAD } from '../../src/engine/backend/trainingOps';
import { setOwnGemm, usesOwnGemm } from '../../src/engine/backend/webgpu/gemmSwitch';
import type { WebgpuBackend, WebgpuProgram } from '../../src/engine/backend/webgpu/program';
import { Transformer } from '../../src/engine/model/transformer';
import { Adam } from '../../src/engine/train/adam';
import { trainStep } from '../../src/engine/train/step';
import { smallConfig, TOY_BATCH } from '../helpers';
import { outputAndGrads, relDiff } from './attentionHelpers';
import { filled, leakFree, onBackend, snapshot, useWebgpu, wholeModelBothWays, worstByName } from './kernelHelpers';

/** f's result and how many of our GEMM's programs it dispatched, with our GEMM `on` (then as before). */
async function withGemm<T>(on: boolean, f: () => Promise<T>): Promise<{ out: T; gemms: number }> {
  const backend = tf.backend() as WebgpuBackend;
  const run = backend.runWebGPUProgram;
  const before = usesOwnGemm();
  let gemms = 0;
  backend.runWebGPUProgram = (program: WebgpuProgram, ...rest) => {
    if (program.shaderKey.startsWith('AttentionDebugger_gemm_')) gemms++;
    return run.call(backend, program, ...rest);
  };
  setOwnGemm(on);
  try {
    const out = await f();
    return { out, gemms };
  } finally {
    setOwnGemm(before);
    backend.runWebGPUProgram = run;
  }
}

test('webgpu LINEAR and LINEAR_GRAD with our GEMM: output and every gradient equal tfjs’s GEMM’s to 1e-5', async (t) => {
  if (!(await useWebgpu(t, [LINEAR, LINEAR_GRAD]))) return;
  const d = 12;
  const w = filled([3 * d, d], 2, 0.5); // [3d, d]: W^Q, W^K, W^V stacked
  const b = filled([3 * d], 3);
  const cases: [number[], boolean, [number, number]][] = [
    [[7, d], false, [0, 0]],
    [[2, 9, d], true, [0, 0]],
    [[3, 5, d], true, [d, d]], // W^K, ReLU
    [[1, d], false, [2 * d, d]], // one row (a decoding step), W^V
  ];
  for (const [shape, relu, rows] of cases) {
    const x = filled(shape, shape.length + rows[0], 2);
    const what = `x [${shape}], relu ${relu}, rows ${rows}`;
    const f = (xi: tf.Tensor, wi: tf.Tensor, bi: tf.Tensor) => fusedLinear(xi, wi, bi, relu, rows);
    await leakFree(what, async () => {
      const own = await withGemm(true, () => outputAndGrads(f as never, [x, w, b]));
      const theirs = await withGemm(false, () => outputAndGrads(f as never, [x, w, b]));
      // Forward twice (the output, then under tf.grads) and dx, dW: 4 products.
      assert.equal(own.gemms, 4, `${what}: our GEMM dispatched ${own.gemms} times`);
      assert.equal(theirs.gemms, 0, `${what}: tfjs's GEMM dispatched ours`);
      assert.ok(
        relDiff(own.out.y, theirs.out.y) <= 1e-5,
        `${what}: output differs by ${relDiff(own.out.y, theirs.out.y)}`,
      );
      own.out.grads.forEach((g, i) => {
        const diff = relDiff(g, theirs.out.grads[i]);
        assert.ok(diff <= 1e-5, `${what}: gradient ${i} differs by ${diff}`);
      });
    });
    x.dispose();
  }
  tf.dispose([w, b]);
});

test('webgpu trainStep with our GEMM: two steps give cpu’s losses, weights and Adam moments to 1e-4', async (t) => {
  const config = smallConfig({ d_model: 8, d_ff: 16 });
  const run = async () => {
    const model = new Transformer(config, undefined, 5);
    const adam = new Adam();
    const first = await trainStep(model, adam, TOY_BATCH, { lr: 1e-3, labelSmoothing: 0.1 });
    const second = await trainStep(model, adam, TOY_BATCH, { lr: 1e-3, labelSmoothing: 0.1 });
    const after = await snapshot(model, adam);
    model.dispose();
    adam.dispose();
    return { losses: [first.loss, second.loss], after };
  };
  if (!(await useWebgpu(t, [LINEAR, LINEAR_GRAD]))) return;
  const want = await onBackend('cpu', run);
  const { out: got, gemms } = await withGemm(true, run);
  assert.ok(gemms > 0, 'our GEMM never ran');
  got.losses.forEach((loss, i) =>
    assert.ok(
      Math.abs(loss - want.losses[i]!) <= 1e-4 * want.losses[i]!,
      `step ${i + 1}: loss ${loss}, cpu ${want.losses[i]}`,
    ),
  );
  const w = worstByName(got.after, want.after, config.d_model);
  assert.ok(w.error <= 1e-4, `${w.at}: relative error ${w.error}`);
});

test('webgpu with our GEMM: a model’s logits and parameter gradients equal the unfused ops’', async (t) => {
  if (!(await useWebgpu(t, [LINEAR, LINEAR_GRAD]))) return;
  const { out, gemms } = await withGemm(true, () => wholeModelBothWays({ norm_first: false }));
  assert.ok(gemms > 0, 'our GEMM never ran');
  const { names, fused, plain } = out;
  assert.ok(Math.abs(fused.loss - plain.loss) <= 1e-5 * Math.max(1, Math.abs(plain.loss)), 'loss');
  names.forEach((name, i) => {
    const diff = relDiff(fused.grads[i], plain.grads[i]);
    assert.ok(diff <= 1e-5, `${name}: max |fused − unfused| / max(1, max |unfused|) = ${diff}`);
  });
});
