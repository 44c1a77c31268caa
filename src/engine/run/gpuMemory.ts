/**
 * GPU memory a training step takes on webgpu, estimated before anything is allocated, and the
 * refusal of a run that cannot fit (issue 28): `--config big` at its default batch ran an 80 GB GPU
 * out of memory after its model was made. The estimate is run/memory.ts's trainingMemory with
 * WEBGPU_COUNTS, checked against what the device allocated (backend/webgpu/allocations.ts) in
 * test/engine/webgpu-memory.test.ts and bench/gpu-memory.mjs ("GPU memory" in bench/README.md).
 */
import type { TransformerConfig } from '../model/config';
import { gpuBufferLimits, gpuMemorySize, type GpuMemorySize } from '../backend/webgpu/memorySize';
import { parameterSpecs } from '../model/params';
import { ADAM_ENV, adamLayout, type AdamLayout } from '../train/optimizer';
import { checkTrainingMemory, gib, type MemoryCounts, trainingMemory } from './memory';

/** Parameter copies at a step's peak with the flat Adam and with the per-parameter one (below). */
const FLAT_ADAM_COPIES = 12;
const PER_PARAMETER_ADAM_COPIES = 8;

/**
 * The webgpu backend with its training kernels, counted from the buffers the device holds at the
 * peak of a step (tfjs's pool included), on lavapipe:
 * - parameters ×12 with the flat Adam (train/flatAdam.ts, webgpu's default): weights, the gradients
 *   (laid end to end, the per-parameter ones freed: train/step.ts), Adam's state θ | m | v (3), θ
 *   gathered on a first update, and while its kernel runs the new state (3) and the new weights
 *   beside the old ones, which the step keeps until the GPU has checked the update: 11; `base` at
 *   8 × 32 measured about 10.5 beside its activations, `tiny` and `issue` more, so 12 (tfjs's pool
 *   holds some copies through the step). The per-parameter Adam (ATTENTION_DEBUGGER_ADAM=per-parameter)
 *   takes 8, which this overstates: weights, gradients, the two moments, and the new ones beside the old;
 * - per token, what the forward pass saves for the backward pass (an encoder layer 8d + d_ff, a
 *   decoder layer 13d + d_ff, cross-attention's K and V 2d a source token) and the few gradients alive
 *   at once: the backward pass frees each gradient and saved value once used (backend/releaseConsumed.ts).
 *   The buffers so freed stay in tfjs's pool (a buffer is kept for a later tensor of its exact size)
 *   through Adam's update, so the peak is the activations' high-water mark and the update's copies;
 * - the logits [B·T, V], once: the fused loss writes its gradient over them, and the gradient passed
 *   back is that one times dy, written over it too (backend/webgpu/loss.ts consumeLogits, SCALE_INTO).
 * The per-token counts are fitted to the peaks of tiny, issue and base (bench/README.md "GPU memory");
 * they do not count the row kernels' attention-gradient scratch [2, B·heads·T, S], which grows with
 * the sequence length (the tiled kernels, the default for heads up to 64 wide, have none:
 * backend/tiledAttention.ts).
 */
export function webgpuCounts(layout: AdamLayout = adamLayout()): MemoryCounts {
  return {
    parameterCopies: layout === 'flat' ? FLAT_ADAM_COPIES : PER_PARAMETER_ADAM_COPIES,
    encoderLayer: { d: 9, ff: 1 },
    decoderLayer: { d: 13, ff: 1 },
    crossKV: 2,
    embedding: 6,
    logitCopies: 1,
    fixedBytes: 1 << 20,
  };
}

/** webgpuCounts of webgpu's default, the flat Adam: what the fitted peaks were measured with. */
export const WEBGPU_COUNTS: MemoryCounts = webgpuCounts('flat');

/**
 * The largest single buffer of a step, in bytes, and what it holds: the logits [B·T, V] of one
 * micro-batch (its target half), the FFN's hidden layer [B·T, d_ff], or the largest parameter.
 * (The row kernels' attention-gradient scratch [2, B·heads·T, S] depends on the sequence length,
 * unknown here; the tiled kernels have none.)
 */
