/**
 * What training a model takes of a backend's memory, counted before anything is allocated, and the
 * refusal of a model or a batch that cannot fit (issue 27 #4): `--config big` on wasm used to trap
 * after 30 s at 4.2 GB, the check counting 16 bytes a parameter and no activations.
 *
 * The counts are checked against the wasm heap's measured peak (test/engine/memory-estimate.test.ts;
 * bench/memory.mjs prints the table of bench/README.md "Memory estimate against measured peak").
 */
import * as tf from '@tensorflow/tfjs-core';
import { constants } from 'node:buffer';
import { totalmem } from 'node:os';
import type { TransformerConfig } from '../model/config';
import { parameterSpecs, SHARED_NAMES } from '../model/params';
import { overLimit, POSITIONS_LIMIT } from './limits';

/**
 * How many values (float32, 4 bytes each) a backend holds at the peak of a training step, per
 * parameter, per batch token and per target token and class. Counts are in multiples of d_model
 * (`d`) and d_ff (`ff`).
 */
export interface MemoryCounts {
  /** Copies of every parameter at once: weights, gradients, Adam's m and v, and any scratch of that size. */
  parameterCopies: number;
  /** Per source token and encoder layer: what the backward pass keeps of the forward, and its gradients. */
  encoderLayer: { d: number; ff: number };
  /** Per target token and decoder layer, the same. */
  decoderLayer: { d: number; ff: number };
  /** Per source token and decoder layer: cross-attention's K and V (and their gradients). */
  crossKV: number;
  /** Per token (either side): the embedding lookup, its scaling, the positions added, dropout, and their gradients. */
  embedding: number;
  /** Per target token: copies of its row of V logits. */
  logitCopies: number;
  /** Bytes held whatever the model: the runtime's own data and stack. */
  fixedBytes: number;
}

/**
 * The wasm backend with its training kernels (backend/trainingOps.ts), counted from what a step
 * allocates in the heap, and checked against the measured peak:
 * - parameters ×5: weights, gradients, Adam's two moments, and the gradient norm's squares (tfjs's
 *   square of every gradient, held until the norm is read);
 * - an encoder layer keeps Q·K·V (3d), the heads (d), W^O's output (d), the first norm (d), the FFN's
 *   hidden layer (d_ff) and output (d), the second norm (d): 8d + d_ff a source token; the backward
 *   pass frees each gradient and saved value once used (backend/releaseConsumed.ts), so a few
 *   gradients of [B·T, d] are alive at once beside them (12d + d_ff in all, fitted);
 * - a decoder layer: 13d + d_ff forward (self-attention as above, cross-attention's Q, heads and
 *   output, a third norm), 17d + d_ff with its gradients a target token; cross-attention's K, V 2d a
 *   source token;
 * - the logits [B·T, V]: the product, its bias added, the fused loss's saved gradient and the
 *   gradient passed back (4 copies);
 * - the attention kernels keep no [T, S] weights: they recompute them (native/attention.c), and
 *   their scratch lies outside the heap, in the addon's own memory.
 */
export const WASM_COUNTS: MemoryCounts = {
  parameterCopies: 5,
  encoderLayer: { d: 12, ff: 1 },
  decoderLayer: { d: 17, ff: 1 },
  crossKV: 2,
  embedding: 4,
  logitCopies: 4,
  fixedBytes: 1 << 20,
};

export interface MemoryEstimate {
  /** Bytes at the peak of a step: fixed + perBatchToken · batch tokens (of one micro-batch). */
  bytes: number;
  /** What does not grow with the batch: weights, gradients, Adam's moments, scratch, the positional table. */
  fixed: number;
  /** Bytes a token of the (micro-)batch adds: activations and logits. */
  perBatchToken: number;
  weights: number;
  gradients: number;
  adam: number;
  scratch: number;
  activations: number;
  logits: number;
  parameters: number;
}

/** Parameters of a model (shared embeddings counted once). */
export function parameterCount(config: TransformerConfig): number {
  let n = 0;
  for (const spec of parameterSpecs(config))
    if (!(config.share_embeddings && SHARED_NAMES.includes(spec.name))) n += spec.shape.reduce((a, b) => a * b, 1);
  return n;
}

/**
 * Bytes a training step takes at its peak, for a batch of `batchTokens` (padded source + target
 * tokens, split evenly between the two sides, as in the tasks and parallel corpora here) trained in
 * `accumulate` micro-batches: weights, gradients, Adam's two moments, the kernels' scratch, the
 * activations kept for the backward pass per batch token, and the logits of batch × vocabulary.
 *
 * One function for every backend: the wasm heap's counts are WASM_COUNTS; a GPU backend's memory
 * estimate (issue 28) calls it with its own byte counts (`counts`), measured the same way.
 */
