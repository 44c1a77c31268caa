/**
 * The engine's gradients, clipping and Adam step against PyTorch's (stepFixture.ts) on every backend
 * the tests run; wasm here with the native kernels when the addon is built (native.test.ts asserts
 * that it is), and wasm-fixes.test.ts runs the same check with them off.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initBackend } from '../../src/engine/backend';
import { ADAM_UPDATE, hasFusedKernel } from '../../src/engine/backend/fusedKernels';
import { testBackends } from '../helpers';
import { checkStepAgainstPytorch, readStepFixture, relativeError, STEP_CASES } from './stepFixture';

test('every golden case has a step fixture whose clipping is active', () => {
  assert.equal(STEP_CASES.length, 4);
  for (const name of STEP_CASES) {
    const f = readStepFixture(name);
    assert.ok(
      f.clip_norm < 0.7 * f.grad_norm && f.clip_norm > 0.5 * f.grad_norm,
      `${name}: clip norm ${f.clip_norm}, ‖g‖ ${f.grad_norm}`,
    );
    assert.equal(f.label_smoothing, 0.1);
  }
});

test('relative error: per value, or per the tensor’s RMS near zero; NaN never passes', () => {
  assert.ok(Math.abs(relativeError([1.0001, -0.5], [1, -0.5]) - 1e-4) < 1e-12);
  // rms([0, 2]) = √2: a miss of 1e-4 at the zero counts as 1e-4/√2.
  assert.ok(Math.abs(relativeError([1e-4, 2], [0, 2]) - 1e-4 / Math.SQRT2) < 1e-12);
  assert.ok(!(relativeError([NaN, 1], [1, 1]) <= 1));
});

test('∂L/∂θ, the clipped gradient and the weights after one Adam step equal PyTorch on every backend', async (t) => {
  for (const backend of await testBackends()) {
    await initBackend(backend);
    const kind = backend === 'wasm' ? (hasFusedKernel(ADAM_UPDATE) ? ' (native kernels)' : ' (plain)') : '';
    for (const name of STEP_CASES)
      await t.test(`${backend}${kind}: ${name}`, async (c) => c.diagnostic(await checkStepAgainstPytorch(name)));
  }
});