export function largestBuffer(
  config: TransformerConfig,
  batchTokens: number,
  accumulate = 1,
): { bytes: number; what: string; perToken: number } {
  const side = Math.ceil(Math.ceil(batchTokens / Math.max(1, accumulate)) / 2); // B·T of one side
  let largest = { bytes: 4 * side * config.tgt_vocab, what: 'the logits [B·T, V]', perToken: 2 * config.tgt_vocab };
  if (config.d_ff > config.tgt_vocab)
    largest = { bytes: 4 * side * config.d_ff, what: "the FFN's hidden layer [B·T, d_ff]", perToken: 2 * config.d_ff };
  for (const spec of parameterSpecs(config)) {
    const bytes = 4 * spec.shape.reduce((x, y) => x * y, 1);
    if (bytes > largest.bytes) largest = { bytes, what: `the parameter ${spec.name} [${spec.shape}]`, perToken: 0 };
  }
  return largest;
}

/** What the check needs of the GPU: its buffer limits and its memory size. */
export interface GpuLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  memory: GpuMemorySize;
}

/** The active webgpu device's limits and memory; undefined off webgpu. */
export function activeGpuLimits(): GpuLimits | undefined {
  const limits = gpuBufferLimits();
  return limits && { ...limits, memory: gpuMemorySize() };
}

/**
 * Refuses, before the model is made, a run on webgpu that cannot fit: the step's estimate past the
 * GPU's memory (where it is known), or the largest buffer of a step past what one buffer may hold;
 * naming the estimate, where the GPU's size came from, the largest batch_tokens that fits and the
 * --accumulate that would.
 */
export function checkGpuTrainingMemory(
  config: TransformerConfig,
  source: string,
  batch: { tokens: number; accumulate?: number; name?: string },
  gpu: GpuLimits | undefined = activeGpuLimits(),
): void {
  if (!gpu) return checkTrainingMemory(config, source, batch);
  const accumulate = batch.accumulate ?? 1;
  const name = batch.name ?? 'batch_tokens';
  const bufferLimit = Math.min(gpu.maxBufferSize, gpu.maxStorageBufferBindingSize);
  const layout = adamLayout();
  const counts = webgpuCounts(layout);
  checkTrainingMemory(config, source, batch, 'webgpu', {
    limit: gpu.memory.bytes ?? Infinity, // not known: only the buffer limits are checked
    what: `the GPU's memory according to ${gpu.memory.source}`,
    counts,
    advice: (e) =>
      layout === 'flat'
        ? `${ADAM_ENV}=per-parameter holds ${FLAT_ADAM_COPIES - PER_PARAMETER_ADAM_COPIES} fewer copies of ` +
          `the parameters (${gib(e.weights * (FLAT_ADAM_COPIES - PER_PARAMETER_ADAM_COPIES))}), for Adam's ` +
          'update in a dispatch a parameter'
        : '',
  });
  const largest = largestBuffer(config, batch.tokens, accumulate);
  if (largest.bytes > bufferLimit) {
    const limitName =
      gpu.maxStorageBufferBindingSize <= gpu.maxBufferSize ? 'maxStorageBufferBindingSize' : 'maxBufferSize';
    // Batch tokens of one micro-batch whose largest buffer fits (none where a parameter is the largest).
    const perMicroBatch = largest.perToken ? Math.floor(bufferLimit / (2 * largest.perToken)) * 2 : 0;
    const split = Math.ceil(batch.tokens / Math.max(1, perMicroBatch));
    const e = trainingMemory(config, batch.tokens, accumulate, counts);
    const fix =
      perMicroBatch >= 1
        ? `the largest ${name} that fits is ${perMicroBatch * accumulate}, or keep it and split each batch with ` +
          `--accumulate ${split}`
        : 'make d_model, d_ff or the vocabulary smaller';
    throw new Error(
      `${source}: with ${name} ${batch.tokens}${accumulate > 1 ? ` in ${accumulate} micro-batches` : ''}, ` +
        `${largest.what} takes ${gib(largest.bytes)}, more than one GPU buffer may hold (the adapter's ` +
        `${limitName}, ${gib(bufferLimit)}); the step would need about ${gib(e.bytes)} of GPU memory in all; ${fix}`,
    );
  }
}