export function trainingMemory(
  config: TransformerConfig,
  batchTokens: number,
  accumulate = 1,
  counts: MemoryCounts = WASM_COUNTS,
): MemoryEstimate {
  const { d_model: d, d_ff: ff, encoder_layers: encoders, decoder_layers: decoders } = config;
  const parameters = parameterCount(config);
  const bytes = (values: number) => 4 * values;
  const weights = bytes(parameters);
  // Accumulation adds the running sum of the gradients and the next sum (train/accumulate.ts).
  const gradients = bytes(parameters) * (accumulate > 1 ? 3 : 1);
  const adam = bytes(2 * parameters);
  const scratch =
    bytes(parameters) * Math.max(0, counts.parameterCopies - 4) +
    (config.positional === 'sinusoidal' ? bytes(config.max_len * d) : 0) +
    counts.fixedBytes;
  const source = counts.embedding * d + encoders * (counts.encoderLayer.d * d + counts.encoderLayer.ff * ff);
  const target = counts.embedding * d + decoders * (counts.decoderLayer.d * d + counts.decoderLayer.ff * ff);
  const perPair = source + target + decoders * counts.crossKV * d; // a source and a target token
  const perBatchToken = bytes(perPair / 2 + (counts.logitCopies * config.tgt_vocab) / 2);
  const tokens = Math.ceil(batchTokens / Math.max(1, accumulate));
  const activations = bytes((perPair / 2) * tokens);
  const logits = bytes(((counts.logitCopies * config.tgt_vocab) / 2) * tokens);
  const fixed = weights + gradients + adam + scratch;
  return {
    bytes: fixed + perBatchToken * tokens,
    fixed,
    perBatchToken,
    weights,
    gradients,
    adam,
    scratch,
    activations,
    logits,
    parameters,
  };
}

/** The wasm backend's heap: 4 GiB less a page (emscripten's maximum). */
export const WASM_HEAP_BYTES = 4294901760;
const GiB = 1024 ** 3;
/** Bytes in words for a message: MiB below 0.1 GiB, else GiB, to one decimal. */
export const gib = (b: number) => (b < GiB / 10 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / GiB).toFixed(1)} GiB`);

/** A backend's memory as the check sees it: its size, the words that name it, and its counts. */
export interface BackendMemory {
  limit: number;
  /** E.g. "the GPU's memory (from nvidia-smi)"; the message adds the size after it. */
  what: string;
  counts: MemoryCounts;
  /** A way to need less that the message adds after the batch's (e.g. another Adam layout). */
  advice?: (e: MemoryEstimate) => string;
}

/**
 * Refuses, before anything is allocated, a model that cannot train here: a tensor larger than one
 * array can hold, or a step whose estimate (trainingMemory) passes the backend's memory (the wasm
 * heap, else this machine's memory, or `memory` where the caller knows it: run/gpuMemory.ts),
 * naming the largest batch_tokens that fits, or why none does.
 * `batchTokens` names where the batch size came from in the message (`--batch-tokens`, `batch_tokens`).
 */
export function checkTrainingMemory(
  config: TransformerConfig,
  source: string,
  batch: { tokens: number; accumulate?: number; name?: string },
  backend = tf.engine().backendName,
  memory?: BackendMemory,
): void {
  const positions = overLimit('max_len', config.max_len, POSITIONS_LIMIT);
  if (positions) throw new Error(`${source}: ${positions}`);
  for (const spec of parameterSpecs(config)) {
    const count = spec.shape.reduce((a, b) => a * b, 1);
    if (count > constants.MAX_LENGTH)
      throw new Error(
        `${source}: tensor "${spec.name}" [${spec.shape}] would hold ${count} values, more than one array can ` +
          `(${constants.MAX_LENGTH}); make d_model, d_ff or the vocabulary smaller`,
      );
  }
  const accumulate = batch.accumulate ?? 1;
  const counts = memory?.counts ?? WASM_COUNTS;
  const e = trainingMemory(config, batch.tokens, accumulate, counts);
  const [limit, what] = memory
    ? [memory.limit, memory.what]
    : backend === 'wasm'
      ? [WASM_HEAP_BYTES, "the wasm backend's heap"]
      : [totalmem(), "this machine's memory"];
  if (e.bytes <= limit) return;
  const parts =
    `weights ${gib(e.weights)}, gradients ${gib(e.gradients)}, Adam's two moments ${gib(e.adam)}, ` +
    `scratch ${gib(e.scratch)}, activations ${gib(e.activations)} and logits ${gib(e.logits)}`;
  const name = batch.name ?? 'batch_tokens';
  const perMicroBatch = Math.floor((limit - e.fixed) / e.perBatchToken); // tokens of one micro-batch that fit
  const largest = perMicroBatch * accumulate;
  // Split into micro-batches, the step holds two more copies of the gradients (their running sum).
  const perSplit = Math.floor((limit - trainingMemory(config, 0, 2, counts).fixed) / e.perBatchToken);
  const split = perSplit >= 1 ? Math.max(2, Math.ceil(batch.tokens / perSplit)) : 0;
  const fix =
    largest >= 1
      ? `the largest ${name} that fits is ${largest}` +
        (split > accumulate ? `, or keep it and split each batch with --accumulate ${split}` : '')
      : `no batch fits: the weights, gradients, Adam's moments and scratch alone take ${gib(e.fixed)}; ` +
        'make d_model, d_ff, the layers or the vocabulary smaller' +
        (backend === 'wasm' ? ', or train on another backend (the wasm heap is 4 GiB at most)' : '');
  const advice = memory?.advice?.(e);
  throw new Error(
    `${source}: ${(e.parameters / 1e6).toFixed(1)} M parameters with ${name} ${batch.tokens} need about ` +
      `${gib(e.bytes)} to train (${parts}), more than ${what} (${gib(limit)}); ${fix}${advice ? `; ${advice}` : ''}`,
  );
}
