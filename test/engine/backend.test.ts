/** Backend choice: forcing one by flag or environment, and clear errors for what cannot load. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';

test('a forced backend is used, by argument or by ATTENTION_DEBUGGER_BACKEND', async () => {
  assert.equal(await initBackend('cpu'), 'cpu');
  assert.equal(tf.getBackend(), 'cpu');
  process.env.ATTENTION_DEBUGGER_BACKEND = 'wasm';
  try {
    assert.equal(await initBackend(), 'wasm');
    assert.equal(tf.getBackend(), 'wasm');
  } finally {
    delete process.env.ATTENTION_DEBUGGER_BACKEND;
  }
});

test('an unknown or unavailable forced backend is a clear error', async () => {
  await assert.rejects(
    initBackend('cuda'),
    /--backend: unknown backend "cuda" \(expected one of webgpu, tensorflow, wasm, cpu\)/,
  );
  // tfjs-node is never a dependency of this project, so on a clean checkout it is absent.
  await assert.rejects(
    initBackend('tensorflow'),
    /backend "tensorflow" is not available: neither tfjs-node-gpu nor tfjs-node is installed/,
  );
});

test('without a choice, the first backend of the order that loads is picked', async () => {
  assert.equal(await initBackend(undefined, ['tensorflow', 'wasm', 'cpu']), 'wasm');
});

test('a software WebGPU adapter (lavapipe) is used when forced but passed over by the automatic choice', async (t) => {
  let forced: string;
  try {
    forced = await initBackend('webgpu');
  } catch (err) {
    if (process.env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU === '1') throw err;
    t.skip(`no WebGPU adapter here: ${(err as Error).message}`);
    return;
  }
  assert.equal(forced, 'webgpu');
  // This project's machines have no GPU: the only adapter is llvmpipe, slower than wasm.
  assert.equal(await initBackend(undefined, ['webgpu', 'wasm', 'cpu']), 'wasm');
});
