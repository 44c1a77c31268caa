/**
 * One training step: teacher-forced forward pass with dropout, the label-smoothed loss, gradients,
 * optional clipping by global norm, and an Adam update at the scheduled learning rate.
 */
import * as tf from '@tensorflow/tfjs-core';
import { sumOfSquares } from '../backend/trainingOps';
import { namedVariables } from '../model/params';
import { headGradNorms, headMatrixNorms } from '../telemetry/heads';
import type { Transformer } from '../model/transformer';
import type { Batch } from '../data/batchStream';
import type { Optimizer } from './optimizer';
import { smoothedLossFromLogits } from './loss';
import { microBatches } from './accumulate';
import { type GpuWatch, watchGpu } from '../backend/webgpu/errors';
import { trimGpuPool } from '../backend/webgpu/bufferPool';
import { releasingConsumed } from '../backend/releaseConsumed';

export interface StepOptions {
  lr: number;
  labelSmoothing: number;
  /** Clip gradients to this global norm; 0 or undefined: no clipping. */
  clipNorm?: number;
  /** Seeds dropout; the same seed and batch give the same step on one backend. */
  seed?: number;
  /** Also measure each attention head's gradient norm (telemetry steps). */
  headGradNorms?: boolean;
  /**
   * Per variable, 1 where it may change and 0 where it is held (frozen or masked heads): its
   * gradient is multiplied by this before the norm, clipping and Adam, so with zero moments there
   * the update there is exactly 0 (trainer.ts HeldHeads).
   */
  gradMask?: Map<tf.Variable, tf.Tensor>;
  /** Micro-batches the batch is split into, one Adam step for them all (accumulate.ts); default 1. */
  accumulate?: number;
  /** Names the step in a GPU error ("step 12"). */
  work?: string;
}

export interface StepResult {
  loss: number;
  nll: number;
  gradNorm: number;
  tokens: number;
  /** False when the loss or the gradient was not finite: the weights were left as they were. */
  applied: boolean;
  /** Per attention head (telemetry/heads.ts order), when asked for and on a step not applied. */
  headGradNorms?: Float32Array;
  /** With headGradNorms: [4 · heads], W^Q's gradient norm of every head, then W^K's, W^V's, W^O's. */
  headMatrixGradNorms?: Float32Array;
}

/** Non-pad tokens in a padded batch of rows. */
export function countTokens(rows: number[][], padId: number): number {
  return rows.reduce((n, row) => n + row.filter((id) => id !== padId).length, 0);
}

/**
 * Whether the active backend queues kernels on a device and a read waits for them to run (webgpu,
 * tensorflow), rather than computing each kernel when it is called (wasm, cpu).
 */
export function computesAsynchronously(backend: string = tf.getBackend()): boolean {
  return backend === 'webgpu' || backend === 'tensorflow';
}

/** What the forward and backward passes leave for the update: kept, the caller disposes them. */
interface Gradients {
  loss: tf.Scalar;
  nll: tf.Scalar;
  gradNorm: tf.Scalar;
  /**
   * Per variable, in `vars` order: summed over the micro-batches, masked, not yet clipped. Empty
   * where the optimizer's layout has laid them out (Optimizer.lay), which then holds them alone.
   */
  grads: tf.Tensor[];
  laid?: tf.Tensor1D[];
}

/** Each parameter's gradient when they are not laid out: `grads[i]` belongs to `vars[i]`. */
function perParameter(vars: tf.Variable[], grads: tf.Tensor[]): (param: tf.Tensor) => tf.Tensor {
  const index = new Map<tf.Tensor, number>(vars.map((v, i) => [v, i]));
  return (param) => grads[index.get(param)!]!;
}

/**
 * Forward and backward passes over the batch in `accumulate` micro-batches (accumulate.ts), each
 * loss normalised by the whole batch's `tokens`, so the sums are the whole batch's loss and gradient.
 */
