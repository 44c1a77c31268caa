/** Backend choice: forcing one by flag or environment, and clear errors for what cannot load. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/engine/backend';
import { describeAdapter, type GpuAdapter, probeGpu, whyNotAutoWebgpu } from '../../src/engine/backend/gpuProbe';

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

test('a WebGPU adapter is used when forced; the automatic choice passes over a software one and takes a GPU', async (t) => {
  let forced: string;
  try {
    forced = await initBackend('webgpu');
  } catch (err) {
    if (process.env.ATTENTION_DEBUGGER_REQUIRE_WEBGPU === '1') throw err;
    t.skip(`no WebGPU adapter here: ${(err as Error).message}`);
    return;
  }
  assert.equal(forced, 'webgpu');
  // On this project's CI machines the only adapter is llvmpipe, slower than wasm: passed over. On a
  // GPU machine (bench/gpu/run.sh tests) the hardware adapter is taken.
  const probe = probeGpu();
  const expected = probe.adapter && !probe.adapter.software ? 'webgpu' : 'wasm';
  assert.equal(await initBackend(undefined, ['webgpu', 'wasm', 'cpu']), expected, describeAdapter(probe));
});

test('the automatic choice takes a hardware adapter, and Engine Info names its vendor, architecture, device and driver', () => {
  // What Dawn reports on an H100 (Vulkan): written here by hand, this machine has no GPU.
  const h100: GpuAdapter = {
    vendor: 'nvidia',
    architecture: 'hopper',
    device: 'NVIDIA H100 80GB HBM3',
    description: 'NVIDIA: 580.159.04',
    software: false,
  };
  assert.equal(whyNotAutoWebgpu({ adapter: h100 }), null);
  assert.equal(describeAdapter({ adapter: h100 }), 'nvidia hopper, NVIDIA H100 80GB HBM3, driver NVIDIA: 580.159.04');
  const lavapipe = { ...h100, vendor: 'mesa', architecture: 'software', device: 'llvmpipe', software: true };
  assert.match(
    whyNotAutoWebgpu({ adapter: lavapipe }) ?? '',
    /^only a software adapter \(mesa software, llvmpipe, .*software\)/,
  );
  assert.equal(whyNotAutoWebgpu({ adapter: null, why: 'no Vulkan' }), 'no Vulkan');
});
