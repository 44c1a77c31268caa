/**
 * What the benchmarks (and scripts/role-agreement.mjs) need from the engine. dist/engine.js (the package's public API) does not
 * export the training step, the optimizer, decoding or the data pipeline, so bench/lib/build.mjs
 * bundles this file from the same sources with the same esbuild settings as scripts/build.mjs,
 * to out/bench/engine.js. One bundle, so one tfjs engine: `tf` here is the engine's own copy.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ATTENTION_GRAD, CROSS_ATTENTION, DROPOUT, SELF_ATTENTION } from '../../src/engine/backend/trainingOps';
import { TILED_ATTENTION, TILED_ATTENTION_GRAD } from '../../src/engine/backend/tiledAttention';
export * as tf from '@tensorflow/tfjs-core';
export { initBackend, currentBackend, matMulDetail } from '../../src/engine/backend';
export { describeAdapter, probeGpu } from '../../src/engine/backend/gpuProbe';
export { configFromPreset, validateConfig, type TransformerConfig } from '../../src/engine/model/config';
export { Transformer } from '../../src/engine/model/transformer';
export { trainStep } from '../../src/engine/train/step';
export type { Batch } from '../../src/engine/data/batchStream';
export { Adam, PAPER_ADAM } from '../../src/engine/train/adam';
export { createOptimizer } from '../../src/engine/train/optimizer';
export { translate } from '../../src/engine/decode/translate';
export { prepareData } from '../../src/engine/data/dataset';
export { saveCheckpoint } from '../../src/engine/checkpoint';
export { setBlasThreads } from '../../src/engine/backend/wasm/native';
export { watchWasmHeap, wasmHeapBytes } from '../../src/engine/backend/wasm/wasmHeap';
export { trainingMemory, checkTrainingMemory, WASM_HEAP_BYTES } from '../../src/engine/run/memory';
export { gpuAllocations, resetGpuAllocationPeak } from '../../src/engine/backend/webgpu/allocations';
export { WEBGPU_COUNTS } from '../../src/engine/run/gpuMemory';
/** A run's probe pairs at its newest checkpoint (scripts/role-agreement.mjs --sheets). */
export { attentionOfPairs } from '../../src/engine/inspect/attentionOfPairs';
export { loadCheckpoint, resolveCheckpoint } from '../../src/engine/checkpoint';
export { loadVocabulary } from '../../src/engine/data/vocabulary';
export { probeBatchOf } from '../../src/engine/run/probe';
/** Our GEMM and tfjs's, called directly (bench/gpu/gemm.mjs sweeps the tiles). */
export { gemm, checkTiles } from '../../src/engine/backend/webgpu/gemm';
export { tfjsMatMul } from '../../src/engine/backend/webgpu/program';
/** The attention kernels' names, row and tiled (bench/gpu/attention.mjs runs them alone). */
export const attentionKernels = {
  SELF_ATTENTION,
  CROSS_ATTENTION,
  ATTENTION_GRAD,
  TILED_ATTENTION,
  TILED_ATTENTION_GRAD,
};

/**
 * --unfused: the engine without its training kernels, as before issue 18 (`on` false only): with
 * their dropout kernel unregistered on the active backend, hasTrainingKernels() is false, so
 * ops/index.ts opsFor picks the plain ops and dropout runs in tfjs. What the test hook of the same
 * name did in the engine, kept here so that no product code carries a switch for it.
 */
export function useTrainingKernels(on: boolean): void {
  if (on) throw new Error('useTrainingKernels(true): the kernels come back with a new process');
  if (tf.getKernel(DROPOUT, tf.getBackend())) tf.unregisterKernel(DROPOUT, tf.getBackend());
}
