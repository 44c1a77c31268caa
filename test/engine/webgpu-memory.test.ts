/**
 * GPU memory on webgpu (issue 28; Dawn on lavapipe here): the estimate of a training step
 * (run/gpuMemory.ts, WEBGPU_COUNTS) against the peak of the buffers the device allocated, counted
 * by the allocation wrapper (backend/webgpu/allocations.ts: every createBuffer added, every destroy
 * taken off, tfjs's pool included), for a small model in two cases: one where the parameters'
 * copies dominate and one where the activations and logits do. And the pool's trim
 * (bufferPool.ts): buffers of a batch shape the next step does not ask for are given back.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { gpuAllocations, resetGpuAllocationPeak } from '../../src/engine/backend/webgpu/allocations';
import { trimGpuPool } from '../../src/engine/backend/webgpu/bufferPool';
import { configFromPreset, type TransformerConfig } from '../../src/engine/model/config';
import { Transformer } from '../../src/engine/model/transformer';
import { WEBGPU_COUNTS } from '../../src/engine/run/gpuMemory';
import { trainingMemory } from '../../src/engine/run/memory';
import { createOptimizer } from '../../src/engine/train/optimizer';
import { trainStep } from '../../src/engine/train/step';
import { useWebgpu } from './kernelHelpers';

/** `rows` full rows of `len` tokens a side (no padding), ids from a small LCG; BOS 1, EOS 2. */
function fixedBatch(c: TransformerConfig, rows: number, len: number) {
  let x = 7;
  const next = () => 3 + ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) % (c.tgt_vocab - 3));
  const src: number[][] = [];
  const tgtIn: number[][] = [];
  const tgtOut: number[][] = [];
  for (let b = 0; b < rows; b++) {
    src.push([...Array.from({ length: len - 1 }, next), c.eos_id]);
    const t = Array.from({ length: len - 1 }, next);
    tgtIn.push([c.bos_id, ...t]);
    tgtOut.push([...t, c.eos_id]);
  }
  return { src, tgtIn, tgtOut };
}

/** Empties tfjs's pool of free buffers (a buffer is given back once it stayed free through a trim). */
function emptyPool(): void {
  trimGpuPool();
  trimGpuPool();
}

/** Bytes the device allocated at the peak of making the model and training `steps` steps on one batch. */
async function measuredPeak(config: TransformerConfig, rows: number, len: number, steps: number, lens?: number[]) {
  emptyPool();
  const before = gpuAllocations()!.current;
  resetGpuAllocationPeak();
  const model = new Transformer(config, undefined, 1);
  const adam = createOptimizer(); // the flat layout, webgpu's default (train/optimizer.ts)
  try {
    for (let s = 0; s < steps; s++)
      await trainStep(model, adam, fixedBatch(config, rows, lens?.[s] ?? len), {
        lr: 1e-4,
        labelSmoothing: 0.1,
        seed: s,
      });
    return { peak: gpuAllocations()!.peak - before, after: gpuAllocations()!.current - before };
  } finally {
    adam.dispose();
    model.dispose();
    emptyPool();
  }
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

for (const [what, vocab, rows, len] of [
  ['parameters dominate: vocabulary 8,000, a batch of 2 × 4', 8000, 2, 4],
  ['activations and logits dominate: vocabulary 1,000, a batch of 32 × 32', 1000, 32, 32],
] as const) {
  test(`tiny on webgpu, ${what}: the estimate is within 20% of the allocated peak`, async (t: TestContext) => {
    if (!(await useWebgpu(t))) return;
    const config = configFromPreset('tiny', { src_vocab: vocab, tgt_vocab: vocab });
    const { peak } = await measuredPeak(config, rows, len, 2);
    const estimate = trainingMemory(config, 2 * rows * len, 1, WEBGPU_COUNTS).bytes;
    t.diagnostic(`estimate ${mib(estimate)}, allocated peak ${mib(peak)}: ${(estimate / peak).toFixed(2)} times`);
    assert.ok(Math.abs(estimate / peak - 1) <= 0.2, `estimate ${mib(estimate)} against the peak ${mib(peak)}`);
  });
}

test('the pool gives back the buffers of batch shapes a step no longer asks for', async (t: TestContext) => {
  if (!(await useWebgpu(t))) return;
  const config = configFromPreset('tiny', { src_vocab: 1000, tgt_vocab: 1000 });
  const estimate = (len: number) => trainingMemory(config, 2 * 8 * len, 1, WEBGPU_COUNTS).bytes;
  // Four shapes, then the last one again: tfjs's own pool would keep the buffers of all four.
  const { peak, after } = await measuredPeak(config, 8, 32, 5, [32, 28, 24, 20, 20]);
  t.diagnostic(`peak ${mib(peak)}, after ${mib(after)}; the estimate at 8 × 32: ${mib(estimate(32))}`);
  // After the last step the device holds about one step's worth (its own shape), not four.
  assert.ok(after <= 1.2 * estimate(20), `after ${mib(after)}: more than one step of 8 × 20 (${mib(estimate(20))})`);
  assert.ok(peak <= 1.5 * estimate(32), `peak ${mib(peak)}: more than 1.5 times a step of 8 × 32`);
});