function gradients(
  model: Transformer,
  optimizer: Optimizer,
  vars: tf.Variable[],
  batch: Batch,
  opts: StepOptions,
  tokens: number,
): Gradients {
  const c = model.config;
  let seed = opts.seed ?? 0;
  const ctx = { training: true, nextSeed: opts.seed === undefined ? undefined : () => seed++ };
  let sums: tf.Tensor[] | undefined; // [loss, nll, ...grads]
  for (const part of microBatches(batch, opts.accumulate ?? 1, c.pad_id)) {
    const one = tf.tidy(() => {
      const src = tf.tensor2d(part.src, undefined, 'int32'); // [B, S]
      const tgtIn = tf.tensor2d(part.tgtIn, undefined, 'int32'); // [B, T]
      const tgtOut = tf.reshape(tf.tensor2d(part.tgtOut, undefined, 'int32'), [-1]) as tf.Tensor1D; // [B·T]
      let nllValue: tf.Scalar | undefined;
      // The engine's gradients free what they consumed as the backward pass goes (backend/releaseConsumed.ts).
      const { value, grads } = releasingConsumed(() =>
        tf.variableGrads(() => {
          const logits = model.logits(src, tgtIn, ctx); // [B, T, V]
          const r = smoothedLossFromLogits(logits, tgtOut, c.pad_id, opts.labelSmoothing, tokens, true);
          nllValue = r.nll; // kept: survives the gradient scope; disposed below
          return r.loss;
        }, vars),
      );
      return [value, nllValue!, ...vars.map((v) => grads[v.name]!)];
    });
    const before = sums;
    sums = before ? tf.tidy(() => before.map((s, i) => tf.add(s, one[i]!))) : one;
    if (before) tf.dispose([...before, ...one]);
  }
  const [loss, nll, ...summed] = sums!;
  return tf.tidy(() => {
    const grads = vars.map((v, i) => {
      const mask = opts.gradMask?.get(v);
      return mask ? tf.mul(summed[i]!, mask) : tf.keep(summed[i]!);
    });
    // Laid end to end once, for the norm and the update, where the optimizer's layout does so; the
    // per-parameter gradients then go, and tfjs's pool gives their buffers to the new parameters.
    const laid = optimizer.lay?.(vars, grads);
    // Global L2 norm (one kernel for every gradient where the backend has it: backend/trainingOps.ts).
    const gradNorm = tf.sqrt(sumOfSquares(laid ?? grads)) as tf.Scalar;
    tf.dispose([...summed.filter((g) => !grads.includes(g)), ...(laid ? grads : [])]);
    const kept = laid ? { grads: [], laid } : { grads };
    return { loss: loss as tf.Scalar, nll: nll as tf.Scalar, gradNorm, ...kept };
  });
}

/**
 * The step, watched on the GPU (backend/webgpu/errors.ts): an error Dawn reports during it, or a
 * lost device, fails it with a GpuError and leaves the parameters, Adam's moments and t as they were,
 * bit for bit. The forward and backward passes are checked before the update is encoded; the update
 * replaces tensors rather than writing them, so until its own check the old ones are kept to put back.
 */
export async function trainStep(
  model: Transformer,
  optimizer: Optimizer,
  batch: Batch,
  opts: StepOptions,
): Promise<StepResult> {
  const vars = namedVariables(model.params).map(([, v]) => v);
  const watch = watchGpu(opts.work ?? 'a training step');
  const kept = watch.active ? optimizer.keep(vars) : undefined;
  try {
    const r = await unwatchedStep(model, optimizer, batch, opts, vars, watch);
    await watch.close('update');
    trimGpuPool(); // buffers of shapes this step did not ask for (backend/webgpu/bufferPool.ts)
    return r;
  } catch (err) {
    try {
      await watch.close(); // a GpuError from here explains err
    } finally {
      kept?.restore();
    }
    throw err;
  } finally {
    kept?.dispose();
  }
}

