/**
 * Gradient clipping by global norm (train/step.ts) by its definition, on every backend: with
 * ‖g‖ > c the gradient Adam receives has norm c (to 1e-6 relative: the engine, as PyTorch's
 * clip_grad_norm_, divides by ‖g‖ + 1e-6) and g's direction (cosine 1 to 1e-6); with ‖g‖ < c it is
 * g itself, bit for bit. Norms and cosines are taken here, in float64, from the recorded gradients.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { namedVariables } from '../../src/engine/model/params';
import { trainStep } from '../../src/engine/train/step';
import { testBackends } from '../helpers';
import { loadWithoutDropout, readStepFixture, RecordingAdam } from './stepFixture';

const CASE = 'post_ln_learned'; // ‖g‖ ≈ 5: the + 1e-6 moves ‖clipped‖ by 2e-7 of c

/** The gradients trainStep hands the optimizer with this clip norm (0: none), weights left as they are. */
async function gradients(clipNorm: number): Promise<Float32Array[]> {
  const f = readStepFixture(CASE);
  const { model } = loadWithoutDropout(CASE);
  try {
    const spy = new RecordingAdam(false);
    const batch = { src: f.src, tgtIn: f.tgt_in, tgtOut: f.tgt_out };
    await trainStep(model, spy, batch, { lr: 1e-3, labelSmoothing: 0.1, clipNorm });
    return [...(await spy.take(namedVariables(model.params))).values()];
  } finally {
    model.dispose();
  }
}

const dot = (a: Float32Array[], b: Float32Array[]): number =>
  a.reduce((s, x, t) => x.reduce((u, v, i) => u + v * b[t][i], s), 0);
const norm = (a: Float32Array[]): number => Math.sqrt(dot(a, a));

test('clipping scales the gradient to norm c and keeps its direction; below c it changes nothing', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    await t.test(backend, async () => {
      const g = await gradients(0);
      const n = norm(g);
      assert.ok(n > 1, `‖g‖ = ${n}`);
      for (const share of [0.1, 0.5, 0.9]) {
        const c = share * n;
        const clipped = await gradients(c);
        assert.ok(Math.abs(norm(clipped) - c) <= 1e-6 * c, `c = ${share}‖g‖: ‖clipped‖ = ${norm(clipped)}, c = ${c}`);
        const cosine = dot(clipped, g) / (norm(clipped) * n);
        assert.ok(Math.abs(1 - cosine) <= 1e-6, `c = ${share}‖g‖: cosine ${cosine}`);
      }
      for (const share of [1.001, 2, 100]) {
        const same = await gradients(share * n);
        assert.ok(
          same.every((x, i) => x.every((v, j) => v === g[i][j])),
          `c = ${share}‖g‖ changed the gradient`,
        );
      }
    });
  }
});