async function unwatchedStep(
  model: Transformer,
  optimizer: Optimizer,
  batch: Batch,
  opts: StepOptions,
  vars: tf.Variable[],
  watch: GpuWatch,
): Promise<StepResult> {
  const tokens = countTokens(batch.tgtOut, model.config.pad_id);
  // 1. Forward pass, loss, gradients and their global norm (kept: the update waits for the check).
  const { loss, nll, gradNorm, grads: gradList, laid } = gradients(model, optimizer, vars, batch, opts, tokens);
  // [5, heads]: each head's whole gradient norm, then its W^Q, W^K, W^V and W^O parts (one read).
  const headNormTensor = (): tf.Tensor => {
    const gradOf = laid ? (param: tf.Tensor) => optimizer.gradientIn!(laid, param) : perParameter(vars, gradList);
    return tf.tidy(() => {
      const matrices = headMatrixNorms(model, gradOf); // [4, heads]
      return tf.concat([tf.expandDims(headGradNorms(matrices), 0), matrices]);
    });
  };
  const perHeadNorms = async (
    t = headNormTensor(),
  ): Promise<Pick<StepResult, 'headGradNorms' | 'headMatrixGradNorms'>> => {
    try {
      const all = (await t.data()) as Float32Array;
      const heads = t.shape[1]!;
      return { headGradNorms: all.subarray(0, heads), headMatrixGradNorms: all.subarray(heads) };
    } finally {
      t.dispose();
    }
  };
  // Clipping and Adam; with `ok`, gated on the device (adam.ts).
  const update = (ok?: tf.Tensor): void =>
    tf.tidy(() => {
      const grads: tf.NamedTensorMap = laid ? {} : Object.fromEntries(vars.map((v, i) => [v.name, gradList[i]!]));
      const clip = opts.clipNorm && opts.clipNorm > 0;
      const scale = clip ? tf.minimum(1, tf.div(opts.clipNorm!, tf.add(gradNorm, 1e-6))) : undefined;
      optimizer.apply(vars, grads, opts.lr, ok, scale, laid);
    });
  const result = (l: ArrayLike<number>, n: ArrayLike<number>, g: ArrayLike<number>) => ({
    loss: l[0]!,
    nll: n[0]!,
    gradNorm: g[0]!,
    tokens,
    applied: Number.isFinite(l[0]) && Number.isFinite(g[0]),
  });
  // 2. The update, only when loss and gradients are finite: a NaN step would poison every weight.
  let asked: tf.Tensor | undefined; // per-head norms of a telemetry step, read with the scalars
  try {
    if (computesAsynchronously()) {
      // Dawn's errors so far (an allocation that failed, a dispatch refused) fail the step before
      // its update is encoded; the GPU keeps working meanwhile (errors.ts).
      await watch.check('forward and backward passes');
      // A read here would make the CPU wait for the forward and backward passes and leave the GPU
      // idle while Adam's kernels are encoded. So the finite check runs on the device, the update
      // is dispatched gated on it, and only then are the scalars read.
      const ok = tf.tidy(() => tf.logicalAnd(tf.isFinite(loss), tf.isFinite(gradNorm)));
      const t = optimizer.step;
      try {
        update(ok);
      } finally {
        ok.dispose();
      }
      if (opts.headGradNorms) asked = headNormTensor();
      const [l, n, g] = await Promise.all([loss.data(), nll.data(), gradNorm.data()]);
      const r = result(l, n, g);
      if (!r.applied) optimizer.step = t; // the gated update left everything as it was: so does t
      // Per-head gradient norms on telemetry steps; on a non-finite step they say which head's gradient broke.
      return { ...r, ...(asked || !r.applied ? await perHeadNorms(asked) : {}) };
    }
    const [l, n, g] = await Promise.all([loss.data(), nll.data(), gradNorm.data()]);
    const r = result(l, n, g);
    // Per-head gradient norms on telemetry steps; on a non-finite step they say which head's gradient broke.
    const headNorms = opts.headGradNorms || !r.applied ? await perHeadNorms() : {};
    if (r.applied) update();
    return { ...r, ...headNorms };
  } finally {
    tf.dispose([loss, nll, gradNorm, ...gradList, ...(laid ?? []), ...(asked ? [asked] : [])]);
  }
}
